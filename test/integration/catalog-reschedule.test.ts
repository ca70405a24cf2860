/**
 * catalog-reschedule on the real control plane (olm-facts §3.2): a CatalogSource registry pod stuck
 * Terminating on a node that is gone keeps the catalog down, and OLM (< v0.29, and at HEAD for a pod
 * Terminating WITHOUT DisruptionTarget) still counts it as the current pod.
 *
 * "Stuck Terminating" is real here: the pod is deleted with gracePeriodSeconds 3600 and there is no
 * kubelet to confirm termination, so it stays until someone force-deletes it (grace 0). Because a
 * grace period can only be shortened, "the pod is gone" proves the force delete.
 *
 * Each situation has a twin in which exactly one safety condition fails: then nothing is written
 * (same uid and resourceVersion, no delete/patch by olm-medic in the audit log, no Event).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { catalogReschedule } from '../../functions/catalog-reschedule/index.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { decodeEvent } from '../../shared/events/decode.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import type { Runtime } from '../../shared/wiring.js';
import { eventually, testCluster } from '../support/cluster.js';
import { apiServerEvent } from '../support/events.js';
import {
  catalogPod,
  catalogSource,
  node,
  podConditionDisruptionTarget,
  taintNotReady,
  taintOutOfService,
  taintUnreachable,
  type Obj,
} from '../fixtures/olm-objects.js';

const c = testCluster();
const IMAGE = 'quay.io/operatorhubio/catalog:latest';
const MIN = 60_000;

const runtimes: Runtime[] = [];
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.engine.close();
});

/** A runtime whose clock is frozen at `now` (fences are computed against it). */
function runtime(now: Date, env: Record<string, string> = {}): Runtime {
  const rt = c.runtime([catalogReschedule], env, { now: () => now });
  runtimes.push(rt);
  return rt;
}

const asObj = (o: Obj): KubeObject => o as KubeObject;
const refOf = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });

async function send(rt: Runtime, verb: 'add' | 'update' | 'delete', obj: KubeObject): Promise<Outcome[]> {
  return rt.engine.handle(decodeEvent(apiServerEvent(verb, obj)));
}

async function sweep(rt: Runtime, namespace: string): Promise<Outcome[]> {
  return rt.engine.handle({ kind: 'sweep', namespace, functions: ['catalog-reschedule'], meta: { id: `sweep-${namespace}`, source: 'test', type: 'io.olm-medic.sweep' } });
}

/** Requests olm-medic made that change something in `ns` (Event creation is not a change). */
const writesIn = (ns: string) => c.audit().filter((e) => e.objectRef?.namespace === ns && ['delete', 'patch', 'update', 'deletecollection'].includes(e.verb));

async function deadNode(name: string, o: { ready: boolean | 'Unknown'; since: Date; taints?: Obj[] }): Promise<KubeObject> {
  const taints = o.taints ?? (o.ready === 'Unknown' ? [taintUnreachable(o.since)] : o.ready === false ? [taintNotReady(o.since)] : undefined);
  return c.create(asObj(node({ name, ready: o.ready, since: o.since, ...(taints ? { taints } : {}) })));
}

interface Catalog {
  ns: string;
  catsrc: KubeObject;
  pod: KubeObject;
}

/**
 * A grpc CatalogSource and its serving pod (generateName `<catsrc>-`, controller ownerRef with the
 * CatalogSource's real uid, default 300 s not-ready/unreachable tolerations) scheduled on `nodeName`,
 * then deleted with a 3600 s grace period: Terminating, with no DisruptionTarget condition.
 */
async function stuckCatalogPod(
  ns: string,
  nodeName: string,
  o: { name?: string; annotations?: Record<string, string>; podLabels?: (l: Record<string, string>) => Record<string, string>; terminating?: boolean } = {},
): Promise<Catalog> {
  const name = o.name ?? 'operatorhubio-catalog';
  const annotations = o.annotations;
  const catsrc = await c.create(asObj(catalogSource({ namespace: ns, name, image: IMAGE, displayName: 'Community Operators', publisher: 'OperatorHub.io', ...(annotations ? { annotations } : {}) })));
  await c.setStatus(catsrc, catalogSource({ namespace: ns, name, image: IMAGE, lastObservedState: 'TRANSIENT_FAILURE' }).status);
  // OLM copies the CatalogSource's annotations onto the pod.
  const built = catalogPod({ namespace: ns, catalogSourceName: name, catalogSourceUid: catsrc.metadata.uid!, nodeName, image: IMAGE, ...(annotations ? { catalogSourceAnnotations: annotations } : {}) });
  if (o.podLabels) built.metadata.labels = o.podLabels(built.metadata.labels);
  const created = await c.create(asObj(built));
  if (o.terminating !== false) await c.admin.delete(refOf(created), { uid: created.metadata.uid!, gracePeriodSeconds: 3600, dryRun: false });
  return { ns, catsrc, pod: (await c.get(refOf(created)))! };
}

