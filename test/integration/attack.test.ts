/**
 * Red-team suite (issue 8's invariant): olm-medic never writes to an object whose live state does
 * not justify the write, and never answers 5xx / dies for input it accepts.
 *
 * Every test asserts the SAFE behaviour on the real control plane, as the shipped ServiceAccount.
 * `describe('holes', ...)` holds the ones that failed when written (see /work/notes/attack-findings.md);
 * `describe('safe', ...)` holds hypotheses that turned out safe (regression tests).
 */
import { randomBytes } from 'node:crypto';
import { CloudEvent } from 'cloudevents';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { catalogReschedule } from '../../functions/catalog-reschedule/index.js';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { refOf, type KubeObject } from '../../shared/kube/types.js';
import type { Runtime, RuntimeOverrides } from '../../shared/wiring.js';
import * as olm from '../fixtures/olm-objects.js';
import { eventually, testCluster } from '../support/cluster.js';
import { apiServerEvent, post } from '../support/events.js';
import { startServer, type RunningServer } from '../support/server.js';

const c = testCluster();
const CATALOG = 'operatorhubio-catalog';
const CATALOG_IMAGE = 'quay.io/operatorhubio/catalog:latest';
const MIN = 60_000;

const asKube = (o: olm.Obj): KubeObject => o as KubeObject;
const create = (o: olm.Obj): Promise<KubeObject> => c.create(asKube(o));
const live = (o: KubeObject): Promise<KubeObject | undefined> => c.get(refOf(o));
const WRITES = ['delete', 'deletecollection', 'patch', 'update'];
const writesIn = (ns: string) => c.audit().filter((e) => e.objectRef?.namespace === ns && WRITES.includes(e.verb));
const hex = (n: number) => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);

const runtimes: Runtime[] = [];
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.engine.close();
});
function runtime(fns: Parameters<typeof c.runtime>[0], env: Record<string, string> = {}, overrides: RuntimeOverrides = {}): Runtime {
  const rt = c.runtime(fns, env, overrides as { now?: () => Date });
  runtimes.push(rt);
  return rt;
}
const send = (rt: Runtime, verb: 'add' | 'update' | 'delete', obj: KubeObject): Promise<Outcome[]> => rt.engine.handle(decodeEvent(apiServerEvent(verb, obj)));

// ---------------------------------------------------------------------------------------------
// job-conflict: an OLM v0.19-v0.25 catalog namespace (the ConfigMap is labelled, the Job is not)
// ---------------------------------------------------------------------------------------------

interface Legacy {
  cat: string;
  catsrc: KubeObject;
  cm: KubeObject;
  job: KubeObject;
}

/** A healthy, Complete unpack Job exactly as OLM v0.25 leaves it: no labels on the Job. */
async function legacyCompleteUnpack(): Promise<Legacy> {
  const cat = await c.namespace('atk-cat');
  const image = `quay.io/operatorhubio/etcd@sha256:${hex(64)}`;
  let catsrc = await create(olm.catalogSource({ namespace: cat, name: CATALOG, image: CATALOG_IMAGE, displayName: 'Community Operators', publisher: 'OperatorHub.io' }));
  catsrc = await c.setStatus(catsrc, olm.catalogSourceStatus({ namespace: cat, name: CATALOG, lastObservedState: 'READY' }));
  const cm = await create(olm.unpackConfigMap({ namespace: cat, image, catalogSourceName: CATALOG, catalogSourceUid: catsrc.metadata.uid!, managedLabel: true, extractedPackage: 'etcd' }));
  let job = await create(olm.unpackJob({ namespace: cat, image, configMapUid: cm.metadata.uid!, variant: 'no-ref-label' }));
  job = await c.setStatus(job, olm.jobStatusComplete({ at: new Date(Date.now() - 21 * 24 * 60 * MIN) }));
  const l = job.metadata.labels ?? {};
  expect([l['olm.managed'], l['operatorframework.io/bundle-unpack-ref']]).toEqual([undefined, undefined]);
  return { cat, catsrc, cm, job };
}

