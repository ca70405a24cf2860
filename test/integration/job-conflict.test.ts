/**
 * job-conflict on the real control plane (olm-facts §1).
 *
 * The story every test starts from: an operator was installed in namespace A weeks ago; the same
 * bundle is now being installed in namespace B and hangs, because the shared unpack Job (named by the
 * bundle-image hash, in the CatalogSource namespace) already exists and OLM cannot get past it.
 * Every object is built by the fixture builders, exactly as OLM writes it, with owner uids read back
 * from the apiserver. Events go in as ApiServerSource CloudEvents through decodeEvent + engine.handle.
 *
 * Each situation has twins in which exactly one safety condition fails: they assert that nothing
 * was touched (same uid and resourceVersion, no delete/patch by olm-medic in the audit log).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, fetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { loadKubeConfig } from '../../shared/kube/client.js';
import { collect } from '../../shared/kube/collect.js';
import { refOf, type KubeObject } from '../../shared/kube/types.js';
import type { Runtime } from '../../shared/wiring.js';
import * as olm from '../fixtures/olm-objects.js';
import { eventually, testCluster, type MedicEvent } from '../support/cluster.js';
import { apiServerEvent } from '../support/events.js';

const c = testCluster();

const CATALOG = 'operatorhubio-catalog';
const CATALOG_IMAGE = 'quay.io/operatorhubio/catalog:latest';
const PKG = 'etcd';
const CSV = 'etcdoperator.v0.9.4';
const NUDGE = 'olm-medic.io/nudged-at';

const minutesAgo = (m: number): Date => new Date(Date.now() - m * 60_000);
const asKube = (o: olm.Obj): KubeObject => o as KubeObject;
const create = (o: olm.Obj): Promise<KubeObject> => c.create(asKube(o));
const setStatus = (o: KubeObject, status: olm.Obj): Promise<KubeObject> => c.setStatus(o, status);
const live = (o: KubeObject): Promise<KubeObject | undefined> => c.get(refOf(o));
const cond = (o: KubeObject | undefined, type: string): Record<string, string> | undefined =>
  ((o?.status as { conditions?: Record<string, string>[] } | undefined)?.conditions ?? []).find((x) => x.type === type);

// ---------------------------------------------------------------------------------------------
// Runtimes and events
// ---------------------------------------------------------------------------------------------

const runtimes: Runtime[] = [];
afterEach(() => {
  // Requeue/defer plans schedule in-process timers; stop them.
  for (const rt of runtimes.splice(0)) rt.engine.close();
});
function runtime(env: Record<string, string> = {}, overrides: { now?: () => Date } = {}): Runtime {
  const rt = c.runtime([jobConflict], env, overrides);
  runtimes.push(rt);
  return rt;
}
const send = (rt: Runtime, verb: 'add' | 'update', obj: KubeObject) => rt.engine.handle(decodeEvent(apiServerEvent(verb, obj)));

// ---------------------------------------------------------------------------------------------
// Observations
// ---------------------------------------------------------------------------------------------

/** olm-medic's delete/patch requests in these namespaces (audit log). */
const writes = (...namespaces: string[]) =>
  c.audit().filter((e) => e.objectRef?.namespace && namespaces.includes(e.objectRef.namespace) && (e.verb === 'delete' || e.verb === 'patch'));