/** The stuck state this function exists for. */
function expectStuck(pod: KubeObject): void {
  expect(pod.metadata.deletionTimestamp).toBeDefined();
  expect(pod.metadata.deletionGracePeriodSeconds).toBe(3600);
  const conds = ((pod.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? []).map((x) => x.type);
  expect(conds).not.toContain('DisruptionTarget');
}

/** Nothing was written: same object, no write requests, no Events. */
async function expectUntouched(ns: string, pod: KubeObject): Promise<void> {
  const live = await c.get(refOf(pod));
  expect(live?.metadata.uid).toBe(pod.metadata.uid);
  expect(live?.metadata.resourceVersion).toBe(pod.metadata.resourceVersion);
  expect(writesIn(ns)).toEqual([]);
  expect(await c.medicEvents(ns)).toEqual([]);
}

/** The pod is gone (only a grace-0 delete can end a 3600 s Terminating pod without a kubelet), by olm-medic, with an Event on the CatalogSource. */
async function expectForceDeleted(cat: Catalog, noteMatch: RegExp): Promise<void> {
  expect(await c.get(refOf(cat.pod))).toBeUndefined();
  const deletes = writesIn(cat.ns).filter((e) => e.objectRef?.resource === 'pods' && e.objectRef.name === cat.pod.metadata.name);
  expect(deletes.map((d) => [d.verb, d.responseStatus?.code])).toEqual([['delete', 200]]);
  const events = (await c.medicEvents(cat.ns)).filter((e) => (e as unknown as { related?: { name: string } }).related?.name === cat.pod.metadata.name);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({
    reason: 'CatalogPodForceDeleted',
    type: 'Normal',
    action: 'Delete',
    reportingController: 'olm-medic.io/catalog-reschedule',
    regarding: { kind: 'CatalogSource', name: cat.catsrc.metadata.name, namespace: cat.ns, uid: cat.catsrc.metadata.uid },
    related: { kind: 'Pod', name: cat.pod.metadata.name, namespace: cat.ns, uid: cat.pod.metadata.uid },
  });
  expect(events[0]!.note).toMatch(noteMatch);
}

describe('catalog-reschedule: catalog pod stuck Terminating on a NotReady node', () => {
  it('force-deletes the pod (no DisruptionTarget: the case OLM misses) on a pod event once the node has been gone past the fence', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name);
    expectStuck(cat.pod);

    const out = await send(runtime(now), 'update', cat.pod);
    expect(out).toMatchObject([{ function: 'catalog-reschedule', status: 'acted', target: `Node/${n.metadata.name}` }]);
    expect(out[0]!.actions).toEqual([{ verb: 'delete', target: `Pod/${ns}/${cat.pod.metadata.name}`, reason: 'CatalogPodForceDeleted', result: 'done' }]);
    await expectForceDeleted(cat, /stuck Terminating.*node\.kubernetes\.io\/unreachable toleration \(300s\) plus 30s/);
    // The CatalogSource itself is left for OLM to recreate the pod.
    expect((await c.get(refOf(cat.catsrc)))?.metadata.resourceVersion).toBeDefined();
  });

  it('twin: the same pod on a Ready node is never touched', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`ready-${ns}`, { ready: true, since: new Date(now.getTime() - 10 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name);
    expectStuck(cat.pod);
    const rt = runtime(now);
    expect((await send(rt, 'update', cat.pod)).map((o) => o.status)).toEqual(['noop']);
    expect((await send(rt, 'update', n)).map((o) => o.status)).toEqual(['ignored']); // a Ready node is no trigger
    await expectUntouched(ns, cat.pod);
  });

  it('twin: a node NotReady for only 60 s is inside the fence: requeued for the rest of it (~270 s), untouched', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`young-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 1 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name);
    expectStuck(cat.pod);
    const out = await send(runtime(now), 'update', cat.pod);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'requeued', reason: 'inside the node-loss fence' });
    // 300 s toleration + 30 s margin - 60 s already elapsed
    expect(out[0]!.requeueAfterSeconds).toBe(270);
    await expectUntouched(ns, cat.pod);
  });

  it('a Node event is not listened to (no function declares Nodes): nothing is read or written', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const a = await stuckCatalogPod(ns, n.metadata.name, { name: 'operatorhubio-catalog' });
    const rt = runtime(now);
    const reads = c.audit().length;
    expect(await send(rt, 'update', n)).toEqual([{ status: 'ignored', reason: 'no function handles Node events' }]);
    // Other files share the control plane and this identity: only requests about this node, its
    // pods or this namespace are this event's (a list of the node's pods names it in its selector).
    const mine = (e: { requestURI?: string }): boolean => Boolean(e.requestURI && (e.requestURI.includes(n.metadata.name) || e.requestURI.includes(`/namespaces/${ns}/`)));
    expect(c.audit().slice(reads).filter(mine)).toEqual([]);
    await expectUntouched(ns, a.pod);
  });

  it('one catalog pod\'s event force-deletes every catalog pod on its NotReady node', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const a = await stuckCatalogPod(ns, n.metadata.name, { name: 'operatorhubio-catalog' });
    const b = await stuckCatalogPod(ns, n.metadata.name, { name: 'certified-operators' });
    const out = await send(runtime(now), 'update', a.pod);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'acted', target: `Node/${n.metadata.name}` });
    expect(out[0]!.actions?.map((x) => x.target).sort()).toEqual([`Pod/${ns}/${a.pod.metadata.name}`, `Pod/${ns}/${b.pod.metadata.name}`].sort());
    await expectForceDeleted(a, /stuck Terminating/);
    await expectForceDeleted(b, /stuck Terminating/);
  });

  it('a catalog opted out (olm-medic.io/ignore=true, copied onto its pod) does not hold back the other catalogs on the same node', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const mine = await stuckCatalogPod(ns, n.metadata.name, { name: 'my-catalog', annotations: { 'olm-medic.io/ignore': 'true' } });
    const other = await stuckCatalogPod(ns, n.metadata.name, { name: 'operatorhubio-catalog' });
    expect(mine.pod.metadata.annotations?.['olm-medic.io/ignore']).toBe('true');
    const out = await send(runtime(now), 'update', other.pod);
    expect(out).toHaveLength(1);
    expect(out[0]!.actions?.filter((a) => a.result === 'done').map((a) => a.target)).toEqual([`Pod/${ns}/${other.pod.metadata.name}`]);
    await expectForceDeleted(other, /stuck Terminating/);
    // The opted-out one is refused on the follow-up look (at once or by timer: 'refused' or 'acted'), with a Warning Event, and never written.
    expect(['acted', 'refused']).toContain(out[0]!.status);
    const refusal = await eventually(async () => (await c.medicEvents(ns)).find((e) => e.reason === 'OptedOut'), 'the OptedOut Event');
    expect(refusal).toMatchObject({ type: 'Warning', action: 'Refuse', regarding: { kind: 'CatalogSource', name: 'my-catalog' } });
    const live = await c.get(refOf(mine.pod));
    expect([live?.metadata.uid, live?.metadata.resourceVersion]).toEqual([mine.pod.metadata.uid, mine.pod.metadata.resourceVersion]);
    expect(writesIn(ns).filter((e) => e.objectRef?.name === mine.pod.metadata.name)).toEqual([]);
  });

  it('a node tainted node.kubernetes.io/out-of-service is acted on at once, even inside the fence', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const since = new Date(now.getTime() - 1 * MIN);
    const n = await deadNode(`oos-${ns}`, { ready: 'Unknown', since, taints: [taintUnreachable(since), taintOutOfService()] });
    const cat = await stuckCatalogPod(ns, n.metadata.name);
    expectStuck(cat.pod);
    // Its pod's event (taint eviction deletes pods that do not tolerate the NoExecute taint).
    const out = await send(runtime(now), 'update', cat.pod);
    expect(out.map((o) => o.status)).toEqual(['acted']);
    await expectForceDeleted(cat, /tainted node\.kubernetes\.io\/out-of-service/);
  });

  it('DisruptionTarget=True older than olmGraceSeconds (60 s): acts, even inside the node fence', async () => {
    const ns = await c.namespace('cat');
    const start = new Date();
    const n = await deadNode(`dt-${ns}`, { ready: 'Unknown', since: start });
    const cat = await stuckCatalogPod(ns, n.metadata.name, { terminating: false });
    // The taint manager marks the pod, then deletes it (the deletion never completes without a kubelet).
    await c.setStatus(cat.pod, { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', start)] });
    await c.admin.delete(refOf(cat.pod), { uid: cat.pod.metadata.uid!, gracePeriodSeconds: 3600, dryRun: false });
    const pod = (await c.get(refOf(cat.pod)))!;
    expect(pod.metadata.deletionTimestamp).toBeDefined();
    // olm-medic looks 90 s after the delete the apiserver stamped (deletionTimestamp minus the grace):
    // past olmGraceSeconds, still inside the node's 300 s fence.
    const now = new Date(Date.parse(pod.metadata.deletionTimestamp!) - 3600_000 + 90_000);
    const out = await send(runtime(now), 'update', pod);
    expect(out.map((o) => o.status)).toEqual(['acted']);
    await expectForceDeleted({ ...cat, pod }, /DisruptionTarget=True \(DeletionByTaintManager\)/);
  });

  it('twin: DisruptionTarget=True newer than olmGraceSeconds: deferred to OLM (Event DeferredToOlm), untouched', async () => {
    const ns = await c.namespace('cat');
    const start = new Date();
    const n = await deadNode(`dt-${ns}`, { ready: 'Unknown', since: new Date(start.getTime() - 10 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name, { terminating: false });
    await c.setStatus(cat.pod, { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', start)] });
    await c.admin.delete(refOf(cat.pod), { uid: cat.pod.metadata.uid!, gracePeriodSeconds: 3600, dryRun: false });
    const pod = (await c.get(refOf(cat.pod)))!;
    // olm-medic looks 10 s after the delete the apiserver stamped: inside olmGraceSeconds (60 s).
    const now = new Date(Date.parse(pod.metadata.deletionTimestamp!) - 3600_000 + 10_000);
    const out = await send(runtime(now), 'update', pod);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'deferred' });
    expect(out[0]!.requeueAfterSeconds).toBeGreaterThanOrEqual(50);
    expect(out[0]!.requeueAfterSeconds).toBeLessThanOrEqual(51);
    const live = await c.get(refOf(pod));
    expect(live?.metadata.resourceVersion).toBe(pod.metadata.resourceVersion);
    expect(writesIn(ns)).toEqual([]);
    const events = await c.medicEvents(ns);
    expect(events.map((e) => [e.reason, e.type, e.action])).toEqual([['DeferredToOlm', 'Normal', 'Defer']]);
    expect(events[0]!.regarding).toMatchObject({ kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid });
    expect(events[0]!.note).toMatch(/OLM v0\.29\+ force-deletes such pods itself/);
  });

  it('twin: a pod without the olm.catalogSource label on the dead node is never touched', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name, { podLabels: ({ ['olm.catalogSource']: _drop, ...rest }) => ({ ...rest, app: 'web' }) });
    expectStuck(cat.pod);
    expect(cat.pod.metadata.labels?.['olm.catalogSource']).toBeUndefined();
    const rt = runtime(now);
    expect((await send(rt, 'update', cat.pod)).map((o) => o.status)).toEqual(['ignored']);
    expect((await sweep(rt, ns)).map((o) => o.status)).toEqual(['noop']); // the node path, as a sweep reaches it
    await expectUntouched(ns, cat.pod);
  });

  it('twin: a labelled pod whose controller ownerRef is a previous CatalogSource uid (catalog recreated) is never touched', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name);
    // The CatalogSource is deleted and recreated under the same name: a new uid.
    await c.admin.delete(refOf(cat.catsrc), { uid: cat.catsrc.metadata.uid!, dryRun: false });
    await c.create(asObj(catalogSource({ namespace: ns, name: cat.catsrc.metadata.name, image: IMAGE })));
    const recreated = (await c.get(refOf(cat.catsrc)))!;
    expect(recreated.metadata.uid).not.toBe(cat.catsrc.metadata.uid);
    const pod = (await c.get(refOf(cat.pod)))!;
    expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(cat.catsrc.metadata.uid);
    const rt = runtime(now);
    expect((await send(rt, 'update', pod)).map((o) => o.status)).toEqual(['noop']);
    expect((await sweep(rt, ns)).map((o) => o.status)).toEqual(['noop']); // the node path, as a sweep reaches it
    await expectUntouched(ns, pod);
  });

  it('twin: an update (polling) pod — olm.catalogSource="" plus the update label — is never touched', async () => {
    const ns = await c.namespace('cat');
    const now = new Date();
    const n = await deadNode(`dead-${ns}`, { ready: 'Unknown', since: new Date(now.getTime() - 10 * MIN) });
    const cat = await stuckCatalogPod(ns, n.metadata.name, {
      podLabels: (l) => ({ ...l, 'olm.catalogSource': '', 'catalogsource.operators.coreos.com/update': 'operatorhubio-catalog' }),
    });
    expectStuck(cat.pod);
    const rt = runtime(now);
    expect((await send(rt, 'update', cat.pod)).map((o) => o.status)).toEqual(['ignored']);
    expect((await sweep(rt, ns)).map((o) => o.status)).toEqual(['noop']); // the node path, as a sweep reaches it
    await expectUntouched(ns, cat.pod);
  });
});