async function expectJobUntouched(s: Legacy): Promise<void> {
  const j = await live(s.job);
  expect(j?.metadata.uid, 'the healthy Complete unpack Job still exists').toBe(s.job.metadata.uid);
  expect(writesIn(s.cat).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`)).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// catalog-reschedule helpers
// ---------------------------------------------------------------------------------------------

/** A CatalogSource and its serving pod bound to `nodeName`, deleted with a 3600 s grace (stuck Terminating). */
async function stuckCatalogPod(ns: string, nodeName: string, mutate: (pod: olm.Obj) => void = () => {}): Promise<{ catsrc: KubeObject; pod: KubeObject }> {
  const catsrc = await create(olm.catalogSource({ namespace: ns, name: CATALOG, image: CATALOG_IMAGE, displayName: 'Community Operators', publisher: 'OperatorHub.io' }));
  const built = olm.catalogPod({ namespace: ns, catalogSourceName: CATALOG, catalogSourceUid: catsrc.metadata.uid!, nodeName, image: CATALOG_IMAGE });
  mutate(built);
  const pod = await create(built);
  await c.admin.delete(refOf(pod), { uid: pod.metadata.uid!, gracePeriodSeconds: 3600, dryRun: false });
  return { catsrc, pod: (await live(pod))! };
}

// ---------------------------------------------------------------------------------------------
// finalizer-cleanup B helpers
// ---------------------------------------------------------------------------------------------

function deployment(ns: string, name: string, labels: Record<string, string>): olm.Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  };
}

/** An Operator object as OLM's OperatorReconciler writes it, annotated for uninstall. */
async function operatorFor(pkg: string, ns: string, refs: olm.ComponentRef[], annotations: Record<string, string> = { 'olm-medic.io/uninstall': 'true' }): Promise<KubeObject> {
  const obj = olm.operatorObject({ pkg, namespace: ns, refs });
  const status = obj.status;
  obj.metadata.annotations = annotations;
  delete obj.status;
  const op = await create(obj);
  return c.setStatus(op, status);
}

// =============================================================================================

describe('closed holes (regression: each failed on a67ba5e; H1-H9 fixed by main 7456c0f, H10-H13 by 8f66b08)', () => {
  it('H10 finalizer-cleanup: a ClusterRole named with a space ("evil role", valid for RBAC) labelled as owned by a CSV never strands that CSV Terminating with our finalizer', async () => {
    const ns = await c.namespace('atk-fin');
    const name = 'etcdoperator.v0.9.4';
    const built = olm.csv({ namespace: ns, name, finalizers: ['olm-medic.io/csv-cleanup'] });
    const csvObj = await create(built);
    await c.setStatus(csvObj, built.status);
    const cr = olm.csvClusterRole({ csvName: name, csvNamespace: ns, name: `evil role ${ns}` });
    await create(cr);
    await c.admin.delete(refOf(csvObj), { uid: csvObj.metadata.uid!, dryRun: false });
    const deleting = (await live(csvObj))!;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    const rt = runtime([finalizerCleanup]);
    const out = await send(rt, 'update', deleting);
    expect(out.map((o) => o.status), JSON.stringify(out)).not.toContain('failed');
    await eventually(async () => (await live(csvObj)) === undefined, 'the CSV to be released (our finalizer removed)', 15_000);
  });

  it('H11 finalizer-cleanup: an original CSV carrying our finalizer that later LOOKS copied (someone added label olm.copiedFrom) is still released when deleted', async () => {
    const ns = await c.namespace('atk-cp');
    const built = olm.csv({ namespace: ns, name: 'etcdoperator.v0.9.4', finalizers: ['olm-medic.io/csv-cleanup'] });
    const csvObj = await create(built);
    await c.setStatus(csvObj, built.status);
    await c.admin.mergePatch(refOf(csvObj), { metadata: { labels: { 'olm.copiedFrom': 'elsewhere' } } }, { dryRun: false });
    await c.admin.delete(refOf(csvObj), { uid: csvObj.metadata.uid!, dryRun: false });
    const deleting = (await live(csvObj))!;
    const rt = runtime([finalizerCleanup]);
    await send(rt, 'update', deleting);
    await rt.engine.handle({ kind: 'sweep', namespace: ns, functions: ['finalizer-cleanup'], meta: { id: `sweep-${ns}`, source: 'test', type: 'io.olm-medic.sweep' } });
    await eventually(async () => (await live(csvObj)) === undefined, 'the CSV to be released (our finalizer removed)', 10_000);
  });

  it('H12 finalizer-cleanup: uninstall never deletes an InstallPlan that a LIVE Subscription of another package owns and points at (status.installPlanRef), even if only the uninstalled key labels it', async () => {
    const ns = await c.namespace('atk-ip');
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, ns);
    // prometheus (another package) is still being installed through this plan, which carries only pkg's label
    // (the very state ownerref-repair exists for: OLM set the owner but not yet the label).
    const prom = await create(olm.subscription({ namespace: ns, name: 'prometheus', package: 'prometheus', source: CATALOG, sourceNamespace: 'olm', channel: 'beta', approval: 'Manual' }));
    let ip = await create(olm.installPlan({ namespace: ns, csvNames: [`${pkg}.v1.0.0`, 'prometheusoperator.0.47.0'], approval: 'Manual', generation: 2, ownerSubs: [{ name: 'prometheus', uid: prom.metadata.uid! }], labels: { [key]: '' } }));
    ip = await c.setStatus(ip, olm.installPlanStatus({ phase: 'RequiresApproval', catalogSources: [CATALOG] }));
    await c.setStatus(prom, olm.subscriptionStatus({
      currentCSV: 'prometheusoperator.0.47.0',
      installPlan: { name: ip.metadata.name, namespace: ns, uid: ip.metadata.uid!, resourceVersion: ip.metadata.resourceVersion! },
      state: 'UpgradePending',
      installPlanGeneration: 2,
    }));
    const op = await operatorFor(pkg, ns, [{ kind: 'InstallPlan', apiVersion: 'operators.coreos.com/v1alpha1', namespace: ns, name: ip.metadata.name }]);
    await send(runtime([finalizerCleanup]), 'update', op);
    expect(await live(ip), `InstallPlan ${ip.metadata.name} that Subscription prometheus is waiting on`).toBeDefined();
    expect(writesIn(ns).filter((e) => e.verb === 'delete')).toEqual([]);
  });

  it('H13 finalizer-cleanup: uninstall never deletes a Deployment in the same namespace that a LIVE CSV of another operator owns (ownerRef + olm.owner labels), even if it carries the key', async () => {
    const ns = await c.namespace('atk-own2');
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, ns);
    // A second operator installed in the same namespace (OwnNamespace installs share it), running.
    const other = await create(olm.csv({ namespace: ns, name: 'other-operator.v1.0.0' }));
    const d = deployment(ns, 'other-operator-controller', { ...olm.csvOwnerLabels(other.metadata.name, ns), [key]: '' });
    d.metadata.ownerReferences = [olm.nonBlockingOwnerRef({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: other.metadata.name, uid: other.metadata.uid! })];
    const theirs = await create(d);
    const op = await operatorFor(pkg, ns, [{ kind: 'Deployment', apiVersion: 'apps/v1', namespace: ns, name: theirs.metadata.name }]);
    await send(runtime([finalizerCleanup]), 'update', op);
    expect(await live(theirs), `Deployment of live CSV ${ns}/${other.metadata.name}`).toBeDefined();
    expect(writesIn(ns).filter((e) => e.verb === 'delete')).toEqual([]);
  });


  it('H1 job-conflict: a bare pod labelled olm.catalogSource + olm.managed=true (no CatalogSource owner) is not evidence that OLM labels its Jobs: a healthy v0.25 unpack Job is kept', async () => {
    const s = await legacyCompleteUnpack();
    // Control: without the look-alike, the unlabelled Complete job is (correctly) left alone.
    expect(await send(runtime([jobConflict]), 'add', s.job)).toEqual([expect.objectContaining({ status: 'noop' })]);
    // Any user with create on pods in the catalog namespace: a pod that only LOOKS like a v0.26+ registry pod.
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'look-alike', namespace: s.cat, labels: { 'olm.catalogSource': 'mine', 'olm.managed': 'true' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    await send(runtime([jobConflict]), 'add', s.job);
    await expectJobUntouched(s);
  });

  it('H2 job-conflict: a look-alike hash-named Job carrying operatorframework.io/bundle-unpack-ref (no ConfigMap owner) is not evidence either', async () => {
    const s = await legacyCompleteUnpack();
    expect(await send(runtime([jobConflict]), 'add', s.job)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: hex(63), namespace: s.cat, labels: { 'operatorframework.io/bundle-unpack-ref': 'mine' } },
      spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    await send(runtime([jobConflict]), 'add', s.job);
    await expectJobUntouched(s);
  });

  it('H3 finalizer-cleanup: uninstalling Operator <pkg>.<nsA> never deletes an object in another namespace that carries its label (refs pointing into nsB)', async () => {
    const [nsA, nsB] = [await c.namespace('atk-opa'), await c.namespace('atk-opb')];
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, nsA);
    const mine = await create(deployment(nsA, `${pkg}-controller`, { [key]: '' }));
    // A workload in another namespace carrying the label (set by its owner, or by mistake). OLM's
    // OperatorReconciler lists every object with the label, so it appears in the refs.
    const theirs = await create(deployment(nsB, 'payments-api', { [key]: '' }));
    const op = await operatorFor(pkg, nsA, [
      { kind: 'Deployment', apiVersion: 'apps/v1', namespace: nsA, name: mine.metadata.name },
      { kind: 'Deployment', apiVersion: 'apps/v1', namespace: nsB, name: theirs.metadata.name },
    ]);
    await send(runtime([finalizerCleanup]), 'update', op);
    await eventually(async () => (await live(mine)) === undefined, "the uninstalled operator's own Deployment to go");
    expect(await live(theirs), `Deployment ${nsB}/payments-api`).toBeDefined();
    expect(writesIn(nsB).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`)).toEqual([]);
  });

  it('H3b finalizer-cleanup: uninstall never deletes a ClusterRole that a LIVE CSV in another namespace owns (olm.owner labels), even if it carries the key', async () => {
    const [nsA, nsB] = [await c.namespace('atk-opa'), await c.namespace('atk-opb')];
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, nsA);
    // Another operator, installed and running in nsB: its CSV exists, its ClusterRole is labelled as owned by it.
    const other = await create(olm.csv({ namespace: nsB, name: 'other-operator.v1.0.0' }));
    const cr = olm.csvClusterRole({ csvName: other.metadata.name, csvNamespace: nsB });
    cr.metadata.labels = { ...cr.metadata.labels, [key]: '' };
    const theirs = await create(cr);
    const op = await operatorFor(pkg, nsA, [{ kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', name: theirs.metadata.name }]);
    await send(runtime([finalizerCleanup]), 'update', op);
    expect(await live(theirs), `ClusterRole ${theirs.metadata.name} of live CSV ${nsB}/${other.metadata.name}`).toBeDefined();
    expect(c.audit().filter((e) => e.verb === 'delete' && e.objectRef?.name === theirs.metadata.name)).toEqual([]);
  });

  it('H7 catalog-reschedule: the fence counts from the NoExecute taint the control plane added, not from a Ready transition written by a node whose clock is behind', async () => {
    const ns = await c.namespace('atk-kclk');
    const now = new Date();
    // The kubelet (clock 1 h behind) reported Ready=False; the node-lifecycle controller tainted the node just now.
    const n = await create(olm.node({ name: `kclk-${ns}`, ready: false, since: new Date(now.getTime() - 60 * MIN), taints: [olm.taintNotReady(now)] }));
    const { pod } = await stuckCatalogPod(ns, n.metadata.name);
    const out = await send(runtime([catalogReschedule], {}, { now: () => now }), 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['requeued']);
    expect((await live(pod))?.metadata.uid).toBe(pod.metadata.uid);
    expect(writesIn(ns)).toEqual([]);
  });

  it('H4 catalog-reschedule: a host clock behind the apiserver does not skip the node-gone quarantine on the first event after start', async () => {
    const ns = await c.namespace('atk-skew');
    const ghost = `ghost-${hex(8)}`; // no Node object: "the node is gone"
    const { pod } = await stuckCatalogPod(ns, ghost);
    // A fresh process (no apiserver response seen yet) whose host clock runs an hour behind.
    const rt = runtime([catalogReschedule], {}, { localNow: () => Date.now() - 60 * MIN });
    const out = await send(rt, 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['requeued']);
    expect((await live(pod))?.metadata.uid).toBe(pod.metadata.uid);
    expect(writesIn(ns)).toEqual([]);
  });

  it('H8 catalog-reschedule: a pod labelled olm.catalogSource with a value that is no object name (My_Catalog) neither fails the node (500) nor blocks the real catalog pod on it', async () => {
    const [ns, userNs] = [await c.namespace('atk-cat8'), await c.namespace('atk-usr8')];
    const now = new Date();
    const n = await create(olm.node({ name: `dead-${ns}`, ready: 'Unknown', since: new Date(now.getTime() - 60 * MIN), taints: [olm.taintUnreachable(new Date(now.getTime() - 60 * MIN))] }));
    const { pod } = await stuckCatalogPod(ns, n.metadata.name);
    // Any user who can create pods: bound straight to the node (spec.nodeName), a valid LABEL value, not a valid NAME.
    await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'look-alike', namespace: userNs, labels: { 'olm.catalogSource': 'My_Catalog' } },
      spec: { nodeName: n.metadata.name, containers: [{ name: 'c', image: 'busybox' }] },
    });
    const out = await send(runtime([catalogReschedule], {}, { now: () => now }), 'update', pod);
    expect(out.map((o) => o.status), JSON.stringify(out)).toEqual(['acted']);
    expect(await live(pod)).toBeUndefined();
  });

  it('H9 ownerref-repair: a Subscription whose spec.name makes no valid label key (edited to "Bad Name") neither fails the InstallPlan forever (500) nor blocks the owner the other Subscription needs', async () => {
    const ns = await c.namespace('atk-own');
    const csvs = ['prometheusoperator.0.47.0', 'etcdoperator.v0.9.4'];
    let ip = await create(olm.installPlan({ namespace: ns, csvNames: csvs, approval: 'Automatic', generation: 1, ownerSubs: [] }));
    ip = await c.setStatus(ip, olm.installPlanStatus({ phase: 'Complete', catalogSources: [CATALOG] }));
    const subs: KubeObject[] = [];
    for (const [name, pkg, csvName] of [['prometheus', 'prometheus', csvs[0]!], ['etcd', 'Bad Name', csvs[1]!]] as const) {
      const s = await create(olm.subscription({ namespace: ns, name, package: pkg, source: CATALOG, sourceNamespace: 'olm', channel: 'beta', approval: 'Automatic' }));
      subs.push(await c.setStatus(s, olm.subscriptionStatus({
        currentCSV: csvName,
        installedCSV: csvName,
        installPlan: { name: ip.metadata.name, namespace: ns, uid: ip.metadata.uid!, resourceVersion: ip.metadata.resourceVersion! },
        state: 'AtLatestKnown',
        installPlanGeneration: 1,
      })));
    }
    const out = await send(runtime([ownerrefRepair]), 'update', ip);
    expect(out.map((o) => o.status), JSON.stringify(out)).not.toContain('failed');
    const owners = ((await live(ip))?.metadata.ownerReferences ?? []).map((r) => r.name);
    expect(owners).toContain('prometheus');
  });

  describe('the production server (npm start)', () => {
    let srv: RunningServer;
    beforeAll(async () => {
      srv = await startServer({ KUBECONFIG: c.kubeconfig.server, LOG_LEVEL: 'warn' });
    });
    afterAll(async () => {
      await srv?.stop();
    });

    const refEvent = (data: Record<string, string>, verb = 'update') =>
      new CloudEvent({ specversion: '1.0', id: randomBytes(8).toString('hex'), source: 'https://10.96.0.1:443', type: `dev.knative.apiserver.ref.${verb}`, datacontenttype: 'application/json', data });

    it.each([
      ['Job (job-conflict)', { apiVersion: 'batch/v1', kind: 'Job', name: 'a'.repeat(63) }, 'update'],
      ['Subscription (job-conflict, ownerref-repair)', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', name: 'etcd' }, 'update'],
      ['InstallPlan (ownerref-repair)', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abcde' }, 'update'],
      ['Pod (catalog-reschedule)', { apiVersion: 'v1', kind: 'Pod', name: 'operatorhubio-catalog-x2v4z' }, 'update'],
      ['ClusterServiceVersion delete (finalizer-cleanup)', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4' }, 'delete'],
    ])('H5 a Reference-mode event about a namespaced %s WITHOUT a namespace is a 4xx naming the field, not a 500', async (_what, data, verb) => {
      const res = await post(srv.url, refEvent(data, verb));
      const body = await res.text();
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
    });

    it('H6 memory stays bounded: 160 valid, handled events each carrying a ~900 kB metadata.resourceVersion do not kill the server', async () => {
      const ghost = `ghost-${hex(8)}`;
      for (let i = 0; i < 160; i++) {
        const pod: KubeObject = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `p-${i}`, namespace: 'default', uid: randomBytes(16).toString('hex'), resourceVersion: `${i}${'9'.repeat(900_000)}`, labels: { 'olm.catalogSource': 'x' } },
          spec: { nodeName: ghost },
        };
        let res: Response;
        try {
          res = await post(srv.url, apiServerEvent('update', pod));
        } catch (e) {
          throw new Error(`server gone after ${i} events (exit ${srv.proc.exitCode} ${srv.proc.signalCode}): ${String(e)}\n${srv.output().slice(-1500)}`);
        }
        // decode now refuses such a resourceVersion outright (400 naming the field); either way the server lives
        expect([200, 400]).toContain(res.status);
        await res.text();
      }
      expect((await fetch(`${srv.url}/health/liveness`)).status).toBe(200);
    }, 240_000);
  });
});

