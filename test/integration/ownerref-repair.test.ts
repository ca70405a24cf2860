/**
 * ownerref-repair on the real control plane (olm-facts §2, issue #3199).
 *
 * The story: a Manual Subscription was approved and installed; then an Automatic Subscription is
 * created in the same namespace. OLM's new InstallPlan (generation 2) ends up owned only by the
 * first Subscription, while the new Subscription's status.installPlanRef (name AND uid) and
 * status.installplan point at it and its currentCSV is in the plan's clusterServiceVersionNames.
 * Left alone, deleting the first Subscription garbage-collects the plan the second still needs.
 *
 * Objects come from the fixture builders, owner uids read back from the apiserver; events go in as
 * ApiServerSource CloudEvents through decodeEvent + engine.handle.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';
import type { Observed } from '../../functions/ownerref-repair/plan.js';
import type { RemediationFunction } from '../../shared/core/types.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { refOf, type KubeObject, type OwnerReference } from '../../shared/kube/types.js';
import type { Runtime } from '../../shared/wiring.js';
import * as olm from '../fixtures/olm-objects.js';
import { eventually, testCluster, type MedicEvent } from '../support/cluster.js';
import { apiServerEvent } from '../support/events.js';

const c = testCluster();

const CATALOG = 'operatorhubio-catalog';
const CATALOG_NS = 'olm';
const V1ALPHA1 = 'operators.coreos.com/v1alpha1';

const asKube = (o: olm.Obj): KubeObject => o as KubeObject;
const create = (o: olm.Obj): Promise<KubeObject> => c.create(asKube(o));
const setStatus = (o: KubeObject, status: olm.Obj): Promise<KubeObject> => c.setStatus(o, status);
const live = (o: KubeObject): Promise<KubeObject | undefined> => c.get(refOf(o));
const owners = (o: KubeObject | undefined): OwnerReference[] => o?.metadata.ownerReferences ?? [];
const byName = (refs: OwnerReference[]): OwnerReference[] => [...refs].sort((a, b) => a.name.localeCompare(b.name));
const subOwner = (s: KubeObject): OwnerReference => ({ apiVersion: V1ALPHA1, kind: 'Subscription', name: s.metadata.name, uid: s.metadata.uid!, controller: false, blockOwnerDeletion: false });

const runtimes: Runtime[] = [];
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.engine.close();
});
function runtime(fn: RemediationFunction<Observed> = ownerrefRepair, env: Record<string, string> = {}): Runtime {
  const rt = c.runtime([fn], env);
  runtimes.push(rt);
  return rt;
}
const send = (rt: Runtime, verb: 'add' | 'update', obj: KubeObject) => rt.engine.handle(decodeEvent(apiServerEvent(verb, obj)));

/** olm-medic's delete/patch requests in `ns` (audit log). */
const writes = (ns: string) => c.audit().filter((e) => e.objectRef?.namespace === ns && (e.verb === 'delete' || e.verb === 'patch'));
const eventSummary = (events: MedicEvent[]) => events.map((e) => [e.reason, e.type, e.regarding.kind, e.regarding.name, e.regarding.uid]);
const version = async (o: KubeObject) => {
  const l = await live(o);
  return l && `${l.metadata.uid} ${l.metadata.resourceVersion}`;
};

interface NewSub {
  name: string;
  pkg: string;
  csv: string;
}

interface World {
  ns: string;
  sub1: KubeObject;
  ip1: KubeObject;
  ip2: KubeObject;
  /** The Subscriptions created after the first, each pointing at ip2. */
  subs: KubeObject[];
}

/**
 * Namespace with a Manual Subscription `etcd` (approved, installed through InstallPlan gen 1), then
 * new Automatic Subscriptions; OLM's InstallPlan gen 2 installs their CSVs but is owned only by `etcd`.
 * `status` decides what each new Subscription's status says (default: pointAt the real plan).
 */
