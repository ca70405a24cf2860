/**
 * infra/ meets Knative as it really is: Knative's CRDs (same knative.dev/eventing module as the
 * adapter, matching knative.dev/serving) on the real apiserver, Knative's own defaulting + validation
 * (knative-check, in the webhooks' context built from the ConfigMaps a default install ships), and
 * Knative's own Trigger filter evaluation on every recorded event.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { api, installKnativeCrds, jsonlFile, knativeRoute, knativeValidate, notKept, render, wanted, wantedKinds } from '../control-plane/knative.js';
import { streamFiles } from '../support/streams.js';

const cp = inject('controlPlane');
const overlays = ['dry-run', 'enforce'];
const BROKER = 'olm-medic';
const streamDir = new URL('../fixtures/streams/', import.meta.url).pathname;

beforeAll(async () => {
  const crds = await installKnativeCrds(cp.adminKubeconfig);
  expect(crds).toEqual(expect.arrayContaining(['triggers.eventing.knative.dev', 'brokers.eventing.knative.dev', 'apiserversources.sources.knative.dev', 'pingsources.sources.knative.dev', 'jobsinks.sinks.knative.dev', 'services.serving.knative.dev']));
  // Namespaced objects need their namespace to exist, even for a dry-run.
  const a = api(cp.adminKubeconfig);
  const r = await a.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm-medic' } });
  expect([201, 409]).toContain(r.status);
}, 300_000);

describe.each(overlays)('infra/overlays/%s on Knative', (overlay) => {
  const objects = render(overlay);

  it('every object is accepted by a server-side dry-run apply and nothing is pruned', async () => {
    const a = api(cp.adminKubeconfig);
    const problems: string[] = [];
    for (const o of objects) {
      const r = await a.applyDryRun(o);
      if (r.status !== 200 && r.status !== 201) problems.push(`${o.kind}/${o.metadata.name}: ${r.status} ${String(r.body.message)}`);
      else for (const p of notKept(o, r.body)) problems.push(`${o.kind}/${o.metadata.name}: ${p} not kept`);
    }
    expect(problems).toEqual([]);
    expect(objects.length).toBeGreaterThan(15);
  });

  it("passes Knative's own SetDefaults + Validate with no error and no warning", () => {
    const r = knativeValidate(objects, cp.adminKubeconfig);
    const checked = r.results.filter((x) => x.checked);
    expect(new Set(checked.map((x) => x.kind))).toEqual(new Set(['Trigger', 'Broker', 'ApiServerSource', 'PingSource', 'Service', 'JobSink']));
    expect(checked).toHaveLength(objects.filter((o) => /knative\.dev\//.test(o.apiVersion)).length);
    expect(r.results.filter((x) => x.errors.length || x.warnings.length)).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('the checks can fail', () => {
  const objects = render('enforce');
  const trigger = objects.find((o) => o.kind === 'Trigger')!;
  const copy = (o: KubeObject, edit: (x: Record<string, any>) => void): KubeObject => {
    const c = structuredClone(o) as Record<string, any>;
    edit(c);
    return c as KubeObject;
  };

  it('an unknown filter dialect, an invalid CESQL expression and a removed security context are reported by Knative', () => {
    const broken = [
      copy(trigger, (t) => (t.spec.filters = [{ regex: { type: 'dev\\.knative\\..*' } }])),
      copy(trigger, (t) => (t.spec.filters = [{ cesql: "kind = 'Job' AND (" }])),
      copy(objects.find((o) => o.kind === 'Service')!, (s) => delete s.spec.template.spec.containers[0].securityContext),
    ];
    const r = knativeValidate(broken);
    expect(r.status).toBe(1);
    expect(r.results[0]!.errors.join()).toMatch(/unknown field "regex"/);
    expect(r.results[1]!.errors.join()).toMatch(/cesql/i);
    expect(r.results[2]!.warnings.join()).toMatch(/securityContext\.runAsNonRoot/);
  });

  it("the dry-run apply detects a field Knative's CRD schema prunes (an unknown filter dialect)", async () => {
    const a = api(cp.adminKubeconfig);
    const broken = copy(trigger, (t) => (t.spec.filters = [{ regex: { type: 'x' } }, { exact: { kind: 'Job' } }]));
    const r = await a.applyDryRun(broken);
    expect([200, 201]).toContain(r.status);
    expect(notKept(broken, r.body)).toEqual(['spec.filters[0].regex']);
  });
});

// ---- routing: Knative's own Trigger filters on every recorded event ----

const PING = 'dev.knative.sources.ping';
const RESOURCE = 'dev.knative.apiserver.resource.';
const UNPACK = 'db9d6464a8388291b487cfe4b9e6eeb097ae7568ac05ab044e8255d5f708093';
const RETRY = `${UNPACK.slice(0, 58)}x7k2p`;

function event(type: string, apiversion: string, kind: string, name = 'x', namespace = 'ns'): Record<string, unknown> {
  return { specversion: '1.0', id: `${kind}-${type}-${apiversion}`, source: 'https://127.0.0.1:6443', type, subject: `/apis/${apiversion}/namespaces/${namespace}/x/${name}`, datacontenttype: 'application/json', kind, name, namespace, apiversion, data: { apiVersion: apiversion, kind, metadata: { name, namespace } } };
}

/** Events no function declares: kinds nobody handles, same Kind in another group, Reference mode, replies. */
const unwanted = [
  event(`${RESOURCE}add`, 'v1', 'ConfigMap'),
  event(`${RESOURCE}update`, 'apps/v1', 'Deployment'),
  event(`${RESOURCE}update`, 'messaging.knative.dev/v1', 'Subscription'), // Knative's own Subscription kind
  event(`${RESOURCE}add`, 'batch/v1beta1', 'Job', UNPACK),
  event(`${RESOURCE}update`, 'batch/v1', 'Job', 'nightly-backup-29384756'), // a CronJob's Job
  event(`${RESOURCE}update`, 'batch/v1', 'Job', 'x'.repeat(62)),
  event(`${RESOURCE}delete`, 'operators.coreos.com/v1alpha1', 'CatalogSource'),
  event(`${RESOURCE}update`, 'operators.coreos.com/v1', 'OperatorGroup'),
  event('dev.knative.apiserver.ref.add', 'v1', 'Pod'), // Reference mode: the functions need the object
  event('dev.knative.apiserver.ref.update', 'batch/v1', 'Job'),
  { specversion: '1.0', id: 'reply', source: 'olm-medic', type: 'function.response', data: {} },
  { specversion: '1.0', id: 'other', source: 'elsewhere', type: 'com.example.job.update', kind: 'Job', apiversion: 'batch/v1', data: {} },
];
/** Every verb of every declared kind, and a ping (the sweep), so every Trigger is exercised. */
const declared = [
  ...[...wantedKinds].flatMap((k) => {
    const i = k.lastIndexOf('/');
    return ['add', 'update', 'delete'].flatMap((v) => (k === 'batch/v1/Job' ? [UNPACK, RETRY] : ['x']).map((n) => event(`${RESOURCE}${v}`, k.slice(0, i), k.slice(i + 1), n)));
  }),
  { specversion: '1.0', id: 'ping', source: '/apis/v1/namespaces/olm-medic/pingsources/olm-medic-sweep', type: PING, datacontenttype: 'application/json', data: {} },
];