describe('holes H14-H19 (each failed on main when written; closed since)', () => {
  it('H15 catalog-reschedule: a huge tolerationSeconds (user-set via the CatalogSource grpcPodConfig) does not turn the in-process re-check into a hot loop (setTimeout overflow)', async () => {
    const ns = await c.namespace('atk-loop');
    const since = new Date(Date.now() - 5 * MIN);
    const n = await create(olm.node({ name: `loop-${ns}`, ready: 'Unknown', since, taints: [olm.taintUnreachable(since)] }));
    const { pod } = await stuckCatalogPod(ns, n.metadata.name, (p) => {
      p.spec.tolerations = [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 9_999_999_999 }];
    });
    const rt = runtime([catalogReschedule]);
    const before = c.audit().filter((e) => e.objectRef?.resource === 'nodes' && e.objectRef.name === n.metadata.name).length;
    const out = await send(rt, 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['requeued']);
    await new Promise((r) => setTimeout(r, 3000));
    const reads = c.audit().filter((e) => e.objectRef?.resource === 'nodes' && e.objectRef.name === n.metadata.name).length - before;
    // Stop a hot loop for good: close() clears timers, but an in-flight re-check would schedule again;
    // with the pod gone the next check is a noop and schedules nothing.
    await c.admin.delete(refOf(pod), { uid: pod.metadata.uid!, gracePeriodSeconds: 0, dryRun: false });
    await new Promise((r) => setTimeout(r, 300));
    rt.engine.close();
    // One event = one check (a re-check is due in ~317 years). A hot loop makes hundreds.
    expect(reads, 'GETs of the node within 3 s of one event').toBeLessThanOrEqual(3);
  });

  it('H16 finalizer-cleanup: uninstall never deletes the CSV a LIVE Subscription of another package installed (status.installedCSV), even if that CSV carries the key', async () => {
    const ns = await c.namespace('atk-csv2');
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, ns);
    const otherCsv = 'other-operator.v1.0.0';
    const built = olm.csv({ namespace: ns, name: otherCsv, labels: { [key]: '' } });
    const theirs = await create(built);
    await c.setStatus(theirs, built.status);
    const sub = await create(olm.subscription({ namespace: ns, name: 'other-operator', package: 'other-operator', source: CATALOG, sourceNamespace: 'olm', channel: 'stable', approval: 'Automatic' }));
    await c.setStatus(sub, olm.subscriptionStatus({ currentCSV: otherCsv, installedCSV: otherCsv, state: 'AtLatestKnown' }));
    const op = await operatorFor(pkg, ns, [{ kind: 'ClusterServiceVersion', apiVersion: 'operators.coreos.com/v1alpha1', namespace: ns, name: otherCsv }]);
    await send(runtime([finalizerCleanup]), 'update', op);
    expect(await live(theirs), `CSV ${ns}/${otherCsv} installed by live Subscription other-operator`).toBeDefined();
    expect((await live(theirs))?.metadata.deletionTimestamp).toBeUndefined();
    expect(writesIn(ns).filter((e) => e.verb === 'delete')).toEqual([]);
  });

  it('H17 finalizer-cleanup autoUninstall: a long-Failed CSV in ANOTHER namespace that carries the key does not make the opt-in gate uninstall an operator whose own CSV is healthy', async () => {
    const [nsA, nsB] = [await c.namespace('atk-aua'), await c.namespace('atk-aub')];
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, nsA);
    const mineBuilt = olm.csv({ namespace: nsA, name: `${pkg}.v1.0.0`, labels: { [key]: '' } });
    const mine = await create(mineBuilt);
    await c.setStatus(mine, mineBuilt.status); // Succeeded
    const dep = await create(deployment(nsA, `${pkg}-controller`, { [key]: '' }));
    const foreignBuilt = olm.csv({ namespace: nsB, name: 'foreign.v1.0.0', labels: { [key]: '' }, phase: 'Failed', reason: 'InstallComponentFailed', at: new Date(Date.now() - 120 * MIN) });
    const foreign = await create(foreignBuilt);
    await c.setStatus(foreign, foreignBuilt.status);
    const op = await operatorFor(pkg, nsA, [
      { kind: 'ClusterServiceVersion', apiVersion: 'operators.coreos.com/v1alpha1', namespace: nsA, name: mine.metadata.name },
      { kind: 'Deployment', apiVersion: 'apps/v1', namespace: nsA, name: dep.metadata.name },
      { kind: 'ClusterServiceVersion', apiVersion: 'operators.coreos.com/v1alpha1', namespace: nsB, name: foreign.metadata.name },
    ], {});
    await send(runtime([finalizerCleanup], { OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }), 'update', op);
    await new Promise((r) => setTimeout(r, 1500));
    const liveMine = await live(mine);
    expect(liveMine, `healthy CSV ${nsA}/${mine.metadata.name}`).toBeDefined();
    expect(liveMine?.metadata.deletionTimestamp).toBeUndefined();
    expect(await live(dep), `Deployment ${nsA}/${dep.metadata.name}`).toBeDefined();
    expect((await live(op))?.metadata.annotations?.['olm-medic.io/uninstall']).toBeUndefined();
  });

  it('H19 finalizer-cleanup (red team 10): a ref in the Operator\'s status that gives a ClusterRole a namespace does not attribute it by that namespace: the ClusterRole of a LIVE CSV is kept, and so is the Operator (was: both deleted)', async () => {
    const ns = await c.namespace('atk-opn');
    const pkg = `pkg-${hex(6)}`;
    const key = olm.componentLabelKey(pkg, ns);
    // Another operator's live CSV in the uninstalled namespace, and its ClusterRole (olm.owner labels) carrying the key.
    const other = await create(olm.csv({ namespace: ns, name: `other-${hex(6)}.v1.0.0` }));
    const cr = olm.csvClusterRole({ csvName: other.metadata.name, csvNamespace: ns });
    cr.metadata.labels = { ...cr.metadata.labels, [key]: '' };
    const theirs = await create(cr);
    const op = await operatorFor(pkg, ns, [{ kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', name: theirs.metadata.name, namespace: ns }]);
    expect((op.status as { components: { refs: { namespace?: string }[] } }).components.refs[0]!.namespace).toBe(ns); // the apiserver keeps it
    const out = await send(runtime([finalizerCleanup]), 'update', op);
    expect(out[0]).toMatchObject({ status: 'refused', reason: expect.stringContaining('a namespace on a cluster-scoped kind') });
    expect(await live(theirs), `ClusterRole ${theirs.metadata.name} of live CSV ${ns}/${other.metadata.name}`).toBeDefined();
    expect(await live(op), 'the Operator object').toBeDefined();
    expect(c.audit().filter((e) => e.verb === 'delete' && [theirs.metadata.name, op.metadata.name].includes(e.objectRef?.name ?? ''))).toEqual([]);
  });

  describe('the production server (npm start): malformed shapes', () => {
    let srv: RunningServer;
    beforeAll(async () => {
      srv = await startServer({ KUBECONFIG: c.kubeconfig.server, LOG_LEVEL: 'warn' });
    });
    afterAll(async () => {
      await srv?.stop();
    });
    it.each([
      ['Job with metadata.ownerReferences {} (job-conflict targets)', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'a'.repeat(63), namespace: 'default', ownerReferences: {} } }],
      ['Job with metadata.ownerReferences [null]', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'b'.repeat(63), namespace: 'default', ownerReferences: [null] } }],
      ['Subscription with status.installPlanRef.name "Not Valid" (ownerref-repair targets -> observe)', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'etcd', namespace: 'default' }, status: { installPlanRef: { name: 'Not Valid', namespace: 'default' } } }],
      ['ClusterServiceVersion with metadata.finalizers 1 (finalizer-cleanup targets)', { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', metadata: { name: 'etcdoperator.v0.9.4', namespace: 'default', finalizers: 1 } }],
    ])('H14 a Resource-mode event whose object has a malformed field (%s) is answered 2xx or 4xx, not a 500 (unhandled TypeError)', async (_what, obj) => {
      const res = await post(srv.url, apiServerEvent('update', obj as unknown as KubeObject));
      const body = await res.text();
      expect(res.status, body).toBeGreaterThanOrEqual(200);
      expect(res.status, body).toBeLessThan(500);
    });
  });

  describe('the production server (npm start): load (its own server: a failure kills it)', () => {
    let srv: RunningServer;
    beforeAll(async () => {
      srv = await startServer({ KUBECONFIG: c.kubeconfig.server, LOG_LEVEL: 'warn' });
    });
    afterAll(async () => {
      await srv?.stop();
    });
    it('H18 memory stays bounded under 120 CONCURRENT valid ~900 kB events (no in-flight cap): the server survives', async () => {
      const ghost = `ghost-${hex(8)}`;
      const send1 = (i: number) => {
        const pod: KubeObject = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `c-${i}`, namespace: 'default', uid: randomBytes(16).toString('hex'), resourceVersion: String(i + 1), labels: { 'olm.catalogSource': 'x' }, annotations: { pad: 'x'.repeat(900_000) } },
          spec: { nodeName: ghost },
        };
        return post(srv.url, apiServerEvent('update', pod)).then((r) => r.status, (e: unknown) => `error: ${String(e)}`);
      };
      const codes = await Promise.all(Array.from({ length: 120 }, (_, i) => send1(i)));
      // Handled (200) or shed with a retryable answer (429/503) are both fine; a dead server or a 500 is not.
      const bad = codes.filter((x) => x !== 200 && x !== 429 && x !== 503);
      expect(bad, `${bad.length} of 120 failed; exit=${srv.proc.exitCode} ${srv.proc.signalCode}\n${srv.output().slice(-800)}`).toEqual([]);
      expect((await fetch(`${srv.url}/health/liveness`)).status).toBe(200);
    }, 120_000);
  });
});