const writeSummary = (...namespaces: string[]) =>
  writes(...namespaces)
    .map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name} ${e.responseStatus?.code}`)
    .sort();

const eventSummary = (events: MedicEvent[]) => events.map((e) => [e.reason, e.regarding.kind, e.regarding.name, e.regarding.uid]).sort();

/** uid + resourceVersion of each object as it is now (undefined: gone). */
async function versions(objs: KubeObject[]): Promise<(string | undefined)[]> {
  return Promise.all(objs.map(async (o) => {
    const l = await live(o);
    return l ? `${l.kind}/${l.metadata.name} ${l.metadata.uid} ${l.metadata.resourceVersion}` : undefined;
  }));
}
const stamp = (objs: KubeObject[]) => objs.map((o) => `${o.kind}/${o.metadata.name} ${o.metadata.uid} ${o.metadata.resourceVersion}`);

/** Exactly OLM's call: Create the fresh unpack Job named <hash>. Dry-run, as admin. */
async function olmCreatesFreshJob(s: Scenario): Promise<'created' | 'AlreadyExists'> {
  try {
    await c.admin.create(asKube(olm.unpackJob({ namespace: s.cat, image: s.image, configMapUid: s.cm.metadata.uid! })), { dryRun: true });
    return 'created';
  } catch (e) {
    if ((e as { alreadyExists?: boolean }).alreadyExists) return 'AlreadyExists';
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// The world OLM leaves behind
// ---------------------------------------------------------------------------------------------

type JobCondition = { kind: 'failed'; at: Date } | { kind: 'complete'; at: Date } | { kind: 'active'; startedAt: Date } | { kind: 'none' };

interface ScenarioOptions {
  job: JobCondition;
  /** Which OLM generation created the Job (labels). */
  variant?: olm.UnpackJobVariant;
  /** The unpack ConfigMap carries olm.managed=true (v0.26+). Default true. */
  managedConfigMap?: boolean;
  /** The ConfigMap has an owner CatalogSource (as OLM writes it). Default true. */
  configMapOwnedByCatalog?: boolean;
  /** The Job has its ConfigMap ownerReference. Default true. */
  jobOwnedByConfigMap?: boolean;
  ttlSecondsAfterFinished?: number;
  /** Conditions OLM wrote on the new Subscription in B. Defaults follow the job state (§1.6). */
  subBConditions?: olm.Obj[];
  ogAAnnotations?: Record<string, string>;
  ogBAnnotations?: Record<string, string>;
  /** A serving catalog pod (olm.managed=true) exists in the catalog namespace. */
  catalogPod?: boolean;
}

interface Scenario {
  cat: string;
  nsA: string;
  nsB: string;
  image: string;
  hash: string;
  catsrc: KubeObject;
  cm: KubeObject;
  job: KubeObject;
  role: KubeObject;
  roleBinding: KubeObject;
  subA: KubeObject;
  ipA: KubeObject;
  subB: KubeObject;
  /** Everything above, for "unchanged" checks. */
  all: KubeObject[];
}

async function scenario(o: ScenarioOptions): Promise<Scenario> {
  const [cat, nsA, nsB] = [await c.namespace('cat'), await c.namespace('ns-a'), await c.namespace('ns-b')];
  // A digest-pinned bundle image, unique per test, so the hash (the Job/ConfigMap name) is unique too.
  const image = `quay.io/operatorhubio/etcd@sha256:${randomBytes(32).toString('hex')}`;
  const hash = olm.unpackHash(image);

  // The catalog namespace: CatalogSource, unpack ConfigMap, Job, Role, RoleBinding.
  let catsrc = await create(olm.catalogSource({ namespace: cat, name: CATALOG, image: CATALOG_IMAGE, displayName: 'Community Operators', publisher: 'OperatorHub.io' }));
  catsrc = await setStatus(catsrc, olm.catalogSourceStatus({ namespace: cat, name: CATALOG, lastObservedState: 'READY' }));
  const catUid = catsrc.metadata.uid!;
  if (o.catalogPod) {
    await create(olm.catalogPod({ namespace: cat, catalogSourceName: CATALOG, catalogSourceUid: catUid, nodeName: 'worker-1', image: CATALOG_IMAGE }));
  }
  const extracted = o.job.kind === 'complete';
  const cmObj = olm.unpackConfigMap({
    namespace: cat,
    image,
    catalogSourceName: CATALOG,
    catalogSourceUid: catUid,
    managedLabel: o.managedConfigMap ?? true,
    ...(extracted ? { extractedPackage: PKG } : {}),
  });
  if (o.configMapOwnedByCatalog === false) delete cmObj.metadata.ownerReferences;
  const cm = await create(cmObj);
  const cmUid = cm.metadata.uid!;
  const jobObj = olm.unpackJob({
    namespace: cat,
    image,
    configMapUid: cmUid,
    variant: o.variant ?? 'current',
    ...(o.ttlSecondsAfterFinished !== undefined ? { ttlSecondsAfterFinished: o.ttlSecondsAfterFinished } : {}),
  });
  if (o.jobOwnedByConfigMap === false) delete jobObj.metadata.ownerReferences;
  let job = await create(jobObj);
  if (o.job.kind === 'failed') job = await setStatus(job, olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: o.job.at }));
  if (o.job.kind === 'complete') job = await setStatus(job, olm.jobStatusComplete({ at: o.job.at }));
  if (o.job.kind === 'active') job = await setStatus(job, olm.jobStatusActive({ startedAt: o.job.startedAt }));
  const role = await create(olm.unpackRole({ namespace: cat, image, configMapUid: cmUid }));
  const roleBinding = await create(olm.unpackRoleBinding({ namespace: cat, image, configMapUid: cmUid }));

  const health = () => ({
    catalogHealth: [olm.catalogHealthEntry({ namespace: cat, name: CATALOG, uid: catUid })],
  });

  // Namespace A: installed weeks ago. Its InstallPlan is Complete (terminal) and still references the ConfigMap.
  await create(olm.operatorGroup({ namespace: nsA, name: 'og-a', targetNamespaces: [nsA], annotations: o.ogAAnnotations }));
  const subAObj = await create(olm.subscription({ namespace: nsA, name: PKG, package: PKG, source: CATALOG, sourceNamespace: cat, channel: 'singlenamespace-alpha' }));
  let ipA = await create(olm.installPlan({ namespace: nsA, csvNames: [CSV], generation: 1, ownerSubs: [{ name: PKG, uid: subAObj.metadata.uid! }], labels: olm.componentLabels(PKG, nsA) }));
  ipA = await setStatus(ipA, olm.installPlanStatus({
    phase: 'Complete',
    catalogSources: [CATALOG],
    plan: olm.unpackedBundleSteps({ csvName: CSV, image, catalogSourceName: CATALOG, catalogSourceNamespace: cat, status: 'Created' }),
    startTime: minutesAgo(21 * 24 * 60),
  }));
  const subA = await setStatus(subAObj, olm.subscriptionStatus({
    currentCSV: CSV,
    installedCSV: CSV,
    installPlan: { name: ipA.metadata.name, namespace: nsA, uid: ipA.metadata.uid! },
    state: 'AtLatestKnown',
    installPlanGeneration: 1,
    conditions: [olm.catalogSourcesHealthyCondition()],
    ...health(),
  }));

  // Namespace B: the new install, stuck before any InstallPlan exists (v0.25+).
  await create(olm.operatorGroup({ namespace: nsB, name: 'og-b', targetNamespaces: [nsB], annotations: o.ogBAnnotations }));
  const subBObj = await create(olm.subscription({ namespace: nsB, name: PKG, package: PKG, source: CATALOG, sourceNamespace: cat, channel: 'singlenamespace-alpha' }));
  const defaultConditions =
    o.job.kind === 'failed'
      ? [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded' }), olm.catalogSourcesHealthyCondition()]
      : o.job.kind === 'active'
        ? [olm.bundleUnpackingCondition(), olm.catalogSourcesHealthyCondition()]
        : [olm.catalogSourcesHealthyCondition()];
  const subB = await setStatus(subBObj, olm.subscriptionStatus({ conditions: o.subBConditions ?? defaultConditions, ...health() }));

  const s = { cat, nsA, nsB, image, hash, catsrc, cm, job, role, roleBinding, subA, ipA, subB };
  return { ...s, all: [catsrc, cm, job, role, roleBinding, subA, ipA, subB] };
}

/** The Subscription carries a nudge stamped between `since` and now (olm-medic's clock, `ahead` ms past the host's). */
function expectNudged(sub: KubeObject | undefined, since: number, ahead = 0): void {
  const at = sub?.metadata.annotations?.[NUDGE];
  expect(at, 'olm-medic.io/nudged-at on the stuck Subscription').toBeDefined();
  expect(Date.parse(at!)).toBeGreaterThanOrEqual(since + ahead - 1000);
  expect(Date.parse(at!)).toBeLessThanOrEqual(Date.now() + ahead + 1000);
}

// ---------------------------------------------------------------------------------------------
// Holding the garbage collector back (situation 3 only)
// ---------------------------------------------------------------------------------------------

/**
 * A Job whose owner ConfigMap is gone or was recreated is removed by the garbage collector within
 * ~100 ms here; the stuck state persists only while the GC is not keeping up (discovery trouble,
 * backlog). To hold that state, a ValidatingAdmissionPolicy (in-process CEL, no webhook) denies Job
 * deletes by the kube-controller-manager in one namespace. olm-medic's own deletes are unaffected.
 * Returns the release function.
 */
async function holdJobGarbageCollection(ns: string): Promise<() => Promise<void>> {
  const kc = loadKubeConfig(c.kubeconfig.admin);
  const cluster = kc.getCurrentCluster()!;
  const token = kc.getCurrentUser()!.token!;
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64') : readFileSync(cluster.caFile!);
  const dispatcher = new Agent({ connect: { ca } });
  const http = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${cluster.server}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      dispatcher,
    });
    return { status: r.status, text: await r.text() };
  };
  const name = `test-hold-gc-${ns}`;
  const base = '/apis/admissionregistration.k8s.io/v1';
  const p = await http('POST', `${base}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['batch'], apiVersions: ['v1'], operations: ['DELETE'], resources: ['jobs'] }] },
      validations: [{ expression: "request.userInfo.username != 'system:kube-controller-manager'", message: 'test: garbage collector held back' }],
    },
  });
  expect(p.status, p.text).toBe(201);
  const b = await http('POST', `${base}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } } },
  });
  expect(b.status, b.text).toBe(201);
  // Wait until the policy is in force: a dry-run delete as the controller manager is denied.
  await create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'gc-hold-probe', namespace: ns },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  });
  await eventually(async () => {
    const r = await http('DELETE', `/apis/batch/v1/namespaces/${ns}/jobs/gc-hold-probe?dryRun=All`, undefined, {
      'Impersonate-User': 'system:kube-controller-manager',
      'Impersonate-Group': 'system:masters',
    });
    return r.status >= 400 && r.text.includes('garbage collector held back');
  }, 'the GC hold policy to take effect');
  return async () => {
    await http('DELETE', `${base}/validatingadmissionpolicybindings/${name}`);
    await http('DELETE', `${base}/validatingadmissionpolicies/${name}`);
  };
}

// ---------------------------------------------------------------------------------------------
// Situations
// ---------------------------------------------------------------------------------------------

describe('job-conflict: the shared unpack Job blocks a second install of the same bundle', () => {
  it('(1) Failed job: deletes the Job and its empty ConfigMap (GC takes the unpack RBAC), nudges only the stuck Subscription in B', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });

    // Stuck: B carries the v0.25–v0.42 BundleUnpackFailed condition and no InstallPlan; the failed Job holds the name.
    expect(cond(s.subB, 'BundleUnpackFailed')).toMatchObject({
      status: 'True',
      reason: 'BundleUnpackFailed',
      message: 'bundle unpacking failed. Reason: DeadlineExceeded, and Message: Job was active longer than specified deadline',
    });
    expect((s.subB.status as { installPlanRef?: unknown }).installPlanRef).toBeUndefined();
    expect(cond(s.job, 'Failed')).toMatchObject({ status: 'True', reason: 'DeadlineExceeded' });
    expect(await olmCreatesFreshJob(s)).toBe('AlreadyExists');

    const t0 = Date.now();
    const out = await send(runtime(), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ function: 'job-conflict', status: 'acted' })]);
    expect(out[0]!.actions!.map((a) => [a.verb, a.reason, a.result])).toEqual([
      ['delete', 'UnpackJobDeleted', 'done'],
      ['delete', 'UnpackConfigMapDeleted', 'done'],
      ['patch', 'SubscriptionNudged', 'done'],
    ]);

    // Healed: the Job and the empty ConfigMap are gone; B is nudged; A and its Complete InstallPlan are untouched.
    expect(await live(s.job)).toBeUndefined();
    expect(await live(s.cm)).toBeUndefined();
    expectNudged(await live(s.subB), t0);
    expect(await versions([s.subA, s.ipA, s.catsrc])).toEqual(stamp([s.subA, s.ipA, s.catsrc]));
    expect(await olmCreatesFreshJob(s)).toBe('created');
    expect(writeSummary(s.cat, s.nsA, s.nsB)).toEqual([
      `delete configmaps/${s.hash} 200`,
      `delete jobs/${s.hash} 200`,
      `patch subscriptions/${PKG} 200`,
    ]);

    // Events: about the Job and ConfigMap in the catalog namespace, about the Subscription in B, none in A.
    const catEvents = await c.medicEvents(s.cat);
    expect(eventSummary(catEvents)).toEqual([
      ['UnpackConfigMapDeleted', 'ConfigMap', s.hash, s.cm.metadata.uid],
      ['UnpackJobDeleted', 'Job', s.hash, s.job.metadata.uid],
    ]);
    const jobEvent = catEvents.find((e) => e.reason === 'UnpackJobDeleted')!;
    expect(jobEvent).toMatchObject({ type: 'Normal', action: 'Delete', reportingController: 'olm-medic.io/job-conflict' });
    expect(jobEvent.note).toContain('DeadlineExceeded');
    expect(eventSummary(await c.medicEvents(s.nsB))).toEqual([['SubscriptionNudged', 'Subscription', PKG, s.subB.metadata.uid]]);
    expect(await c.medicEvents(s.nsA)).toEqual([]);

    // The ConfigMap owned the unpack Role and RoleBinding: kube-controller-manager's GC removes them.
    await eventually(async () => !(await live(s.role)) && !(await live(s.roleBinding)), 'GC to remove the unpack Role and RoleBinding', 30_000);
  });

  it('(2a) Job invisible to OLM (no olm.managed / bundle-unpack-ref; Complete), no Subscription condition: deletes the Job, keeps the ConfigMap', async () => {
    // The labelled registry pod is this OLM's (v0.26+) evidence that it labels, and filters on, its Jobs.
    const s = await scenario({ job: { kind: 'complete', at: minutesAgo(21 * 24 * 60) }, variant: 'no-ref-label', catalogPod: true });

    // Stuck: OLM's label-filtered cache cannot see the Job, so its Create fails with AlreadyExists (#3210),
    // and no condition is written: B simply has no InstallPlan and no currentCSV.
    const managedJobs = await collect(c.admin.list('batch/v1', 'Job', { namespace: s.cat, labelSelector: 'olm.managed=true' }));
    expect(managedJobs.map((j) => j.metadata.name)).not.toContain(s.hash);
    expect(await olmCreatesFreshJob(s)).toBe('AlreadyExists');
    const st = s.subB.status as { installPlanRef?: unknown; currentCSV?: string };
    expect([st.installPlanRef, st.currentCSV, cond(s.subB, 'BundleUnpackFailed'), cond(s.subB, 'BundleUnpacking')]).toEqual([undefined, undefined, undefined, undefined]);

    const t0 = Date.now();
    const out = await send(runtime(), 'add', s.job);
    expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);

    expect(await live(s.job)).toBeUndefined();
    expect(await versions([s.cm, s.role, s.roleBinding, s.subA, s.ipA])).toEqual(stamp([s.cm, s.role, s.roleBinding, s.subA, s.ipA]));
    expectNudged(await live(s.subB), t0);
    expect(await olmCreatesFreshJob(s)).toBe('created');
    expect(writeSummary(s.cat, s.nsA, s.nsB)).toEqual([`delete jobs/${s.hash} 200`, `patch subscriptions/${PKG} 200`]);

    const [ev, ...more] = await c.medicEvents(s.cat);
    expect(more).toEqual([]);
    expect(ev).toMatchObject({ reason: 'UnpackJobDeleted', regarding: { kind: 'Job', name: s.hash, uid: s.job.metadata.uid } });
    expect(ev!.note).toContain('lacks olm.managed=true and operatorframework.io/bundle-unpack-ref');
    expect(eventSummary(await c.medicEvents(s.nsB))).toEqual([['SubscriptionNudged', 'Subscription', PKG, s.subB.metadata.uid]]);
    expect(await c.medicEvents(s.nsA)).toEqual([]);
  });

  it('(2b) unlabelled ConfigMap too (pre-v0.26 leftovers), but a labelled catalog pod shows this OLM filters on olm.managed: deletes the Job', async () => {
    const s = await scenario({ job: { kind: 'complete', at: minutesAgo(21 * 24 * 60) }, variant: 'no-managed-label', managedConfigMap: false, catalogPod: true });
    expect(s.cm.metadata.labels?.['olm.managed']).toBeUndefined();

    const out = await send(runtime(), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
    expect(await live(s.job)).toBeUndefined();
    expect(await versions([s.cm])).toEqual(stamp([s.cm]));
    expect(eventSummary(await c.medicEvents(s.cat))).toEqual([['UnpackJobDeleted', 'Job', s.hash, s.job.metadata.uid]]);
    expect((await c.medicEvents(s.cat))[0]!.note).toContain('lacks olm.managed=true');
  });

  it('(3a) owner ConfigMap gone (GC behind): deletes the Job it orphaned', async () => {
    const s = await scenario({ job: { kind: 'complete', at: minutesAgo(60) } });
    const release = await holdJobGarbageCollection(s.cat);
    try {
      await c.admin.delete(refOf(s.cm), { uid: s.cm.metadata.uid!, dryRun: false });
      // Stuck: the ConfigMap is gone, the Job it owned still holds the name.
      await eventually(async () => !(await live(s.cm)), 'the ConfigMap to be gone');
      const job = await live(s.job);
      expect(job?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ConfigMap', name: s.hash, uid: s.cm.metadata.uid });
      expect(await olmCreatesFreshJob(s)).toBe('AlreadyExists');

      const out = await send(runtime(), 'update', job!);
      expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
      expect(await live(s.job)).toBeUndefined();
      const [ev, ...more] = await c.medicEvents(s.cat);
      expect(more).toEqual([]);
      expect(ev).toMatchObject({ reason: 'UnpackJobDeleted', regarding: { kind: 'Job', uid: s.job.metadata.uid } });
      expect(ev!.note).toContain(`its owner ConfigMap ${s.hash} is gone`);
      expect(eventSummary(await c.medicEvents(s.nsB))).toEqual([['SubscriptionNudged', 'Subscription', PKG, s.subB.metadata.uid]]);
    } finally {
      await release();
    }
  });

  it('(3b) owner ConfigMap recreated (uid differs): deletes the Job, never the new ConfigMap', async () => {
    const s = await scenario({ job: { kind: 'complete', at: minutesAgo(60) } });
    const release = await holdJobGarbageCollection(s.cat);
    try {
      await c.admin.delete(refOf(s.cm), { uid: s.cm.metadata.uid!, dryRun: false });
      await eventually(async () => !(await live(s.cm)), 'the old ConfigMap to be gone');
      const cm2 = await create(olm.unpackConfigMap({ namespace: s.cat, image: s.image, catalogSourceName: CATALOG, catalogSourceUid: s.catsrc.metadata.uid! }));
      expect(cm2.metadata.uid).not.toBe(s.cm.metadata.uid);

      const out = await send(runtime(), 'update', (await live(s.job))!);
      expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
      expect(await live(s.job)).toBeUndefined();
      expect(await versions([cm2])).toEqual(stamp([cm2]));
      const [ev] = await c.medicEvents(s.cat);
      expect(ev!.note).toContain(`was recreated (uid ${cm2.metadata.uid} != ${s.cm.metadata.uid})`);
    } finally {
      await release();
    }
  });

  it('(3c) Failed job whose owner ConfigMap was recreated: the new, still empty ConfigMap is kept (it belongs to the next unpack)', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    const release = await holdJobGarbageCollection(s.cat);
    try {
      await c.admin.delete(refOf(s.cm), { uid: s.cm.metadata.uid!, dryRun: false });
      await eventually(async () => !(await live(s.cm)), 'the old ConfigMap to be gone');
      const cm2 = await create(olm.unpackConfigMap({ namespace: s.cat, image: s.image, catalogSourceName: CATALOG, catalogSourceUid: s.catsrc.metadata.uid! }));

      const out = await send(runtime(), 'update', (await live(s.job))!);
      expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
      expect(await live(s.job)).toBeUndefined();
      expect(await versions([cm2])).toEqual(stamp([cm2]));
      expect(writeSummary(s.cat)).toEqual([`delete jobs/${s.hash} 200`]);
    } finally {
      await release();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Twins: exactly one safety condition fails, nothing is touched
// ---------------------------------------------------------------------------------------------

describe('job-conflict: a lost nudge', () => {
  it('the Job was removed but the stuck Subscription never nudged (olm-medic stopped in between, or someone else removed it): the next sweep of its namespace nudges it once; the sweep after that writes nothing', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    // Gone without a nudge: no Job is left to bring an event about B.
    await c.admin.delete(refOf(s.job), { uid: s.job.metadata.uid!, dryRun: false, propagationPolicy: 'Background' });
    await c.admin.delete(refOf(s.cm), { uid: s.cm.metadata.uid!, dryRun: false, propagationPolicy: 'Background' });
    const sweep = (rt: Runtime) => rt.engine.handle({ kind: 'sweep', namespace: s.nsB, functions: ['job-conflict'], meta: { id: `sweep-${s.nsB}`, source: 'test', type: 'io.olm-medic.sweep' } });
    const t0 = Date.now();
    const out = await sweep(runtime());
    expect(out.map((o) => [o.target, o.status])).toEqual([[`Subscription/${s.nsB}/${PKG}`, 'acted']]);
    expectNudged(await live(s.subB), t0);
    expect(eventSummary(await c.medicEvents(s.nsB))).toEqual([['SubscriptionNudged', 'Subscription', PKG, s.subB.metadata.uid]]);
    // Nudged since the failure: the next sweep does not even look at it, and A was never a candidate.
    expect((await sweep(runtime())).map((o) => o.status)).toEqual(['noop']);
    expect(writeSummary(s.cat, s.nsA, s.nsB)).toEqual([`patch subscriptions/${PKG} 200`]);
  });
});

describe('job-conflict twins: one safety condition fails', () => {
  async function expectUntouched(s: Scenario): Promise<void> {
    expect(await versions(s.all)).toEqual(stamp(s.all));
    expect(writes(s.cat, s.nsA, s.nsB)).toEqual([]);
  }

  it('an active invisible job within its deadline (active=1, startTime now) is never deleted: requeued past the deadline', async () => {
    const s = await scenario({ job: { kind: 'active', startedAt: new Date() }, variant: 'no-managed-label', subBConditions: [olm.catalogSourcesHealthyCondition()] });
    expect((s.job.status as { active?: number }).active).toBe(1);
    const rt = runtime();
    for (const out of [await send(rt, 'update', s.job), await send(rt, 'update', s.subB)]) {
      expect(out).toEqual([expect.objectContaining({ status: 'requeued' })]);
      // activeDeadlineSeconds 600 + margin 60, counted from startTime.
      expect(out[0]!.requeueAfterSeconds).toBeGreaterThan(600);
      expect(out[0]!.requeueAfterSeconds).toBeLessThanOrEqual(660);
    }
    await expectUntouched(s);
    expect(await c.medicEvents(s.cat)).toEqual([]);
    expect(await c.medicEvents(s.nsB)).toEqual([]);
  });

  it('a Complete job that OLM can see (labels present) is left alone', async () => {
    const s = await scenario({ job: { kind: 'complete', at: minutesAgo(21 * 24 * 60) } });
    const rt = runtime();
    expect(await send(rt, 'add', s.job)).toEqual([expect.objectContaining({ status: 'noop' })]);
    expect(await send(rt, 'update', s.subB)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await expectUntouched(s);
    expect(await c.medicEvents(s.cat)).toEqual([]);
  });

  it('an unlabelled Complete job where this OLM does not label objects (unlabelled ConfigMap, no labelled catalog pod) is visible to OLM: left alone', async () => {
    const s = await scenario({ job: { kind: 'complete', at: minutesAgo(21 * 24 * 60) }, variant: 'no-ref-label', managedConfigMap: false });
    expect(await send(runtime(), 'add', s.job)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await expectUntouched(s);
  });

  it('a Failed job when the stuck namespace\'s single OperatorGroup sets bundle-unpack-min-retry-interval, interval not yet passed: deferred to OLM (Event DeferredToOlm)', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(5) }, ogBAnnotations: { [olm.UNPACK_RETRY_ANNOTATION]: '30m' } });
    const out = await send(runtime(), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ status: 'deferred' })]);
    await expectUntouched(s);
    const events = await c.medicEvents(s.cat);
    expect(events.map((e) => [e.reason, e.type, e.action, e.regarding.kind, e.regarding.uid])).toEqual([['DeferredToOlm', 'Normal', 'Defer', 'Job', s.job.metadata.uid]]);
    expect(events[0]!.note).toContain(s.nsB);
  });

  it('... interval passed: OLM would retry only at its next resync (up to ~18 min), so the stuck Subscription is nudged now and the Job is left to OLM (once)', async () => {
    // The Job fails now on the apiserver's clock and olm-medic looks 50 min later (a runtime clock set
    // ahead: a backdated failure would be bounded by the Job's creation and status write).
    const s = await scenario({ job: { kind: 'failed', at: new Date() }, ogBAnnotations: { [olm.UNPACK_RETRY_ANNOTATION]: '10m' } });
    const ahead = 50 * 60_000;
    const later = { now: () => new Date(Date.now() + ahead) };
    const t0 = Date.now();
    const out = await send(runtime({}, later), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
    expect(await live(s.job)).toBeDefined();
    expectNudged(await live(s.subB), t0, ahead);
    expect(writeSummary(s.cat, s.nsA, s.nsB)).toEqual([`patch subscriptions/${PKG} 200`]);
    // nudged since the failure: a second event changes nothing
    expect((await send(runtime({}, later), 'update', (await live(s.subB))!)).map((o) => o.status)).toEqual(['noop']);
  });

  it('a retry interval on a namespace that is not waiting for the bundle (A) does not make OLM retry for B: acts', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) }, ogAAnnotations: { [olm.UNPACK_RETRY_ANNOTATION]: '10m' } });
    const out = await send(runtime(), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
    expect(await live(s.job)).toBeUndefined();
  });

  it('a Failed job with ttlSecondsAfterFinished=300 that finished just now: deferred to the TTL controller, re-checked after TTL + margin', async () => {
    const s = await scenario({ job: { kind: 'failed', at: new Date() }, ttlSecondsAfterFinished: 300 });
    const out = await send(runtime(), 'update', s.job);
    expect(out).toEqual([expect.objectContaining({ status: 'deferred' })]);
    expect(out[0]!.requeueAfterSeconds).toBeGreaterThan(300);
    expect(out[0]!.requeueAfterSeconds).toBeLessThanOrEqual(361);
    await expectUntouched(s);
    expect((await c.medicEvents(s.cat)).map((e) => e.reason)).toEqual(['DeferredToOlm']);
  });

  it('a Failed job whose ConfigMap an Installing InstallPlan still references: Job deleted, ConfigMap kept', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    let ip = await create(olm.installPlan({ namespace: s.nsA, csvNames: [CSV], generation: 2, ownerSubs: [{ name: PKG, uid: s.subA.metadata.uid! }] }));
    ip = await setStatus(ip, olm.installPlanStatus({
      phase: 'Installing',
      catalogSources: [CATALOG],
      plan: olm.unpackedBundleSteps({ csvName: CSV, image: s.image, catalogSourceName: CATALOG, catalogSourceNamespace: s.cat }),
    }));
    const out = await send(runtime(), 'update', s.job);
    expect(out).toEqual([expect.objectContaining({ status: 'acted' })]);
    expect(await live(s.job)).toBeUndefined();
    expect(await versions([s.cm, ip])).toEqual(stamp([s.cm, ip]));
    expect(writeSummary(s.cat, s.nsA, s.nsB)).toEqual([`delete jobs/${s.hash} 200`, `patch subscriptions/${PKG} 200`]);
    expect(eventSummary(await c.medicEvents(s.cat))).toEqual([['UnpackJobDeleted', 'Job', s.hash, s.job.metadata.uid]]);
  });

  it('a running retry job of the same ConfigMap is never deleted, not even through the ConfigMap cascade', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    let retry = await create(olm.unpackJob({ namespace: s.cat, image: s.image, configMapUid: s.cm.metadata.uid!, name: olm.unpackRetryJobName(s.image, 'xk2vb') }));
    retry = await setStatus(retry, olm.jobStatusActive({ startedAt: new Date() }));
    // Through the failed Job's event (observe sees one Job) and through the Subscription's (observe lists them all).
    const rt = runtime();
    expect(await send(rt, 'update', s.job)).toEqual([expect.objectContaining({ status: 'acted' })]);
    expect(await send(rt, 'update', (await live(s.subB))!)).toEqual([expect.objectContaining({ status: 'requeued' })]);
    expect(await live(s.job)).toBeUndefined();
    expect(await versions([s.cm, retry])).toEqual(stamp([s.cm, retry]));
    expect(writeSummary(s.cat)).toEqual([`delete jobs/${s.hash} 200`]);
  });

  it('a job with an unpack-looking name but no ConfigMap owner is not OLM\'s: untouched', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) }, jobOwnedByConfigMap: false });
    const rt = runtime();
    expect(await send(rt, 'update', s.job)).toEqual([expect.objectContaining({ status: 'ignored' })]);
    expect(await send(rt, 'update', s.subB)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await expectUntouched(s);
    expect(await c.medicEvents(s.cat)).toEqual([]);
  });

  it('a job whose owner ConfigMap is not owned by a CatalogSource is not OLM\'s: untouched', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) }, configMapOwnedByCatalog: false });
    const rt = runtime();
    expect(await send(rt, 'update', s.job)).toEqual([expect.objectContaining({ status: 'noop' })]);
    expect(await send(rt, 'update', s.subB)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await expectUntouched(s);
    expect(await c.medicEvents(s.cat)).toEqual([]);
  });

  it('the catalog namespace is protected (PROTECTED_NAMESPACES): refused with a ProtectedNamespace Warning', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    const out = await send(runtime({ PROTECTED_NAMESPACES: `kube-system,${s.cat}` }), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ status: 'refused' })]);
    await expectUntouched(s);
    const events = await c.medicEvents(s.cat);
    expect(events.map((e) => [e.reason, e.type, e.action, e.regarding.kind, e.regarding.uid])).toEqual([['ProtectedNamespace', 'Warning', 'Refuse', 'Job', s.job.metadata.uid]]);
    expect(await c.medicEvents(s.nsB)).toEqual([]);
  });

  it('dry-run: every write is sent with dryRun=All, nothing changes, the Events say what would have happened', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    const out = await send(runtime({ DRY_RUN: 'true' }), 'update', s.subB);
    expect(out).toEqual([expect.objectContaining({ status: 'dry-run' })]);
    expect(await versions(s.all)).toEqual(stamp(s.all));
    const w = writes(s.cat, s.nsA, s.nsB);
    expect(w.map((e) => `${e.verb} ${e.objectRef?.resource}`).sort()).toEqual(['delete configmaps', 'delete jobs', 'patch subscriptions']);
    for (const e of w) expect(e.requestURI).toContain('dryRun=All');
    const events = [...(await c.medicEvents(s.cat)), ...(await c.medicEvents(s.nsB))];
    expect(events.map((e) => e.reason).sort()).toEqual(['SubscriptionNudged', 'UnpackConfigMapDeleted', 'UnpackJobDeleted']);
    for (const e of events) expect(e.note).toMatch(/^\[dry-run\] would have: /);
  });
});

describe('job-conflict: duplicate, reordered and concurrent events converge', () => {
  it('the same update three times, then older events after newer ones: one delete per object, one nudge, one Event each', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    const rt = runtime();
    const outs = [];
    for (let i = 0; i < 3; i++) outs.push(await send(rt, 'update', s.job));
    expect(outs.map((o) => o.map((x) => x.status))).toEqual([['acted'], ['ignored'], ['ignored']]);

    // Older events arrive late: the Job's add (before it failed) and B as first created (no status).
    const jobAsCreated = { ...s.job, metadata: { ...s.job.metadata, resourceVersion: String(Number(s.job.metadata.resourceVersion) - 1) }, status: {} };
    expect(await send(rt, 'add', jobAsCreated)).toEqual([expect.objectContaining({ status: 'gone' })]);
    const subBAsCreated = { ...s.subB, status: undefined, metadata: { ...s.subB.metadata, resourceVersion: String(Number(s.subB.metadata.resourceVersion) - 1) } };
    expect(await send(rt, 'add', subBAsCreated)).toEqual([expect.objectContaining({ status: 'noop' })]);
    // olm-medic's own nudge comes back as an update: no loop.
    expect(await send(rt, 'update', (await live(s.subB))!)).toEqual([expect.objectContaining({ status: 'noop' })]);

    expect(writeSummary(s.cat, s.nsA, s.nsB)).toEqual([
      `delete configmaps/${s.hash} 200`,
      `delete jobs/${s.hash} 200`,
      `patch subscriptions/${PKG} 200`,
    ]);
    expect((await c.medicEvents(s.cat)).map((e) => e.reason).sort()).toEqual(['UnpackConfigMapDeleted', 'UnpackJobDeleted']);
    expect((await c.medicEvents(s.nsB)).map((e) => e.reason)).toEqual(['SubscriptionNudged']);
  });

  it('two replicas handling the Job event and the Subscription event at the same time: each object is written successfully once', async () => {
    const s = await scenario({ job: { kind: 'failed', at: minutesAgo(50) } });
    const [o1, o2] = await Promise.all([send(runtime(), 'update', s.job), send(runtime(), 'update', s.subB)]);
    const statuses = [...o1, ...o2].map((o) => o.status);
    expect(statuses).toContain('acted');
    for (const st of statuses) expect(['acted', 'noop', 'gone']).toContain(st);

    expect(await live(s.job)).toBeUndefined();
    expect(await live(s.cm)).toBeUndefined();
    expectNudged(await live(s.subB), 0);
    const ok = writes(s.cat, s.nsA, s.nsB).filter((e) => (e.responseStatus?.code ?? 0) < 300);
    expect(ok.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`).sort()).toEqual([
      `delete configmaps/${s.hash}`,
      `delete jobs/${s.hash}`,
      `patch subscriptions/${PKG}`,
    ]);
    expect((await c.medicEvents(s.cat)).map((e) => e.reason).sort()).toEqual(['UnpackConfigMapDeleted', 'UnpackJobDeleted']);
    expect((await c.medicEvents(s.nsB)).map((e) => e.reason)).toEqual(['SubscriptionNudged']);
  });
});