async function world(o: {
  newSubs?: NewSub[];
  ip2Annotations?: Record<string, string>;
  /** Override what a new Subscription's status says; return undefined to leave it without installPlanRef. */
  status?: (sub: NewSub, ip2: KubeObject) => olm.SubscriptionStatusOptions | undefined;
} = {}): Promise<World> {
  const newSubs = o.newSubs ?? [{ name: 'prometheus', pkg: 'prometheus', csv: 'prometheusoperator.0.47.0' }];
  const ns = await c.namespace('own');
  await create(olm.operatorGroup({ namespace: ns, name: 'og', targetNamespaces: [ns] }));

  // 1. The Manual Subscription, its InstallPlan (gen 1) approved by the user, installed.
  const sub1Obj = await create(olm.subscription({ namespace: ns, name: 'etcd', package: 'etcd', source: CATALOG, sourceNamespace: CATALOG_NS, channel: 'singlenamespace-alpha', approval: 'Manual' }));
  let ip1 = await create(olm.installPlan({
    namespace: ns,
    csvNames: ['etcdoperator.v0.9.4'],
    approval: 'Manual',
    generation: 1,
    ownerSubs: [{ name: 'etcd', uid: sub1Obj.metadata.uid! }],
    labels: olm.componentLabels('etcd', ns),
  }));
  ip1 = await setStatus(ip1, olm.installPlanStatus({ phase: 'RequiresApproval', catalogSources: [CATALOG] }));
  await c.admin.mergePatch(refOf(ip1), { spec: { approved: true } }, { dryRun: false });
  ip1 = await setStatus(ip1, olm.installPlanStatus({ phase: 'Complete', catalogSources: [CATALOG] }));
  const ip1Ref = { name: ip1.metadata.name, namespace: ns, uid: ip1.metadata.uid! };
  const sub1 = await setStatus(sub1Obj, olm.subscriptionStatus({
    currentCSV: 'etcdoperator.v0.9.4',
    installedCSV: 'etcdoperator.v0.9.4',
    installPlan: ip1Ref,
    state: 'AtLatestKnown',
    installPlanGeneration: 1,
    conditions: [olm.catalogSourcesHealthyCondition()],
  }));

  // 2. The new Automatic Subscriptions.
  const created: KubeObject[] = [];
  for (const s of newSubs) {
    created.push(await create(olm.subscription({ namespace: ns, name: s.name, package: s.pkg, source: CATALOG, sourceNamespace: CATALOG_NS, channel: 'beta', approval: 'Automatic' })));
  }

  // 3. InstallPlan gen 2: Manual (a Manual sub exists in the namespace, #1859), owned only by etcd (the bug).
  let ip2 = await create(olm.installPlan({ namespace: ns, csvNames: newSubs.map((s) => s.csv), approval: 'Manual', generation: 2, ownerSubs: [{ name: 'etcd', uid: sub1.metadata.uid! }] }));
  // A user opting the plan out annotates it afterwards.
  if (o.ip2Annotations) ip2 = (await c.admin.mergePatch(refOf(ip2), { metadata: { annotations: o.ip2Annotations } }, { dryRun: false })) as KubeObject;
  ip2 = await setStatus(ip2, olm.installPlanStatus({ phase: 'RequiresApproval', catalogSources: [CATALOG] }));

  // 4. setIPReference on the new Subscriptions.
  const subs: KubeObject[] = [];
  for (const [i, s] of newSubs.entries()) {
    const st = o.status ? o.status(s, ip2) : pointAt(s, ip2);
    subs.push(st ? await setStatus(created[i]!, olm.subscriptionStatus(st)) : created[i]!);
  }
  return { ns, sub1, ip1, ip2, subs };
}

/** What setIPReference + the subscription reconciler write on a Subscription served by `ip`. */
function pointAt(s: NewSub, ip: KubeObject, uid = ip.metadata.uid!): olm.SubscriptionStatusOptions {
  return {
    currentCSV: s.csv,
    installPlan: { name: ip.metadata.name, namespace: ip.metadata.namespace!, uid, resourceVersion: ip.metadata.resourceVersion! },
    state: 'UpgradePending',
    installPlanGeneration: 2,
    conditions: [olm.installPlanPendingCondition({ phase: 'RequiresApproval' }), olm.catalogSourcesHealthyCondition()],
  };
}

