/**
 * event-volume: what a large cluster's churn sends through the Broker, before/after narrowing the
 * source. Knative's real ApiServerSource adapter runs three times side by side on one control plane,
 * on the same churn:
 *   before  the source as it was (every CSV, every Node, every Job; the Triggers as they were)
 *   after   the shipped source (infra/: copied CSVs excluded by the label selector, no Nodes)
 *   no-job  what-if: also without Job (job-conflict would find unpack Jobs by its sweep only)
 * Churn (full): 2,000 Nodes with a status report each, 500 namespaces x 20 AllNamespaces operators'
 * copied CSVs (created, then updated once, as OLM syncs copies), 20 original CSVs, 2,000 Jobs created
 * and updated 4 times (10,000 Job events; 20 of the Jobs are named like OLM's unpack Jobs). Smoke: 1/20
 * of it. Counts: events each adapter emitted, and how many of them the shipped Triggers deliver to the
 * function (Knative's own filters, knative-check; the Job Trigger passes only unpack-Job names).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Benchmark, BenchContext, BenchResult, Target } from './types.js';
import { startStack, sleep, Teardown } from './lib/stack.js';
import { startAdapter } from '../test/support/adapter.js';
import { jsonlFile, knativeRoute, render } from '../test/control-plane/knative.js';
import type { Kube, KubeObject } from '../shared/kube/types.js';

type Attrs = Record<string, string>;

/** A sink that keeps each CloudEvent's attributes (binary mode: ce-* headers), not its data. */
function sink(td: Teardown): Promise<{ url: string; events: Attrs[] }> {
  const events: Attrs[] = [];
  const srv: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const a: Attrs = {};
      for (const [k, v] of Object.entries(req.headers)) if (k.startsWith('ce-') && typeof v === 'string') a[k.slice(3)] = v;
      events.push(a);
      res.writeHead(202).end();
    });
  });
  td.add('sink', () => new Promise((r) => srv.close(() => r())));
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/`, events })));
}

async function pool<T>(items: T[], n: number, f: (x: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await f(items[i++]!);
  }));
}

const CSV = 'operators.coreos.com/v1alpha1';
const csv = (name: string, namespace: string, labels?: Record<string, string>): KubeObject =>
  ({ apiVersion: CSV, kind: 'ClusterServiceVersion', metadata: { name, namespace, ...(labels ? { labels } : {}) }, spec: { displayName: name, install: { strategy: 'deployment' } } }) as KubeObject;
const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }) as KubeObject;
const job = (name: string, namespace: string): KubeObject =>
  ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace }, spec: { template: { spec: { containers: [{ name: 'c', image: 'registry.invalid/x' }], restartPolicy: 'Never' } } } }) as KubeObject;

async function run(ctx: BenchContext): Promise<BenchResult> {
  const scale = ctx.smoke ? 20 : 1;
  const nodes = 2000 / scale, namespaces = 500 / scale, operators = 20, jobs = 2000 / scale, jobUpdates = 4, unpackJobs = 20;
  const td = new Teardown();
  try {
    const stack = await startStack(td, ctx.log, { controllerManager: false });
    const kube: Kube = stack.admin;
    const objects = render('enforce');
    const shipped = objects.find((o) => o.kind === 'ApiServerSource')!;
    const variant = (edit: (rs: { kind: string; selector?: unknown }[]) => { kind: string; selector?: unknown }[]): KubeObject => {
      const s = structuredClone(shipped);
      const spec = s.spec as { resources: { kind: string; selector?: unknown }[] };
      spec.resources = edit(spec.resources);
      return s;
    };
    const sources: Record<string, KubeObject> = {
      // as it was: every CSV, and every Node
      before: variant((rs) => [...rs.map((r) => (r.kind === 'ClusterServiceVersion' ? { ...r, selector: undefined } : r)), { apiVersion: 'v1', kind: 'Node' } as { kind: string }]),
      after: shipped,
      'no-job': variant((rs) => rs.filter((r) => r.kind !== 'Job')),
    };
    // "before" watched Nodes: its identity could too (the shipped source's role no longer can).
    await kube.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'bench-source-nodes' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }] } as unknown as KubeObject, { dryRun: false });
    await kube.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'bench-source-nodes' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-source-nodes' }, subjects: [{ kind: 'ServiceAccount', name: 'olm-medic-source', namespace: 'olm-medic' }] } as unknown as KubeObject, { dryRun: false });
    const sinks: Record<string, { url: string; events: Attrs[] }> = {};
    for (const [name, source] of Object.entries(sources)) {
      sinks[name] = await sink(td);
      const a = startAdapter(stack.cp.binaries.adapter, { kubeconfig: stack.sourceKubeconfig, sink: sinks[name]!.url, source });
      td.add(`adapter ${name}`, () => a.stop());
    }
    // Each adapter emits nothing before its watches are up: marker objects until every sink has seen each kind.
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-mark' } } as KubeObject, { dryRun: false });
    const seen = (s: Attrs[], kind: string, name: string): boolean => s.some((e) => e.kind === kind && e.name === name);
    const mark = async (tag: string): Promise<void> => {
      for (let i = 0; ; i++) {
        const names = { csv: `${tag}-${i}`, node: `bench-mark-${tag}-${i}`, job: `${tag}-${i}` };
        await kube.create(csv(names.csv, 'bench-mark'), { dryRun: false });
        await kube.create(node(names.node), { dryRun: false });
        await kube.create(job(names.job, 'bench-mark'), { dryRun: false });
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline) {
          const ok = Object.entries(sinks).every(([n, s]) => seen(s.events, 'ClusterServiceVersion', names.csv) && (n === 'no-job' || seen(s.events, 'Job', names.job)) && (n !== 'before' || seen(s.events, 'Node', names.node)));
          if (ok) return;
          await sleep(200);
        }
        if (i > 20) throw new Error('adapters never caught up with the markers');
      }
    };
    await mark('start');
    const start = Object.fromEntries(Object.entries(sinks).map(([n, s]) => [n, s.events.length]));

    const t0 = performance.now();
    const nsNames = Array.from({ length: namespaces }, (_, i) => `tenant-${i}`);
    await pool(['operators', ...nsNames], 16, (n) => kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } } as KubeObject, { dryRun: false }));
    const ops = Array.from({ length: operators }, (_, i) => `operator-${i}.v1.0.0`);
    await pool(ops, 16, (o) => kube.create(csv(o, 'operators'), { dryRun: false }));
    const copies = nsNames.flatMap((n) => ops.map((o) => ({ n, o })));
    await pool(copies, 32, ({ n, o }) => kube.create(csv(o, n, { 'olm.copiedFrom': 'operators' }), { dryRun: false }));
    ctx.log(`created ${copies.length} copied CSVs`);
    const nodeNames = Array.from({ length: nodes }, (_, i) => `worker-${i}`);
    await pool(nodeNames, 32, (n) => kube.create(node(n), { dryRun: false }));
    // 20 of them are bundle unpack Jobs (OLM names them by a 63-character hash), the rest other workloads' Jobs
    const unpack = (i: number): string => createHash('sha256').update(String(i)).digest('hex').slice(0, 63);
    const jobNames = Array.from({ length: jobs }, (_, i) => ({ n: i < unpackJobs ? unpack(i) : `job-${i}`, ns: nsNames[i % nsNames.length]! }));
    await pool(jobNames, 32, ({ n, ns }) => kube.create(job(n, ns), { dryRun: false }));
    ctx.log(`created ${nodes} Nodes and ${jobs} Jobs`);
    // one round of updates: each original CSV's status changes and OLM syncs it to every copy; each Node reports status; each Job changes 4 times
    const touch = (o: KubeObject, v: string): Promise<unknown> =>
      kube.mergePatch({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) }, { metadata: { annotations: { 'bench/round': v } } }, { dryRun: false });
    await pool(ops, 16, (o) => touch(csv(o, 'operators'), '1'));
    await pool(copies, 32, ({ n, o }) => touch(csv(o, n), '1'));
    await pool(nodeNames, 32, (n) => touch(node(n), '1'));
    for (let u = 1; u <= jobUpdates; u++) await pool(jobNames, 32, ({ n, ns }) => touch(job(n, ns), String(u)));
    const churnSeconds = (performance.now() - t0) / 1000;
    ctx.log(`churn written in ${churnSeconds.toFixed(1)} s; waiting for the adapters to drain`);
    await mark('end');

    const metrics: Record<string, number | string> = { nodes, namespaces, copiedCsvs: copies.length, jobs, unpackJobs, jobEvents: jobs * (1 + jobUpdates), churnSeconds: Math.round(churnSeconds) };
    const triggers = objects.filter((o) => o.kind === 'Trigger');
    // before: the Triggers as they were too (the Job Trigger without the unpack-name CESQL filter, and a Node Trigger)
    const triggersBefore = structuredClone(triggers).map((t) => {
      const spec = t.spec as { filters: Record<string, unknown>[] };
      spec.filters = spec.filters.filter((f) => !('cesql' in f));
      return t;
    });
    const nodeTrigger = structuredClone(triggers.find((t) => t.metadata.name === 'olm-medic-pods')!);
    nodeTrigger.metadata.name = 'olm-medic-nodes';
    (nodeTrigger.spec as { filters: Record<string, unknown>[] }).filters = [{ prefix: { type: 'dev.knative.apiserver.resource.' } }, { exact: { kind: 'Node', apiversion: 'v1' } }];
    triggersBefore.push(nodeTrigger);
    const delivered: Record<string, number> = {};
    for (const [name, s] of Object.entries(sinks)) {
      const window = s.events.slice(start[name], s.events.length).filter((e) => !String(e.name ?? '').startsWith('end-') && !String(e.name ?? '').startsWith('bench-mark-end-'));
      const byKind: Record<string, number> = {};
      for (const e of window) byKind[e.kind ?? e.type!] = (byKind[e.kind ?? e.type!] ?? 0) + 1;
      const routed = knativeRoute(name === 'before' ? triggersBefore : triggers, 'olm-medic', [jsonlFile(`${name}.jsonl`, window.map((e) => ({ ...e, specversion: e.specversion ?? '1.0' })))]);
      delivered[name] = routed.reduce((n, r) => n + r.delivered.length, 0);
      const deliveredByKind: Record<string, number> = {};
      for (const r of routed) if (r.delivered.length) deliveredByKind[r.kind ?? r.type] = (deliveredByKind[r.kind ?? r.type] ?? 0) + r.delivered.length;
      for (const [k, v] of Object.entries(deliveredByKind).sort()) metrics[`${name}.delivered.${k}`] = v;
      metrics[`${name}.emitted`] = window.length;
      metrics[`${name}.delivered`] = delivered[name]!;
      for (const [k, v] of Object.entries(byKind).sort()) metrics[`${name}.emitted.${k}`] = v;
    }
    const ratio = (a: string, b: string): number => Math.round((delivered[a]! / Math.max(1, delivered[b]!)) * 100) / 100;
    const targets: Target[] = [
      { name: 'delivered before / after (copied CSVs excluded and Nodes not watched at the source, Job Trigger by unpack name)', value: ratio('before', 'after'), target: '>= 10', pass: ratio('before', 'after') >= 10 },
      { name: 'delivered before / no-job (what-if: Jobs by sweep only)', value: ratio('before', 'no-job'), target: '(reported)', pass: true },
    ];
    return {
      name: 'event-volume',
      metrics,
      targets,
      notes: [
        'Node and CSV "status" updates are metadata patches here: the adapter sends the same update event either way.',
        'Jobs are watched cluster-wide on purpose (unpack Jobs may carry no labels), so emitted Job events are the same in every variant; the Job Trigger delivers only unpack-Job names (CESQL LENGTH(name) = 63).',
        '"before" is routed with the Triggers as they were (no unpack-name filter on the Job Trigger); the other variants with the shipped Triggers.',
      ],
    };
  } finally {
    await td.run(ctx.log);
  }
}

export const bench: Benchmark = {
  name: 'event-volume',
  description: 'events the real adapter emits and the Triggers deliver for a large cluster\'s churn: before vs after (copied CSVs excluded, Nodes not watched, Jobs by unpack name), and a no-Job what-if',
  run,
};
