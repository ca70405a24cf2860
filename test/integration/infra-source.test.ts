/**
 * The shipped ApiServerSource, run by Knative's real receive adapter as the shipped source
 * ServiceAccount: copied CSVs (label olm.copiedFrom) produce no event at all, originals do; every
 * event it sends is routed by Knative's own Trigger filters to exactly one Trigger.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { startAdapter, type RunningAdapter } from '../support/adapter.js';
import { testCluster } from '../support/cluster.js';
import { jsonlFile, knativeRoute, render, wanted } from '../control-plane/knative.js';

const cp = inject('controlPlane');
const c = testCluster();
const objects = render('enforce');
const source = objects.find((o) => o.kind === 'ApiServerSource')!;

type Captured = Record<string, unknown> & { type: string; name?: string; namespace?: string; kind?: string };
const received: Captured[] = [];
let sink: Server;
let adapter: RunningAdapter;

/** A CloudEvents HTTP sink (binary or structured mode) that keeps every event as structured JSON. */
function startSink(): Promise<string> {
  sink = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (String(req.headers['content-type']).startsWith('application/cloudevents+json')) received.push(JSON.parse(body) as Captured);
      else {
        const ev: Record<string, unknown> = { datacontenttype: req.headers['content-type'], data: body ? JSON.parse(body) : undefined };
        for (const [k, v] of Object.entries(req.headers)) if (k.startsWith('ce-')) ev[k.slice(3)] = v;
        received.push(ev as Captured);
      }
      res.writeHead(202).end();
    });
  });
  return new Promise((resolve) => sink.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(sink.address() as { port: number }).port}/`)));
}

const csv = (name: string, namespace: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name, namespace, ...(labels ? { labels } : {}) },
  spec: { displayName: name, install: { strategy: 'deployment' } },
} as KubeObject);

const until = async (what: string, ok: () => boolean, ms = 60_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

beforeAll(async () => {
  const url = await startSink();
  adapter = startAdapter(cp.binaries.adapter, { kubeconfig: cp.sourceKubeconfig, sink: url, source });
}, 120_000);

afterAll(async () => {
  await adapter?.stop();
  sink?.close();
});

describe('the shipped ApiServerSource on the real adapter', () => {
  it('sends no event for a copied CSV and sends one for an original', async () => {
    const ns = await c.namespace('src');
    const of = (name: string): Captured[] => received.filter((e) => e.namespace === ns && e.name === name);
    // The adapter emits nothing until its CSV watch is up: create originals until one is seen.
    for (let i = 0; of(`warmup-${i - 1}`).length === 0; i++) {
      if (i > 100) throw new Error(`the adapter sent no CSV event:\n${adapter.output().slice(-3000)}`);
      await c.create(csv(`warmup-${i}`, ns));
      await new Promise((r) => setTimeout(r, 500));
    }
    // A copy (created, then changed), then an original (created, then changed). One watch per kind,
    // in order: once the original's update has arrived, anything about the copy would have too.
    const copy = await c.create(csv('copied', ns, { 'olm.copiedFrom': 'operators' }));
    await c.admin.mergePatch({ apiVersion: copy.apiVersion, kind: copy.kind, namespace: ns, name: 'copied' }, { metadata: { annotations: { touched: 'yes' } } }, { dryRun: false });
    await c.create(csv('original', ns));
    await c.admin.mergePatch({ apiVersion: copy.apiVersion, kind: copy.kind, namespace: ns, name: 'original' }, { metadata: { annotations: { touched: 'yes' } } }, { dryRun: false });
    await until('the original CSV add and update events', () => of('original').length >= 2);
    expect(of('original').map((e) => e.type)).toEqual(['dev.knative.apiserver.resource.add', 'dev.knative.apiserver.resource.update']);
    expect(of('copied')).toEqual([]);
  });

  it('the same adapter without the selector does send the copy (the check can fail)', async () => {
    const ns = await c.namespace('src');
    const open = structuredClone(source);
    for (const r of (open.spec as { resources: { kind: string; selector?: unknown }[] }).resources) if (r.kind === 'ClusterServiceVersion') delete r.selector;
    const got: Captured[] = [];
    const before = received.length;
    const unfiltered = startAdapter(cp.binaries.adapter, { kubeconfig: cp.sourceKubeconfig, sink: (await startSinkFor(got)), source: open });
    try {
      for (let i = 0; !got.some((e) => e.namespace === ns && e.name === `copied-${i - 1}`); i++) {
        if (i > 100) throw new Error(`no event for a copied CSV without the selector:\n${unfiltered.output().slice(-3000)}`);
        await c.create(csv(`copied-${i}`, ns, { 'olm.copiedFrom': 'operators' }));
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await unfiltered.stop();
    }
    // and the shipped source (still running) sent none of them
    expect(received.slice(before).filter((e) => e.namespace === ns)).toEqual([]);
  });

  it("every event the adapter sent that the functions want is delivered by exactly one shipped Trigger, the rest by none (Knative's filters)", () => {
    const mine = received.filter((e) => e.kind === 'ClusterServiceVersion');
    expect(mine.length).toBeGreaterThan(2);
    const routed = knativeRoute(objects.filter((o) => o.kind === 'Trigger'), 'olm-medic', [jsonlFile('captured.jsonl', received)]);
    expect(routed).toHaveLength(received.length);
    // The Job Trigger filters by name length only (CESQL); a 63-character look-alike (another test
    // file's, e.g. safety's hash + "aeiou") passes it, and job-conflict's identity check refuses it.
    const lookAlike = (e: (typeof routed)[number]): boolean => e.kind === 'Job' && e.apiversion === 'batch/v1' && e.type.startsWith('dev.knative.apiserver.resource.') && e.name?.length === 63;
    for (const e of routed) expect(e.delivered, `${e.type} ${e.apiversion}/${e.kind} ${e.name}`).toHaveLength(wanted(e) || lookAlike(e) ? 1 : 0);
  });
});

const extraSinks: Server[] = [];
afterAll(() => extraSinks.forEach((s) => s.close()));
function startSinkFor(into: Captured[]): Promise<string> {
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const ev: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(req.headers)) if (k.startsWith('ce-')) ev[k.slice(3)] = v;
      into.push(ev as Captured);
      res.writeHead(202).end();
    });
  });
  extraSinks.push(s);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as { port: number }).port}/`)));
}