describe('ownerref-repair: the new InstallPlan misses the new Subscription as owner', () => {
  it('adds the non-blocking, non-controller ownerReference and the component label; keeps existing owners; Event InstallPlanOwnerAdded', async () => {
    const w = await world();
    const [sub2] = w.subs as [KubeObject];

    // Stuck: sub2 points at ip2 by name and uid, its CSV is in the plan, but ip2 is owned by etcd alone.
    const st = sub2.status as { installPlanRef: { name: string; uid: string }; installplan: { uuid: string }; currentCSV: string };
    expect([st.installPlanRef.name, st.installPlanRef.uid, st.installplan.uuid]).toEqual([w.ip2.metadata.name, w.ip2.metadata.uid, w.ip2.metadata.uid]);
    expect((w.ip2.spec as { clusterServiceVersionNames: string[] }).clusterServiceVersionNames).toContain(st.currentCSV);
    expect(owners(w.ip2)).toEqual([subOwner(w.sub1)]);

    const out = await send(runtime(), 'update', sub2);
    expect(out).toEqual([expect.objectContaining({ function: 'ownerref-repair', status: 'acted' })]);

    const ip2 = await live(w.ip2);
    expect(owners(ip2)).toEqual([subOwner(w.sub1), subOwner(sub2)]);
    expect(owners(ip2).filter((r) => r.controller)).toEqual([]);
    const labelKey = olm.componentLabelKey('prometheus', w.ns);
    expect(ip2?.metadata.labels?.[labelKey]).toBe('');
    // Nothing else on the plan changed.
    expect(ip2?.spec).toEqual(w.ip2.spec);
    expect(ip2?.status).toEqual(w.ip2.status);
    expect(await version(w.ip1)).toBe(`${w.ip1.metadata.uid} ${w.ip1.metadata.resourceVersion}`);
    expect(writes(w.ns).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name} ${e.responseStatus?.code}`)).toEqual([`patch installplans/${w.ip2.metadata.name} 200`]);

    const events = await c.medicEvents(w.ns);
    expect(eventSummary(events)).toEqual([['InstallPlanOwnerAdded', 'Normal', 'InstallPlan', w.ip2.metadata.name, w.ip2.metadata.uid]]);
    expect(events[0]!.note).toContain('Subscription prometheus');
    expect(events[0]!.reportingController).toBe('olm-medic.io/ownerref-repair');

    // A replay of the InstallPlan's own event now finds nothing to do.
    expect(await send(runtime(), 'update', ip2!)).toEqual([expect.objectContaining({ status: 'noop' })]);
  });

  it("a Subscription's event whose own part holds costs ONE read (the plan it names), never a list of the namespace; one whose part is missing reads the live Subscription, lists the namespace and repairs", async () => {
    const w = await world();
    const [sub2] = w.subs as [KubeObject];
    const rt = runtime();
    const reads = (from: number) =>
      c.audit().slice(from).filter((e) => e.objectRef?.namespace === w.ns && (e.verb === 'get' || e.verb === 'list')).map((e) => `${e.verb} ${e.objectRef?.resource}${e.objectRef?.name ? `/${e.objectRef.name}` : ''}`);
    let mark = c.audit().length;
    // etcd owns its plan: the event's claim (etcd -> ip1) holds on the live plan; nothing else is read.
    expect(await send(rt, 'update', w.sub1)).toEqual([expect.objectContaining({ status: 'noop' })]);
    expect(reads(mark)).toEqual([`get installplans/${w.ip1.metadata.name}`]);
    mark = c.audit().length;
    // prometheus is missing from its plan: the live Subscription decides (the plan is not read twice),
    // the namespace's Subscriptions are read and the plan repaired.
    expect(await send(rt, 'update', sub2)).toEqual([expect.objectContaining({ status: 'acted' })]);
    expect(reads(mark).slice(0, 3)).toEqual([`get installplans/${w.ip2.metadata.name}`, `get subscriptions/${sub2.metadata.name}`, 'list subscriptions']);
    mark = c.audit().length;
    // Its next event (a catalog update touching its status) is settled by one read again.
    expect(await send(rt, 'update', { ...sub2, metadata: { ...sub2.metadata, resourceVersion: `${sub2.metadata.resourceVersion}0` } })).toEqual([expect.objectContaining({ status: 'noop' })]);
    expect(reads(mark)).toEqual([`get installplans/${w.ip2.metadata.name}`]);
  });

  it("an event's claim never causes a write: the live Subscription decides (it points nowhere, or elsewhere)", async () => {
    const w = await world();
    const [sub2] = w.subs as [KubeObject];
    const rt = runtime();
    // The live Subscription no longer points at ip2 (OLM cleared it); an event still says it does.
    await c.admin.mergePatch(refOf(sub2), { status: { installPlanRef: null, installplan: null } }, { dryRun: false, subresource: 'status' });
    expect(await send(rt, 'update', sub2)).toEqual([expect.objectContaining({ status: 'gone' })]);
    // A forged claim on a plan the Subscription never pointed at (etcd's ip1, which lacks prometheus).
    const forged = structuredClone(sub2);
    const st = forged.status as { installPlanRef: { name: string; uid: string }; installplan: { name: string; uuid: string }; currentCSV: string };
    st.installPlanRef = { ...st.installPlanRef, name: w.ip1.metadata.name, uid: w.ip1.metadata.uid! };
    st.installplan = { ...st.installplan, name: w.ip1.metadata.name, uuid: w.ip1.metadata.uid! };
    st.currentCSV = 'etcdoperator.v0.9.4';
    forged.metadata.resourceVersion = `${forged.metadata.resourceVersion}7`;
    expect(await send(rt, 'update', forged)).toEqual([expect.objectContaining({ status: 'gone' })]);
    expect(writes(w.ns)).toEqual([]);
    expect(owners(await live(w.ip1))).toEqual([subOwner(w.sub1)]);
    expect(owners(await live(w.ip2))).toEqual([subOwner(w.sub1)]);
  });

  it('a stale event delivered after a newer one (reordering): each is decided on its own claim; the newer repairs, the older writes nothing', async () => {
    const w = await world();
    const [sub2] = w.subs as [KubeObject];
    const rt = runtime();
    // An older claim (prometheus pointing at ip1, which does not hold it) arrives together with the
    // newer one: the older is decided on the live Subscription (which points at ip2), never on itself.
    const older = structuredClone(sub2);
    const st = older.status as { installPlanRef: { name: string; uid: string }; installplan: { name: string; uuid: string } };
    st.installPlanRef = { ...st.installPlanRef, name: w.ip1.metadata.name, uid: w.ip1.metadata.uid! };
    st.installplan = { ...st.installplan, name: w.ip1.metadata.name, uuid: w.ip1.metadata.uid! };
    older.metadata.resourceVersion = '1';
    const [a, b] = await Promise.all([send(rt, 'update', sub2), send(rt, 'update', older)]);
    expect([...a, ...b].map((o) => o.status).sort()).toEqual(['acted', 'noop']);
    expect(owners(await live(w.ip2))).toEqual([subOwner(w.sub1), subOwner(sub2)]);
    expect(owners(await live(w.ip1))).toEqual([subOwner(w.sub1)]);
    expect(writes(w.ns).map((e) => `${e.verb} ${e.objectRef?.name} ${e.responseStatus?.code}`)).toEqual([`patch ${w.ip2.metadata.name} 200`]);
  });

  it('garbage collection then works as OLM intends: deleting etcd keeps the plan prometheus needs; deleting both collects it', async () => {
    const w = await world();
    const [sub2] = w.subs as [KubeObject];
    expect(await send(runtime(), 'add', w.ip2)).toEqual([expect.objectContaining({ status: 'acted' })]);

    await c.admin.delete(refOf(w.sub1), { uid: w.sub1.metadata.uid!, dryRun: false });
    // ip1 (owned by etcd alone) goes; ip2 stays, and the GC drops the dangling etcd reference from it.
    // (The GC starts watching CRD kinds at its 30 s discovery resync, so the first collection after
    // the control plane starts can take that long; later ones are immediate.)
    await eventually(async () => !(await live(w.ip1)), 'GC to collect ip1', 45_000);
    const ip2 = await eventually(async () => {
      const l = await live(w.ip2);
      return l && owners(l).length === 1 ? l : undefined;
    }, 'GC to drop the dangling etcd ownerReference from ip2', 30_000);
    expect(owners(ip2)).toEqual([subOwner(sub2)]);

    await c.admin.delete(refOf(sub2), { uid: sub2.metadata.uid!, dryRun: false });
    await eventually(async () => !(await live(w.ip2)), 'GC to collect ip2 once all its owner Subscriptions are gone', 30_000);
  }, 90_000);
});

describe('ownerref-repair twins: one safety condition fails, the plan is untouched', () => {
  async function expectUntouched(w: World, before: string[]): Promise<void> {
    expect(await Promise.all([w.ip1, w.ip2, w.sub1, ...w.subs].map(version))).toEqual(before);
    expect(writes(w.ns)).toEqual([]);
  }
  const stamp = (w: World) => [w.ip1, w.ip2, w.sub1, ...w.subs].map((o) => `${o.metadata.uid} ${o.metadata.resourceVersion}`);

  it('installPlanRef names the plan but carries another uid (a previous plan of that name): untouched', async () => {
    const w = await world({ status: (s, ip) => pointAt(s, ip, 'a3f1c2d4-0000-4000-8000-000000000001') });
    const rt = runtime();
    expect(await send(rt, 'update', w.subs[0]!)).toEqual([expect.objectContaining({ status: 'noop' })]);
    expect(await send(rt, 'update', w.ip2)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await expectUntouched(w, stamp(w));
    expect(await c.medicEvents(w.ns)).toEqual([]);
  });

  it('currentCSV is not in the plan\'s clusterServiceVersionNames: untouched', async () => {
    const w = await world({ status: (s, ip) => ({ ...pointAt(s, ip), currentCSV: 'prometheusoperator.0.47.1' }) });
    const rt = runtime();
    expect(await send(rt, 'update', w.subs[0]!)).toEqual([expect.objectContaining({ status: 'noop' })]);
    expect(await send(rt, 'add', w.ip2)).toEqual([expect.objectContaining({ status: 'noop' })]);
    await expectUntouched(w, stamp(w));
    expect(await c.medicEvents(w.ns)).toEqual([]);
  });

  it('opt-out annotation olm-medic.io/ignore=true on the InstallPlan: refused with an OptedOut Warning', async () => {
    const w = await world({ ip2Annotations: { 'olm-medic.io/ignore': 'true' } });
    expect(await send(runtime(), 'update', w.subs[0]!)).toEqual([expect.objectContaining({ status: 'refused' })]);
    await expectUntouched(w, stamp(w));
    expect(eventSummary(await c.medicEvents(w.ns))).toEqual([['OptedOut', 'Warning', 'InstallPlan', w.ip2.metadata.name, w.ip2.metadata.uid]]);
  });

  it('never controller:true — even on a plan with no owner at all, and the apiserver would reject two controllers', async () => {
    const w = await world({ newSubs: [{ name: 'prometheus', pkg: 'prometheus', csv: 'prometheusoperator.0.47.0' }, { name: 'grafana', pkg: 'grafana-operator', csv: 'grafana-operator.v4.1.0' }] });
    // Drop every owner first (as for a plan whose Subscriptions OLM never attached).
    const bare = (await c.admin.mergePatch(refOf(w.ip2), { metadata: { ownerReferences: null } }, { dryRun: false })) as KubeObject;
    expect(owners(bare)).toEqual([]);
    expect(await send(runtime(), 'update', bare)).toEqual([expect.objectContaining({ status: 'acted' })]);
    const ip2 = await live(w.ip2);
    expect(byName(owners(ip2))).toEqual(byName(w.subs.map(subOwner)));
    for (const r of owners(ip2)) expect([r.controller, r.blockOwnerDeletion]).toEqual([false, false]);
    // The two component labels, one per package.
    expect(Object.keys(ip2?.metadata.labels ?? {}).sort()).toEqual([olm.componentLabelKey('grafana-operator', w.ns), olm.componentLabelKey('prometheus', w.ns)].sort());
  });
});

describe('ownerref-repair: two replicas repairing the same plan concurrently', () => {
  const two: NewSub[] = [
    { name: 'prometheus', pkg: 'prometheus', csv: 'prometheusoperator.0.47.0' },
    { name: 'grafana', pkg: 'grafana-operator', csv: 'grafana-operator.v4.1.0' },
  ];

  /** ownerref-repair whose first observe() is held after reading, until released. */
  function held(): { fn: RemediationFunction<Observed>; observed: Promise<void>; release: () => void } {
    let release!: () => void;
    let signal!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const observed = new Promise<void>((r) => (signal = r));
    let first = true;
    const fn: RemediationFunction<Observed> = {
      ...ownerrefRepair,
      async observe(ref, read, ctx) {
        const o = await ownerrefRepair.observe(ref, read, ctx);
        if (first) {
          first = false;
          signal();
          await gate;
        }
        return o;
      },
    };
    return { fn, observed, release };
  }

  it('a replica acting on a stale view cannot drop the owner another replica added (resourceVersion precondition, 409, re-plan)', async () => {
    // OLM writes setIPReference on prometheus first; grafana's status is written a moment later.
    const w = await world({ newSubs: two, status: (s, ip) => (s.name === 'prometheus' ? pointAt(s, ip) : undefined) });
    const [prom, grafanaNoStatus] = w.subs as [KubeObject, KubeObject];
    const a = held();
    const rtA = runtime(a.fn);
    const rtB = runtime();

    const [outA, outB] = await Promise.all([
      // Replica A: prometheus's event; it observes ip2 while only prometheus points at it, then stalls.
      send(rtA, 'update', prom),
      (async () => {
        await a.observed;
        // OLM now points grafana at ip2; replica B handles grafana's event and repairs first.
        const grafana = await setStatus(grafanaNoStatus, olm.subscriptionStatus(pointAt(two[1]!, w.ip2)));
        const out = await send(rtB, 'update', grafana);
        a.release();
        return out;
      })(),
    ]);

    expect(outB).toEqual([expect.objectContaining({ status: 'acted' })]);
    // A's patch (owners etcd + prometheus only, at the old resourceVersion) was rejected; its re-plan found nothing missing.
    expect(outA).toEqual([expect.objectContaining({ status: 'noop' })]);
    const patches = writes(w.ns).filter((e) => e.verb === 'patch' && e.objectRef?.name === w.ip2.metadata.name);
    expect(patches.map((e) => e.responseStatus?.code)).toEqual([200, 409]);

    const ip2 = await live(w.ip2);
    const grafana = (await live(grafanaNoStatus))!;
    expect(owners(ip2)[0]).toEqual(subOwner(w.sub1));
    expect(byName(owners(ip2))).toEqual(byName([subOwner(w.sub1), subOwner(prom), subOwner(grafana)]));
    expect(eventSummary(await c.medicEvents(w.ns))).toEqual([['InstallPlanOwnerAdded', 'Normal', 'InstallPlan', w.ip2.metadata.name, w.ip2.metadata.uid]]);
  });

  it('Promise.all of two replicas, each handling a different missing Subscription: all three owners survive', async () => {
    const w = await world({ newSubs: two });
    const [prom, grafana] = w.subs as [KubeObject, KubeObject];
    const outs = await Promise.all([send(runtime(), 'update', prom), send(runtime(), 'update', grafana)]);
    expect(outs.flat().map((o) => o.status)).toContain('acted');
    for (const o of outs.flat()) expect(['acted', 'noop']).toContain(o.status);
    const ip2 = await live(w.ip2);
    expect(new Set(owners(ip2).map((r) => r.uid))).toEqual(new Set([w.sub1, prom, grafana].map((s) => s.metadata.uid)));
    expect(owners(ip2)).toHaveLength(3);
    expect(owners(ip2).some((r) => r.controller)).toBe(false);
    expect(writes(w.ns).filter((e) => (e.responseStatus?.code ?? 0) < 300)).toHaveLength(1);
  });
});
