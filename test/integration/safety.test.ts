/**
 * Safety regressions (issue 8) on the real control plane, as the shipped ServiceAccount: every
 * defect the independent review found, and the principles behind them.
 *   - an event is a hint: its values are validated before any URL or selector (400 naming the field);
 *   - "gone" needs a NotFound Status naming the object;
 *   - our CSV finalizer is always released; dry-run never adds it;
 *   - nothing blocks the fix for others (optional actions, oversized plans);
 *   - the Operator's name is the truncated key: package/namespaces come from labelled objects;
 *   - OLM-version evidence, suspended jobs, tolerate-forever pods, the apiserver's clock.
 * Each test fails on the code before the fix (see the commit that added it).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CloudEvent } from 'cloudevents';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { catalogReschedule } from '../../functions/catalog-reschedule/index.js';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { jobConflict } from '../../functions/job-conflict/index.js';
import type { AnyFunction } from '../../shared/core/types.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import type { Runtime } from '../../shared/wiring.js';
import * as olm from '../fixtures/olm-objects.js';
import { eventually, testCluster } from '../support/cluster.js';
import { apiServerEvent, post } from '../support/events.js';
import { startServer, type RunningServer } from '../support/server.js';

const c = testCluster();
const OURS = 'olm-medic.io/csv-cleanup';
const OLMS = olm.CSV_CLEANUP_FINALIZER;
const HOUR = 3_600_000;
const hex = (n = 3): string => randomBytes(n).toString('hex');
const asObj = (o: olm.Obj): KubeObject => o as KubeObject;
const refOf = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
const live = (o: KubeObject): Promise<KubeObject | undefined> => c.get(refOf(o));

const runtimes: Runtime[] = [];
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.engine.close();
});
function runtime(fns: AnyFunction[], env: Record<string, string> = {}, o: { now?: () => Date; localNow?: () => number } = {}): Runtime {
  const rt = c.runtime(fns, env, o);
  runtimes.push(rt);
  return rt;
}
const send = (rt: Runtime, verb: 'add' | 'update' | 'delete', obj: KubeObject): Promise<Outcome[]> => rt.engine.handle(decodeEvent(apiServerEvent(verb, obj)));
const sweep = (rt: Runtime, namespace: string, fn: string): Promise<Outcome[]> =>
  rt.engine.handle({ kind: 'sweep', namespace, functions: [fn], meta: { id: `sweep-${hex()}`, source: 'test', type: 'io.olm-medic.sweep' } });

const WRITES = ['delete', 'deletecollection', 'patch', 'update', 'create'];
/** olm-medic's writes (Events excluded) to objects in `ns` or to the named cluster-scoped objects. */
function writes(ns: string | undefined, names: string[] = [], user?: string): string[] {
  return c
    .audit(user)
    .filter((e) => WRITES.includes(e.verb) && e.objectRef?.resource !== 'events')
    .filter((e) => (ns !== undefined && e.objectRef?.namespace === ns) || (!e.objectRef?.namespace && names.includes(e.objectRef?.name ?? '')))
    .map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`);
}

async function syncedCsv(ns: string, name: string, o: Partial<olm.CsvOptions> = {}): Promise<KubeObject> {
  const built = olm.csv({ namespace: ns, name, ...o });
  const created = await c.create(asObj(built));
  return c.setStatus(created, built.status);
}

async function ownedClusterObjects(ns: string, csvName: string, n = 1): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (let i = 0; i < n; i++) out.push(await c.create(asObj(olm.csvClusterRole({ csvName, csvNamespace: ns, name: `${csvName}-${ns}-cr${i}` } as never))));
  return out;
}

// ---------------------------------------------------------------------------------------------
describe('an event is a hint: selector and path injection are refused before any request (defect 1)', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startServer({ KUBECONFIG: c.kubeconfig.server });
  });
  afterAll(async () => srv?.stop());

  it.each([
    ['a selector suffix', (n: string) => `${n},olm.owner.kind=ClusterServiceVersion`],
    ['a trailing space', (n: string) => `${n} `],
    ['a path segment', (n: string) => `../${n}`],
  ])('a CSV delete event whose name carries %s: 400 naming the field in every mode; the live CSV\'s objects are untouched', async (_what, mangle) => {
    const ns = await c.namespace('inj');
    const csv = await syncedCsv(ns, 'victim.v1.0.0', { finalizers: [OURS] });
    const owned = [
      ...(await ownedClusterObjects(ns, 'victim.v1.0.0', 2)),
      await c.create(asObj(olm.csvWebhook('Validating', { csvName: 'victim.v1.0.0', csvNamespace: ns, name: `v-${ns}.example.com` } as never))),
    ];
    const bad = mangle(csv.metadata.name);
    const forged = { ...csv, metadata: { ...csv.metadata, name: bad, deletionTimestamp: new Date().toISOString() } };
    const before = c.audit('olm-medic-server').length;
    const resource = apiServerEvent('delete', forged);
    const reference = new CloudEvent<unknown>({
      specversion: '1.0', id: hex(8), source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.ref.delete', datacontenttype: 'application/json',
      subject: `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${bad}`,
      data: { apiVersion: csv.apiVersion, kind: csv.kind, name: bad, namespace: ns }, kind: csv.kind, name: bad, namespace: ns, apiversion: csv.apiVersion,
    });
    for (const [ev, mode] of [[resource, 'binary'], [resource, 'structured'], [reference, 'binary'], [reference, 'structured']] as const) {
      const res = await post(srv.url, ev, mode);
      expect(res.status, `${ev.type} ${mode}`).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/name .* must be a DNS-1123 subdomain/);
    }
    // (other suites share this identity: only requests about this test's objects count)
    const mine = (e: { objectRef?: { namespace?: string; name?: string }; requestURI?: string }): boolean =>
      e.objectRef?.namespace === ns || (e.requestURI ?? '').includes('victim') || owned.some((o) => e.objectRef?.name === o.metadata.name);
    expect(c.audit('olm-medic-server').slice(before).filter(mine)).toEqual([]);
    for (const o of owned) expect((await live(o))?.metadata.uid).toBe(o.metadata.uid);
    expect((await live(csv))?.metadata.finalizers).toEqual([OURS]);
  });

  it('defence in depth: the kube client refuses such a name without sending a request', async () => {
    const kube = createKube(loadKubeConfig(c.kubeconfig.shipped));
    await expect(kube.get({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: 'x', name: 'a,b=c' })).rejects.toThrow(/DNS-1123 subdomain/);
    await expect(kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'Bad Ns', name: 'p' })).rejects.toThrow(/DNS-1123 label/);
  });
});

// ---------------------------------------------------------------------------------------------
describe('"gone" needs positive evidence', () => {
  it('a 404 for a resource TYPE that is not served is a failure, never "the component is gone": the Operator is kept', async () => {
    const ns = await c.namespace('gone');
    const pkg = `gone-${hex()}`;
    const key = olm.componentLabelKey(pkg, ns);
    // OperatorCondition (operators.coreos.com/v2) has no CRD in this cluster: its GET answers a 404
    // "the server could not find the requested resource", which names no object.
    const built = olm.operatorObject({ pkg, namespace: ns, refs: [{ kind: 'OperatorCondition', apiVersion: 'operators.coreos.com/v2', namespace: ns, name: `${pkg}.v1` }] });
    built.metadata.annotations = { 'olm-medic.io/uninstall': 'true' };
    const op = await c.setStatus(await c.create(asObj(built)), built.status);
    const out = await send(runtime([finalizerCleanup]), 'update', op);
    expect(out.map((o) => o.status)).toEqual(['failed']);
    expect(out[0]!.reason).toMatch(/no evidence that operatorconditions .* is gone/);
    expect((await live(op))?.metadata.uid).toBe(op.metadata.uid);
    expect(key).toContain(pkg);
  });

  it('a NotFound naming the object is "gone": success, not an error', async () => {
    const kube = createKube(loadKubeConfig(c.kubeconfig.shipped));
    expect(await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: `nope-${hex()}` })).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
describe('our CSV finalizer is always released; dry-run never adds it', () => {
  async function deletingWithOurs(o: { annotations?: Record<string, string> } = {}): Promise<{ ns: string; csv: KubeObject; owned: KubeObject[] }> {
    const ns = await c.namespace('rel');
    const csv = await syncedCsv(ns, 'etcd.v0.9.4', { finalizers: [OURS], ...(o.annotations ? { annotations: o.annotations } : {}) });
    const owned = await ownedClusterObjects(ns, 'etcd.v0.9.4', 2);
    await c.admin.delete(refOf(csv), { uid: csv.metadata.uid!, dryRun: false });
    return { ns, csv: (await live(csv))!, owned };
  }

  it.each([
    ['the CSV is opted out', { annotations: { 'olm-medic.io/ignore': 'true' } }, {}, [finalizerCleanup], 'CsvCleanupSkipped', true],
    ['its namespace is protected', {}, { protect: true }, [finalizerCleanup], 'CsvCleanupSkipped', true],
    ['olm-medic runs in dry-run', {}, { DRY_RUN: 'true' }, [finalizerCleanup], 'CsvFinalizerReleased', true],
    ['finalizer-cleanup is disabled', {}, { ENABLED_FUNCTIONS: 'job-conflict' }, allFunctions, 'CsvFinalizerReleased', true],
    ['manageFinalizer=false (the removal path)', {}, { OLM_MEDIC_FINALIZER_CLEANUP_MANAGE_FINALIZER: 'false' }, [finalizerCleanup], 'CsvFinalizerReleased', true],
  ] as const)('%s: the deleting CSV is released (gone), its objects kept', async (_why, csvOpts, envOpts, fns, reason, kept) => {
    const s = await deletingWithOurs(csvOpts);
    const { protect, ...env } = envOpts as Record<string, string> & { protect?: boolean };
    const rt = runtime([...fns], { ...env, ...(protect ? { PROTECTED_NAMESPACES: `kube-system,${s.ns}` } : {}) });
    const out = await send(rt, 'update', s.csv);
    expect(out.map((o) => o.status)).not.toContain('failed');
    await eventually(async () => !(await live(s.csv)), 'the CSV to be released and gone', 10_000);
    for (const o of s.owned) expect(!!(await live(o))).toBe(kept);
    const events = await c.medicEvents(s.ns);
    expect(events.map((e) => e.reason)).toContain(reason);
  });

  it('dry-run never adds the finalizer (and sends no write for it)', async () => {
    const ns = await c.namespace('dry');
    const csv = await syncedCsv(ns, 'etcd.v0.9.4');
    await send(runtime([finalizerCleanup], { DRY_RUN: 'true' }), 'add', csv);
    expect((await live(csv))?.metadata.finalizers).toBeUndefined();
    expect(writes(ns)).toEqual([]);
  });

  it('the removal procedure: `olm-medic sweep --function finalizer-cleanup` with manageFinalizer=false releases every CSV (live and deleting)', async () => {
    const ns = await c.namespace('rm');
    const a = await syncedCsv(ns, 'a.v1', { finalizers: [OURS] });
    const b = await syncedCsv(ns, 'b.v1', { finalizers: ['example.com/keep', OURS] });
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['bin/olm-medic.mjs', 'sweep', '--function', 'finalizer-cleanup', '--namespace', ns], {
        env: { PATH: process.env.PATH ?? '', KUBECONFIG: c.kubeconfig.shipped, OLM_MEDIC_FINALIZER_CLEANUP_MANAGE_FINALIZER: 'false' },
      }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
    });
    expect(out.code, out.stderr).toBe(3);
    expect((await live(a))?.metadata.finalizers).toBeUndefined();
    expect((await live(b))?.metadata.finalizers).toEqual(['example.com/keep']);
  });
});

// ---------------------------------------------------------------------------------------------
describe('the CSV finalizer never races OLM (defect 8)', () => {
  it('a CSV OLM has not synced yet (no status) gets none: OLM v0.27+ adds its own on the first sync', async () => {
    const ns = await c.namespace('new');
    const csv = await c.create(asObj(olm.csv({ namespace: ns, name: 'fresh.v1' })));
    expect((csv.status as { phase?: string } | undefined)?.phase).toBeUndefined();
    await send(runtime([finalizerCleanup]), 'add', csv);
    expect((await live(csv))?.metadata.finalizers).toBeUndefined();
  });

  it('another original CSV in the namespace carries OLM\'s finalizer: none added; a CSV carrying both gives ours up to OLM', async () => {
    const ns = await c.namespace('v28');
    await syncedCsv(ns, 'other.v1', { finalizers: [OLMS] });
    const mine = await syncedCsv(ns, 'mine.v1');
    await send(runtime([finalizerCleanup]), 'update', mine);
    expect((await live(mine))?.metadata.finalizers).toBeUndefined();
    const both = await syncedCsv(ns, 'both.v1', { finalizers: [OLMS, OURS] });
    await send(runtime([finalizerCleanup]), 'update', both);
    expect((await live(both))?.metadata.finalizers).toEqual([OLMS]);
  });

  it('a synced CSV without OLM\'s finalizer (OLM < v0.27) gets ours', async () => {
    const ns = await c.namespace('v25');
    const csv = await syncedCsv(ns, 'old.v1');
    await send(runtime([finalizerCleanup]), 'add', csv);
    expect((await live(csv))?.metadata.finalizers).toEqual([OURS]);
  });
});

// ---------------------------------------------------------------------------------------------
describe('uninstall: the Operator name is the truncated key; collisions; shared labels; every component kind (defects 2-5)', () => {
  /** A labelled CSV (Failed 2 h ago), Deployment and optional Subscription of `pkg` in `ns`, labelled with `key`. */
  async function install(ns: string, pkg: string, key: string, o: { subscribed: boolean }): Promise<{ csv: KubeObject; deploy: KubeObject; sub?: KubeObject }> {
    const labels = { [key]: '' };
    const csv = await syncedCsv(ns, `${pkg.slice(0, 40)}.v1.0.0`, { phase: 'Failed', at: new Date(Date.now() - 2 * HOUR), labels });
    const deploy = await c.create(asObj({
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'controller', namespace: ns, labels: { ...labels, ...olm.csvOwnerLabels(csv.metadata.name, ns) } },
      spec: { replicas: 0, selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'm', image: 'x' }] } } },
    }));
    const sub = o.subscribed ? await c.create(asObj(olm.subscription({ namespace: ns, name: 'sub', package: pkg, source: 'cat', sourceNamespace: 'olm', labels } as never))) : undefined;
    return { csv, deploy, ...(sub ? { sub } : {}) };
  }
  const ref = (x: KubeObject): olm.ComponentRef => ({ kind: x.kind, apiVersion: x.apiVersion, name: x.metadata.name, ...(x.metadata.namespace ? { namespace: x.metadata.namespace } : {}) });
  async function operatorFor(key: string, refs: olm.ComponentRef[], annotate: boolean): Promise<KubeObject> {
    const name = key.slice(olm.COMPONENT_LABEL_PREFIX.length);
    const built = { apiVersion: olm.OPERATORS_V1, kind: 'Operator', metadata: { name, ...(annotate ? { annotations: { 'olm-medic.io/uninstall': 'true' } } : {}) }, spec: {}, status: { components: olm.operatorComponents(key, refs) } };
    return c.setStatus(await c.create(asObj(built)), built.status);
  }
  async function settle(rt: Runtime, op: KubeObject, rounds = 8): Promise<Outcome[]> {
    const all: Outcome[] = [];
    for (let i = 0; i < rounds; i++) {
      const cur = await live(op);
      if (!cur) break;
      all.push(...(await send(rt, 'update', cur)));
    }
    return all;
  }

  it('defect 2: <pkg>.<ns> over 63 chars, still subscribed: neither the annotation nor autoUninstall deletes anything', async () => {
    const ns = `openshift-cluster-observability-operator-${hex()}`;
    await c.admin.create(asObj({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), { dryRun: false });
    const pkg = 'cluster-observability-operator';
    const key = olm.componentLabelKey(pkg, ns);
    expect(key.length - olm.COMPONENT_LABEL_PREFIX.length).toBeLessThanOrEqual(63);
    expect(key.endsWith(`.${ns}`)).toBe(false);
    const i = await install(ns, pkg, key, { subscribed: true });
    const op = await operatorFor(key, [ref(i.csv), ref(i.deploy), ref(i.sub!)], true);
    const out = await settle(runtime([finalizerCleanup], { OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true', OLM_MEDIC_FINALIZER_CLEANUP_FAILED_CSV_GRACE_SECONDS: '60' }), op, 2);
    expect(out.map((o) => o.status)).toContain('refused');
    expect(writes(ns)).toEqual([]);
    expect(await live(op)).toBeDefined();
  });

  it('defect 3: two installs whose keys truncate to the same 63 chars share one Operator: uninstalling one keeps the other\'s CSV and Deployment', async () => {
    const prefix = `collide-${hex()}-${'n'.repeat(20)}`;
    const [nsA, nsB] = [`${prefix}-a`, `${prefix}-b`];
    for (const n of [nsA, nsB]) await c.admin.create(asObj({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }), { dryRun: false });
    const pkg = `pkg-${'p'.repeat(30)}`;
    const key = olm.componentLabelKey(pkg, nsA);
    expect(olm.componentLabelKey(pkg, nsB)).toBe(key);
    const a = await install(nsA, pkg, key, { subscribed: false });
    const b = await install(nsB, pkg, key, { subscribed: true });
    const op = await operatorFor(key, [a.csv, a.deploy, b.csv, b.deploy, b.sub!].map(ref), true);
    const out = await settle(runtime([finalizerCleanup]), op);
    expect(out.map((o) => o.status)).not.toContain('failed');
    expect(await live(a.csv)).toBeUndefined();
    expect(await live(a.deploy)).toBeUndefined();
    // B is untouched by this uninstall (a concurrent suite's cluster-wide sweep may legitimately add
    // olm-medic's finalizer to B's synced CSV, so identity, not resourceVersion, is compared)
    for (const x of [b.csv, b.deploy, b.sub!]) expect((await live(x))?.metadata.uid).toBe(x.metadata.uid);
    expect(writes(nsB).filter((w) => !w.startsWith('patch clusterserviceversions/'))).toEqual([]);
    expect((await live(b.csv))?.metadata.labels).toHaveProperty(key);
    expect(await live(op)).toBeDefined();
    expect((await c.medicEvents('default')).some((e) => e.reason === 'UninstallLeftoversKept' && e.regarding.name === op.metadata.name && e.note.includes(`${nsB}/sub`))).toBe(true);
  });

  it('defect 4: an InstallPlan and a ServiceAccount shared with another operator keep the other\'s label; only ours is removed; then the Operator goes', async () => {
    const ns = await c.namespace('shr');
    const pkg = `widget-${hex()}`;
    const key = olm.componentLabelKey(pkg, ns);
    const other = olm.componentLabelKey('other-operator', ns);
    const i = await install(ns, pkg, key, { subscribed: false });
    const sa = await c.create(asObj({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'shared', namespace: ns, labels: { [key]: '', [other]: '' } } }));
    const ip = await c.create(asObj(olm.installPlan({ namespace: ns, name: 'install-shared', csvNames: [i.csv.metadata.name], labels: { [key]: '', [other]: '' } } as never)));
    const op = await operatorFor(key, [i.csv, i.deploy, sa, ip].map(ref), true);
    const out = await settle(runtime([finalizerCleanup]), op);
    expect(out.map((o) => o.status)).not.toContain('failed');
    for (const x of [sa, ip]) {
      const l = (await live(x))?.metadata.labels ?? {};
      expect(l).not.toHaveProperty(key);
      expect(l).toHaveProperty(other);
    }
    expect(await live(i.csv)).toBeUndefined();
    await eventually(async () => !(await live(op)), 'the Operator to be deleted last');
  });

  it('defect 5: a Namespace and an APIService in the refs are kept and unlabelled (no 500), then the Operator goes', async () => {
    const ns = await c.namespace('kinds');
    const pkg = `api-${hex()}`;
    const key = olm.componentLabelKey(pkg, ns);
    const nsObj = (await c.admin.mergePatch({ apiVersion: 'v1', kind: 'Namespace', name: ns }, { metadata: { labels: { [key]: '' } } }, { dryRun: false })) as KubeObject;
    const group = `${hex()}.safety.example.com`;
    const apiService = await c.create(asObj({
      apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService',
      metadata: { name: `v1alpha1.${group}`, labels: { [key]: '' } },
      spec: { group, version: 'v1alpha1', groupPriorityMinimum: 10, versionPriority: 10, insecureSkipTLSVerify: true, service: { namespace: ns, name: 'absent', port: 443 } },
    }));
    try {
      const op = await operatorFor(key, [nsObj, apiService].map(ref), true);
      const out = await settle(runtime([finalizerCleanup]), op);
      expect(out.map((o) => o.status)).not.toContain('failed');
      expect((await live(nsObj))?.metadata.labels ?? {}).not.toHaveProperty(key);
      expect((await live(apiService))?.metadata.labels ?? {}).not.toHaveProperty(key);
      await eventually(async () => !(await live(op)), 'the Operator to be deleted');
    } finally {
      await c.admin.delete(refOf(apiService), { uid: apiService.metadata.uid!, dryRun: false });
    }
  });
});

// ---------------------------------------------------------------------------------------------
describe('job-conflict: OLM-version evidence, suspended jobs, retry-job names (defects 6, 7, 10)', () => {
  async function catalogNs(o: { registryPodManaged?: boolean } = {}): Promise<{ cat: string; cs: KubeObject }> {
    const cat = await c.namespace('cat');
    const cs = await c.create(asObj(olm.catalogSource({ namespace: cat, name: 'community', image: 'quay.io/x/index:v1' } as never)));
    await c.create(asObj(olm.catalogServiceAccount({ namespace: cat, catalogSourceName: 'community', catalogSourceUid: cs.metadata.uid! })));
    if (o.registryPodManaged !== undefined) {
      await c.create(asObj(olm.catalogPod({ namespace: cat, catalogSourceName: 'community', catalogSourceUid: cs.metadata.uid!, nodeName: 'w1', image: 'quay.io/x/index:v1', managedLabel: o.registryPodManaged })));
    }
    return { cat, cs };
  }
  /** An unpack ConfigMap (labelled, as every OLM since v0.19 does) and its Job as OLM v0.19-v0.25 wrote it: no labels at all. */
  async function legacyJob(cat: string, cs: KubeObject, o: { name?: (hash: string) => string; state?: 'complete' | 'failed' | 'suspended'; deadline?: number } = {}): Promise<{ cm: KubeObject; job: KubeObject; image: string }> {
    const image = `quay.io/x/bundle@sha256:${randomBytes(32).toString('hex')}`;
    const cm = await c.create(asObj(olm.unpackConfigMap({ namespace: cat, image, catalogSourceName: 'community', catalogSourceUid: cs.metadata.uid!, extractedPackage: 'etcd' })));
    const built = olm.unpackJob({ namespace: cat, image, configMapUid: cm.metadata.uid!, variant: 'no-ref-label', ...(o.name ? { name: o.name(olm.unpackHash(image)) } : {}), ...(o.deadline ? { activeDeadlineSeconds: o.deadline } : {}) });
    if (o.state === 'suspended') built.spec.suspend = true;
    let job = await c.create(asObj(built));
    expect(job.metadata.labels ?? {}).not.toHaveProperty('olm.managed');
    if (o.state === 'complete') job = await c.setStatus(job, olm.jobStatusComplete({ at: new Date(Date.now() - HOUR), startedAt: new Date(Date.now() - HOUR - 60_000) }));
    if (o.state === 'failed') job = await c.setStatus(job, olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: new Date(Date.now() - HOUR), startedAt: new Date(Date.now() - 2 * HOUR) }));
    return { cm, job, image };
  }

  it('defect 6: OLM v0.19-v0.25 (ConfigMap labelled, Job not, registry pod not): a healthy Complete Job is never deleted, by events or sweeps', async () => {
    const { cat, cs } = await catalogNs({ registryPodManaged: false });
    const { job } = await legacyJob(cat, cs, { state: 'complete' });
    const rt = runtime([jobConflict]);
    expect((await send(rt, 'update', job)).map((o) => o.status)).toEqual(['noop']);
    await sweep(rt, cat, 'job-conflict');
    expect((await live(job))?.metadata.uid).toBe(job.metadata.uid);
    expect(writes(cat)).toEqual([]);
  });

  it('... whereas with OLM v0.26+ evidence (a labelled registry pod) the same unlabelled Job is invisible to OLM and is removed', async () => {
    const { cat, cs } = await catalogNs({ registryPodManaged: true });
    const { job } = await legacyJob(cat, cs, { state: 'complete' });
    expect((await send(runtime([jobConflict]), 'update', job)).map((o) => o.status)).toEqual(['acted']);
    expect(await live(job)).toBeUndefined();
  });

  it('defect 6: OLM <= v0.24 keeps the failed lookup in an InstallPlan: a Warning with the documented steps, no delete', async () => {
    const { cat, cs } = await catalogNs({ registryPodManaged: false });
    const { job, image } = await legacyJob(cat, cs, { state: 'failed' });
    const sns = await c.namespace('sub');
    const sub = await c.create(asObj(olm.subscription({ namespace: sns, name: 'etcd', package: 'etcd', source: 'community', sourceNamespace: cat } as never)));
    const ip = await c.create(asObj(olm.installPlan({ namespace: sns, csvNames: ['etcd.v1'], ownerSubs: [{ name: 'etcd', uid: sub.metadata.uid! }] } as never)));
    await c.setStatus(ip, olm.installPlanStatus({
      phase: 'Failed', catalogSources: ['community'],
      bundleLookups: [olm.bundleLookup({ image, identifier: 'etcd.v1', catalogSourceName: 'community', catalogSourceNamespace: cat, conditions: [olm.bundleLookupCondition({ type: 'BundleLookupFailed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' })] })],
    } as never));
    const out = await send(runtime([jobConflict]), 'update', job);
    expect(out.map((o) => o.status)).toEqual(['refused']);
    expect(await live(job)).toBeDefined();
    const ev = (await c.medicEvents(cat)).find((e) => e.reason === 'UnpackRetryNeedsManualSteps');
    expect(ev?.note).toContain(`${sns}/${ip.metadata.name}`);
    expect(ev?.type).toBe('Warning');
  });

  it('defect 7: a suspended unpack Job (no startTime) is never deleted, even long past creation + deadline', async () => {
    const { cat, cs } = await catalogNs({ registryPodManaged: true });
    const { job } = await legacyJob(cat, cs, { state: 'suspended', deadline: 60 });
    const later = () => new Date(Date.now() + 2 * HOUR);
    const rt = runtime([jobConflict], {}, { now: later });
    expect((await send(rt, 'update', job)).map((o) => o.status)).toEqual(['noop']);
    await sweep(rt, cat, 'job-conflict');
    expect((await live(job))?.metadata.uid).toBe(job.metadata.uid);
  });

  it('defect 10: a look-alike retry Job whose suffix is outside OLM\'s alphabet is not an unpack Job', async () => {
    const { cat, cs } = await catalogNs({ registryPodManaged: true });
    // Failed, owned by the unpack ConfigMap of the same hash: were it OLM's retry Job, it would go.
    const { job } = await legacyJob(cat, cs, { name: (hash) => `${hash.slice(0, 58)}aeiou`, state: 'failed' });
    expect((await send(runtime([jobConflict]), 'update', job)).map((o) => o.status)).toEqual(['ignored']);
    await sweep(runtime([jobConflict]), cat, 'job-conflict');
    expect(await live(job)).toBeDefined();
    // the same Job with a suffix from OLM's alphabet is OLM's, and is removed
    const { job: real } = await legacyJob(cat, cs, { name: (hash) => `${hash.slice(0, 58)}bcd2x`, state: 'failed' });
    expect((await send(runtime([jobConflict]), 'update', real)).map((o) => o.status)).toEqual(['acted']);
  });
});

// ---------------------------------------------------------------------------------------------
describe('catalog-reschedule: tolerate-forever pods, the node-gone quarantine, the apiserver clock (defects 9, 12)', () => {
  async function stuckPod(o: { tolerationSeconds?: number | null; nodeReadySince?: Date; nodeExists?: boolean }): Promise<{ ns: string; pod: KubeObject; nodeName: string }> {
    const ns = await c.namespace('cr');
    const nodeName = `worker-${hex()}`;
    if (o.nodeExists !== false) {
      const since = o.nodeReadySince ?? new Date(Date.now() - HOUR);
      const n = await c.create(asObj(olm.node({ name: nodeName, ready: 'Unknown', since, taints: [olm.taintUnreachable(since)] })));
      await c.setStatus(n, olm.node({ name: nodeName, ready: 'Unknown', since }).status);
    }
    const cs = await c.create(asObj(olm.catalogSource({ namespace: ns, name: 'idx', image: 'quay.io/x/index:v1' } as never)));
    await c.create(asObj(olm.catalogServiceAccount({ namespace: ns, catalogSourceName: 'idx', catalogSourceUid: cs.metadata.uid! })));
    const built = olm.catalogPod({ namespace: ns, catalogSourceName: 'idx', catalogSourceUid: cs.metadata.uid!, nodeName, image: 'quay.io/x/index:v1', name: 'idx-abcde' });
    if (o.tolerationSeconds !== undefined) {
      built.spec.tolerations = [
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', ...(o.tolerationSeconds === null ? {} : { tolerationSeconds: o.tolerationSeconds }) },
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', ...(o.tolerationSeconds === null ? {} : { tolerationSeconds: o.tolerationSeconds }) },
      ];
    }
    const pod = await c.create(asObj(built));
    return { ns, pod, nodeName };
  }

  it('defect 9: a toleration without tolerationSeconds tolerates forever: never force-deleted by time (node NotReady for a day)', async () => {
    const s = await stuckPod({ tolerationSeconds: null, nodeReadySince: new Date(Date.now() - 24 * HOUR) });
    expect((await send(runtime([catalogReschedule]), 'update', s.pod)).map((o) => o.status)).toEqual(['noop']);
    expect((await live(s.pod))?.metadata.uid).toBe(s.pod.metadata.uid);
  });

  it('defect 9: a node that is gone gets a 90 s quarantine before its catalog pod is force-deleted (PodGC, 40-60 s, goes first)', async () => {
    const s = await stuckPod({ nodeExists: false });
    const t0 = Date.now();
    let now = t0;
    const rt = runtime([catalogReschedule], {}, { now: () => new Date(now) });
    expect((await send(rt, 'update', s.pod)).map((o) => o.status)).toEqual(['requeued']);
    expect(await live(s.pod)).toBeDefined();
    // Past PodGC's worst case (40 s quarantine + 20 s period): still Kubernetes' turn.
    now = t0 + 65_000;
    const bumped = (await c.admin.mergePatch(refOf(s.pod), { metadata: { labels: { bumped: 'yes' } } }, { dryRun: false })) as KubeObject;
    expect((await send(rt, 'update', bumped)).map((o) => o.status)).toEqual(['requeued']);
    expect(await live(s.pod)).toBeDefined();
    now = t0 + 95_000;
    // the next event about the pod (a status change bumps its resourceVersion)
    const touched = (await c.admin.mergePatch(refOf(s.pod), { metadata: { labels: { touched: 'yes' } } }, { dryRun: false })) as KubeObject;
    expect((await send(rt, 'update', touched)).map((o) => o.status)).toEqual(['acted']);
    expect(await live(s.pod)).toBeUndefined();
  });

  it('defect 12: a host clock an hour ahead does not expire the fence early: decisions use the apiserver\'s clock', async () => {
    const s = await stuckPod({ nodeReadySince: new Date(Date.now() - 100_000) }); // NotReady for 100 s; fence 300 + 30 s
    const skewed = runtime([catalogReschedule], {}, { localNow: () => Date.now() + HOUR });
    expect((await send(skewed, 'update', s.pod)).map((o) => o.status)).toEqual(['requeued']);
    expect((await live(s.pod))?.metadata.uid).toBe(s.pod.metadata.uid);
    // Control: deciding on that host clock (as olm-medic did before) force-deletes the pod early.
    const onHostClock = runtime([catalogReschedule], {}, { now: () => new Date(Date.now() + HOUR) });
    expect((await send(onHostClock, 'update', s.pod)).map((o) => o.status)).toEqual(['acted']);
  });
});

// ---------------------------------------------------------------------------------------------
/** A CatalogSource `community` in `cat` and its Failed unpack Job (OLM v0.26+ shape); `cmAnnotations` go on the ConfigMap. */
async function failedUnpackJob(cat: string, cmAnnotations?: Record<string, string>): Promise<KubeObject> {
  const cs = await c.create(asObj(olm.catalogSource({ namespace: cat, name: 'community', image: 'quay.io/x/index:v1' } as never)));
  const image = `quay.io/x/bundle@sha256:${randomBytes(32).toString('hex')}`;
  const cmBuilt = olm.unpackConfigMap({ namespace: cat, image, catalogSourceName: 'community', catalogSourceUid: cs.metadata.uid! });
  if (cmAnnotations) cmBuilt.metadata.annotations = cmAnnotations;
  const cm = await c.create(asObj(cmBuilt));
  const job = await c.create(asObj(olm.unpackJob({ namespace: cat, image, configMapUid: cm.metadata.uid! })));
  return c.setStatus(job, olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: new Date(Date.now() - HOUR), startedAt: new Date(Date.now() - 2 * HOUR) }));
}

/** A Subscription in `ns` resolving from catalog namespace `cat`, stuck with BundleUnpackFailed. */
async function stuckSubscription(ns: string, name: string, cat: string, annotations?: Record<string, string>): Promise<KubeObject> {
  const s = await c.create(asObj(olm.subscription({ namespace: ns, name, package: 'etcd', source: 'community', sourceNamespace: cat, ...(annotations ? { annotations } : {}) } as never)));
  return c.setStatus(s, olm.subscriptionStatus({ conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded' })] } as never));
}

describe('nothing blocks the fix for others; protection applies on every path', () => {
  it('a Failed unpack Job blocking 31 Subscriptions heals with MAX_ACTIONS_PER_WINDOW=30 (charged the whole window)', async () => {
    const cat = await c.namespace('big');
    const job = await failedUnpackJob(cat);
    const sns = await c.namespace('subs');
    const subs: KubeObject[] = [];
    for (let i = 0; i < 31; i++) {
      subs.push(await stuckSubscription(sns, `s${i}`, cat));
    }
    const out = await send(runtime([jobConflict], { MAX_ACTIONS_PER_WINDOW: '30' }), 'update', job);
    expect(out.map((o) => o.status)).toEqual(['acted']);
    expect(await live(job)).toBeUndefined();
    for (const s of subs) expect((await live(s))?.metadata.annotations?.['olm-medic.io/nudged-at']).toBeDefined();
  });

  it('a CSV with 31 owned ClusterRoles is cleaned up and released with MAX_ACTIONS_PER_WINDOW=30', async () => {
    const ns = await c.namespace('many');
    const csv = await syncedCsv(ns, 'many.v1', { finalizers: [OURS] });
    const owned = await ownedClusterObjects(ns, 'many.v1', 31);
    await c.admin.delete(refOf(csv), { uid: csv.metadata.uid!, dryRun: false });
    await send(runtime([finalizerCleanup], { MAX_ACTIONS_PER_WINDOW: '30' }), 'update', (await live(csv))!);
    await eventually(async () => !(await live(csv)), 'the CSV to be cleaned up and released');
    for (const o of owned) expect(await live(o)).toBeUndefined();
  });

  it('an opted-out Subscription is left out of the nudge, not a refusal of the fix', async () => {
    const cat = await c.namespace('opt');
    const job = await failedUnpackJob(cat);
    const sns = await c.namespace('subs');
    const plain = await stuckSubscription(sns, 'plain', cat);
    const opted = await stuckSubscription(sns, 'opted', cat, { 'olm-medic.io/ignore': 'true' });
    expect((await send(runtime([jobConflict]), 'update', job)).map((o) => o.status)).toEqual(['acted']);
    expect(await live(job)).toBeUndefined();
    expect((await live(plain))?.metadata.annotations?.['olm-medic.io/nudged-at']).toBeDefined();
    expect((await live(opted))?.metadata.resourceVersion).toBe(opted.metadata.resourceVersion);
    expect((await c.medicEvents(sns)).some((e) => e.reason === 'OptedOut' && e.regarding.name === 'opted')).toBe(true);
  });

  it('the owner ConfigMap\'s opt-out protects its Job', async () => {
    const cat = await c.namespace('cmopt');
    const job = await failedUnpackJob(cat, { 'olm-medic.io/ignore': 'true' });
    expect((await send(runtime([jobConflict]), 'update', job)).map((o) => o.status)).toEqual(['refused']);
    expect(await live(job)).toBeDefined();
  });

  it('the orphan sweep never deletes leftovers of a CSV in a protected namespace', async () => {
    const ghost = `ghost-${hex()}.v1`;
    const cr = await c.create(asObj(olm.csvClusterRole({ csvName: ghost, csvNamespace: 'kube-system', name: `${ghost}-cr` } as never)));
    const rt = runtime([finalizerCleanup], { OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
    const out = await sweep(rt, 'kube-system', 'finalizer-cleanup');
    expect(out.map((o) => o.status)).toContain('refused');
    expect((await live(cr))?.metadata.uid).toBe(cr.metadata.uid);
    await c.admin.delete(refOf(cr), { uid: cr.metadata.uid!, dryRun: false });
  });
});