// =============================================================================================
// Hypotheses that turned out SAFE: kept as regression tests (each fails if the guard goes).
// =============================================================================================

const deadNodeFor = async (ns: string, since = new Date(Date.now() - 60 * MIN)) =>
  create(olm.node({ name: `dead-${ns}`, ready: 'Unknown', since, taints: [olm.taintUnreachable(since)] }));

describe('safe', () => {
  it('S1 catalog-reschedule: a pod labelled olm.catalogSource=<a real catalog> but WITHOUT the controller ownerRef, on a node gone for 1 h, is never touched', async () => {
    const ns = await c.namespace('atk-s1');
    const n = await deadNodeFor(ns);
    const { pod } = await stuckCatalogPod(ns, n.metadata.name, (p) => delete p.metadata.ownerReferences);
    const out = await send(runtime([catalogReschedule], {}, { now: () => new Date() }), 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['noop']);
    expect((await live(pod))?.metadata.uid).toBe(pod.metadata.uid);
    expect(writesIn(ns)).toEqual([]);
  });

  it('S2 catalog-reschedule: a catalog pod that tolerates unreachable FOREVER (no tolerationSeconds) on a node NotReady for 1 h is never force-deleted', async () => {
    const ns = await c.namespace('atk-s2');
    const n = await deadNodeFor(ns);
    const { pod } = await stuckCatalogPod(ns, n.metadata.name, (p) => {
      p.spec.tolerations = [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }, { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }];
    });
    const out = await send(runtime([catalogReschedule], {}, { now: () => new Date() }), 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['noop']);
    expect((await live(pod))?.metadata.uid).toBe(pod.metadata.uid);
    expect(writesIn(ns)).toEqual([]);
  });

  it('S3 catalog-reschedule (control for H4): with a correct clock, a node that is gone gets the node-gone quarantine', async () => {
    const ns = await c.namespace('atk-s3');
    const { pod } = await stuckCatalogPod(ns, `ghost-${hex(8)}`);
    const out = await send(runtime([catalogReschedule]), 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['requeued']);
    expect((await live(pod))?.metadata.uid).toBe(pod.metadata.uid);
    expect(writesIn(ns)).toEqual([]);
  });

  it('S4 job-conflict: a SUSPENDED invisible unpack Job whose (old) startTime + activeDeadlineSeconds passed long ago is never deleted', async () => {
    const s = await legacyCompleteUnpack();
    // Real v0.26+ evidence in the namespace: a properly owned unpack Job carrying OLM's labels.
    const img2 = `quay.io/x/z@sha256:${hex(64)}`;
    const cm2 = await create(olm.unpackConfigMap({ namespace: s.cat, image: img2, catalogSourceName: CATALOG, catalogSourceUid: s.catsrc.metadata.uid!, managedLabel: true }));
    let labelled = await create(olm.unpackJob({ namespace: s.cat, image: img2, configMapUid: cm2.metadata.uid!, variant: 'current' }));
    labelled = await c.setStatus(labelled, olm.jobStatusComplete({ at: new Date(Date.now() - 60 * MIN) }));
    const image = `quay.io/x/y@sha256:${hex(64)}`;
    const cm = await create(olm.unpackConfigMap({ namespace: s.cat, image, catalogSourceName: CATALOG, catalogSourceUid: s.catsrc.metadata.uid!, managedLabel: true }));
    const jobObj = olm.unpackJob({ namespace: s.cat, image, configMapUid: cm.metadata.uid!, variant: 'no-ref-label', activeDeadlineSeconds: 600 });
    jobObj.spec.suspend = true;
    let suspended = await create(jobObj);
    suspended = await c.setStatus(suspended, { startTime: new Date(Date.now()).toISOString().replace(/\.\d+Z$/, 'Z') });
    // The Jobs start now on the apiserver's clock; olm-medic looks 120 min later (a runtime clock set
    // ahead: a backdated startTime would be bounded by the Job's creation, which the apiserver stamps).
    const later = { now: () => new Date(Date.now() + 120 * MIN) };
    const out = await send(runtime([jobConflict], {}, later), 'add', suspended);
    expect(out.map((o) => o.status), JSON.stringify(out)).toEqual(['noop']);
    expect((await live(suspended))?.metadata.uid).toBe(suspended.metadata.uid);
    expect(writesIn(s.cat)).toEqual([]);
    // Twin (shows the check can fail): the same job NOT suspended is past its deadline and is deleted.
    const image3 = `quay.io/x/w@sha256:${hex(64)}`;
    const cm3 = await create(olm.unpackConfigMap({ namespace: s.cat, image: image3, catalogSourceName: CATALOG, catalogSourceUid: s.catsrc.metadata.uid!, managedLabel: true }));
    let running = await create(olm.unpackJob({ namespace: s.cat, image: image3, configMapUid: cm3.metadata.uid!, variant: 'no-ref-label', activeDeadlineSeconds: 600 }));
    running = await c.setStatus(running, { startTime: new Date(Date.now()).toISOString().replace(/\.\d+Z$/, 'Z'), active: 1 });
    expect((await send(runtime([jobConflict], {}, later), 'add', running)).map((o) => o.status)).toEqual(['acted']);
  });

  it('S5 job-conflict: a hash-named Job with no ConfigMap owner (not OLM\'s) is untouched even when Failed', async () => {
    const s = await legacyCompleteUnpack();
    let j = await create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: hex(63), namespace: s.cat },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    j = await c.setStatus(j, olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: new Date(Date.now() - 60 * MIN) }));
    const out = await send(runtime([jobConflict]), 'update', j);
    expect(out.map((o) => o.status)).toEqual(['ignored']);
    expect((await live(j))?.metadata.uid).toBe(j.metadata.uid);
    expect(writesIn(s.cat)).toEqual([]);
  });

  it('S6 finalizer-cleanup orphan sweep: labelled leftovers of a "CSV" in a protected namespace, and ones with olm.owner.kind other than ClusterServiceVersion, are never deleted', async () => {
    const ns = await c.namespace('atk-s6');
    const ghost = `ghost-${hex(6)}.v1.0.0`;
    const inProtected = olm.csvClusterRole({ csvName: ghost, csvNamespace: 'kube-system', name: `atk-s6-prot-${ns}` });
    const otherKind = olm.csvClusterRole({ csvName: ghost, csvNamespace: ns, name: `atk-s6-kind-${ns}` });
    otherKind.metadata.labels['olm.owner.kind'] = 'Subscription';
    const a = await create(inProtected);
    const b = await create(otherKind);
    // Scoped sweeps (kube-system, where the protected one's CSV would live, and ns): other files' tests
    // share this control plane, and a cluster-wide sweep — even a dry-run one, which the audit log
    // records as writes — would act on their CSVs.
    const orphan = await create(olm.csvClusterRole({ csvName: ghost, csvNamespace: ns, name: `atk-s6-orphan-${ns}` }));
    const rt = runtime([finalizerCleanup], { OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
    for (const scope of ['kube-system', ns]) {
      await rt.engine.handle({ kind: 'sweep', namespace: scope, functions: ['finalizer-cleanup'], meta: { id: `sweep-${scope}`, source: 'test', type: 'io.olm-medic.sweep' } });
    }
    expect(await live(a)).toBeDefined();
    expect(await live(b)).toBeDefined();
    expect(c.audit().filter((e) => e.verb === 'delete' && [a.metadata.name, b.metadata.name].includes(e.objectRef?.name ?? ''))).toEqual([]);
    // The check can fail: the same sweeps do delete an ordinary orphan (a labelled leftover of a gone CSV).
    expect(await live(orphan)).toBeUndefined();
  });

  it('S7 finalizer-cleanup: a CSV delete event whose name carries selector syntax or whitespace is a 400 before any request (issue 8 #1)', async () => {
    for (const name of ['etcdoperator.v0.9.4,olm.owner.kind=ClusterServiceVersion', 'etcdoperator.v0.9.4 ', 'etcdoperator.v0.9.4\n']) {
      const ev = new CloudEvent({ specversion: '1.0', id: hex(8), source: 's', type: 'dev.knative.apiserver.ref.delete', datacontenttype: 'application/json', data: { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name, namespace: 'default' } });
      expect(() => decodeEvent(ev)).toThrow(/name/);
    }
  });
});