describe.each(overlays)('routing of infra/overlays/%s (Knative pkg/eventfilter/subscriptionsapi)', (overlay) => {
  const triggers = render(overlay).filter((o) => o.kind === 'Trigger');

  it('every recorded event is delivered by exactly one Trigger', () => {
    const files = streamFiles().map((f) => streamDir + f);
    const routed = knativeRoute(triggers, BROKER, files);
    const recorded = files.reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#')).length, 0);
    expect(routed).toHaveLength(recorded);
    for (const e of routed) {
      expect(wanted(e), `${e.file}:${e.line} is an event the functions want`).toBe(true);
      expect(e.delivered, `${e.file}:${e.line} ${e.type} ${e.kind}`).toHaveLength(1);
    }
  });

  it('each declared kind (every verb) and the sweep by exactly one Trigger; kinds no function declares by none', () => {
    const routed = knativeRoute(triggers, BROKER, [jsonlFile('declared.jsonl', declared), jsonlFile('unwanted.jsonl', unwanted)]);
    expect(routed).toHaveLength(declared.length + unwanted.length);
    for (const e of routed) expect(e.delivered, `${e.type} ${e.apiversion}/${e.kind}`).toHaveLength(wanted(e) ? 1 : 0);
    // every Trigger is used
    expect(new Set(routed.flatMap((e) => e.delivered))).toEqual(new Set(triggers.map((t) => t.metadata.name)));
  });

  it('a Trigger without filters would deliver everything (the routing check can fail)', () => {
    const loose = structuredClone(triggers);
    delete (loose[0]!.spec as Record<string, unknown>).filters;
    const routed = knativeRoute(loose, BROKER, [jsonlFile('unwanted.jsonl', unwanted)]);
    expect(routed.every((e) => e.delivered.includes(loose[0]!.metadata.name))).toBe(true);
  });
});
