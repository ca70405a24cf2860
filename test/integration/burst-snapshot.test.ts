/**
 * ownerref-repair in a burst of Subscription events (a catalog update), on the real apiserver as the
 * shipped ServiceAccount: past the burst threshold one cluster-wide METADATA list of InstallPlans
 * answers the events whose plan already holds their claim (shared/kube/burst-snapshots.ts) instead
 * of one GET each; a plan that lacks an event's owner is still read live and repaired; and an
 * InstallPlan's own event is decided live even while a snapshot is fresh.
 */
import { describe, expect, it } from 'vitest';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';
import { BURST_SNAPSHOT_DEFAULTS } from '../../shared/kube/burst-snapshots.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { refOf, type KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { testCluster } from '../support/cluster.js';
import { apiServerEvent } from '../support/events.js';

const c = testCluster();
const N = 150;

async function forEachLimited<T>(items: T[], limit: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/** A Subscription installed through its own plan; `owned: false` leaves the plan without its owner (the seed). */
async function installed(ns: string, i: string, owned: boolean): Promise<{ sub: KubeObject; ip: KubeObject }> {
  const name = `op-${i}`;
  const sub = await c.create(olm.subscription({ namespace: ns, name, package: `pkg-${i}`, source: 'operatorhubio-catalog', sourceNamespace: 'olm', channel: 'stable' }) as KubeObject);
  const ip = await c.create(olm.installPlan({ namespace: ns, name: `install-${i}`, csvNames: [`pkg-${i}.v1.0.0`], ownerSubs: owned ? [{ name, uid: sub.metadata.uid! }] : [], labels: { [olm.componentLabelKey(`pkg-${i}`, ns)]: '' } }) as KubeObject);
  const live = await c.setStatus(sub, olm.subscriptionStatus({ currentCSV: `pkg-${i}.v1.0.0`, installedCSV: `pkg-${i}.v1.0.0`, state: 'AtLatestKnown', installPlan: { name: ip.metadata.name, namespace: ns, uid: ip.metadata.uid! }, installPlanGeneration: 1, conditions: [olm.catalogSourcesHealthyCondition()] }));
  return { sub: live, ip };
}

describe('ownerref-repair in a burst of Subscription events (real apiserver, shipped SA)', () => {
  it('a metadata-only list gives each item\'s metadata (owners, labels) and not its spec', async () => {
    const ns = await c.namespace('meta');
    const { ip } = await installed(ns, 'm', true);
    const items: KubeObject[] = [];
    for await (const x of c.admin.list('operators.coreos.com/v1alpha1', 'InstallPlan', { namespace: ns, metadataOnly: true })) items.push(x);
    expect(items.length).toBe(1);
    expect(items[0]!.spec).toBeUndefined();
    expect(items[0]!.metadata.uid).toBe(ip.metadata.uid);
    expect(items[0]!.metadata.ownerReferences).toEqual(ip.metadata.ownerReferences);
    expect(items[0]!.metadata.labels).toEqual(ip.metadata.labels);
  });

  it('one metadata list instead of a GET per event; the plan missing its owner is still read live and repaired; a plan\'s own event is decided live', async () => {
    const ns = await c.namespace('burst');
    const healthy: { sub: KubeObject; ip: KubeObject }[] = [];
    await forEachLimited(Array.from({ length: N }, (_, i) => i), 16, async (i) => void healthy.push(await installed(ns, String(i), true)));
    const stuck = await installed(ns, 'stuck', false);
    // The default threshold; a life of 60 s instead of 5 s, so a slow CI machine sees the same snapshot in both parts.
    const rt = c.runtime([ownerrefRepair], {}, { burstSnapshots: { maxAgeMs: 60_000 } });
    try {
      const since = Date.now();
      const handle = (subs: KubeObject[]) => Promise.all(subs.map((s) => rt.engine.handle(decodeEvent(apiServerEvent('update', s)))));
      // The burst's first part builds a snapshot (past the threshold).
      const first = await handle(healthy.slice(0, 100).map((h) => h.sub));
      // A Subscription written after the snapshot's marker list is never answered from it: its plan
      // is read live (real resourceVersions of the real apiserver, compared as KEP-5504 allows).
      const later = healthy[120]!;
      const touched = (await c.admin.mergePatch(refOf(later.sub), { metadata: { annotations: { touched: 'yes' } } }, { dryRun: false })) as KubeObject;
      // The rest, the touched one and the stuck one come while the snapshot is at hand.
      const rest = await handle([...healthy.slice(100).map((h) => (h === later ? touched : h.sub)), stuck.sub]);
      expect([...first, ...rest].flat().filter((o) => !['noop', 'acted'].includes(o.status))).toEqual([]);

      const repaired = await c.get(refOf(stuck.ip));
      expect(repaired?.metadata.ownerReferences?.map((r) => r.uid)).toEqual([stuck.sub.metadata.uid]);
      const mine = c.audit().filter((e) => Date.parse(e.stageTimestamp ?? '') >= since - 1000 && e.objectRef?.resource === 'installplans');
      const gets = mine.filter((e) => e.verb === 'get' && e.objectRef?.namespace === ns);
      const lists = mine.filter((e) => e.verb === 'list' && !e.objectRef?.namespace);
      // Below the threshold each event GETs its plan; past it, the snapshot answers (the stuck plan is GET live).
      expect(gets.length, gets.map((e) => e.requestURI).join('\n')).toBeLessThan(BURST_SNAPSHOT_DEFAULTS.threshold + 10);
      expect(gets.some((e) => e.objectRef?.name === stuck.ip.metadata.name)).toBe(true);
      expect(gets.filter((e) => e.objectRef?.name === later.ip.metadata.name).length).toBe(1);
      // Not the others of the second part (written before the marker): answered from the snapshot.
      expect(gets.filter((e) => healthy.slice(100).some((h) => h !== later && h.ip.metadata.name === e.objectRef?.name))).toEqual([]);
      expect(lists.length).toBeGreaterThanOrEqual(1);
      const writes = c.audit().filter((e) => Date.parse(e.stageTimestamp ?? '') >= since - 1000 && e.objectRef?.namespace === ns && e.verb === 'patch');
      expect(writes.map((e) => e.objectRef?.name)).toEqual([stuck.ip.metadata.name]);

      // While that snapshot is fresh, an owner removed from a healthy plan is seen by the plan's own
      // event, which reads the plan live (the snapshot only ever answers Subscription events' asks).
      const victim = healthy[7]!;
      const cur = (await c.get(refOf(victim.ip)))!;
      const cut = (await c.admin.mergePatch(refOf(victim.ip), { metadata: { resourceVersion: cur.metadata.resourceVersion, ownerReferences: null } }, { dryRun: false })) as KubeObject;
      expect(cut.metadata.ownerReferences).toBeUndefined();
      await rt.engine.handle(decodeEvent(apiServerEvent('update', cut)));
      expect((await c.get(refOf(victim.ip)))?.metadata.ownerReferences?.map((r) => r.uid)).toEqual([victim.sub.metadata.uid]);
    } finally {
      rt.engine.close();
    }
  }, 120_000);
});
