/**
 * Red-team checks of the burst-snapshot change (shared/kube/burst-snapshots.ts, ownerref-repair
 * observe()'s recentMetadata branch, plan()'s metadataOnly branch).
 *
 * `describe('holes …')`: each test states what SHOULD hold; each failed on the first version of the
 * change and passes since the fixes (B1: a snapshot answers only Subscriptions written before its
 * marker list; B2: never older than maxAgeMs, even for an ask that waited). Each fails again if its
 * guard in burst-snapshots.ts is removed.
 *   B1 The snapshot is compensated only for changes of the PLAN ("arrives as that object's own
 *      event, decided on a live read"). But that live decision depends on the Subscription's state at
 *      the time: a plan event handled while the Subscription does not serve it is a correct noop;
 *      when the Subscription then starts serving it again (within the snapshot's life), ITS event is
 *      settled on the stale snapshot ("owners and labels complete") — the owner the plan lost is
 *      never restored. The pre-change code (GET the plan) repaired it (S0). B1: opt-out annotation
 *      lifted; B1b: currentCSV moved out of and back into the plan.
 *   B2 A list that takes longer than maxAgeMs answers its waiters (and asks arriving long after it
 *      started) with data older than maxAgeMs: "used for at most maxAgeMs from that start" fails.
 * `describe('safe …')`: passing regressions for hypotheses checked and found safe.
 */
import { describe, expect, it } from 'vitest';
import { NO_POLICY, type Plan } from '../../shared/core/types.js';
import type { ResourceTrigger } from '../../shared/events/types.js';
import { burstSnapshots } from '../../shared/kube/burst-snapshots.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { recordingEngine } from '../support/recording-engine.js';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';
import { plan as planFn } from '../../functions/ownerref-repair/plan.js';

const V1A = 'operators.coreos.com/v1alpha1';
const CREATED = '2025-01-01T00:00:00Z';
const clone = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

function sub(ns: string, name: string, rv: string, planName: string, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: V1A,
    kind: 'Subscription',
    metadata: { name, namespace: ns, uid: `${ns}-${name}-uid`, resourceVersion: rv, ...(annotations ? { annotations } : {}) },
    spec: { name: `pkg-${name}` },
    status: { currentCSV: `csv-${name}`, installPlanRef: { apiVersion: V1A, kind: 'InstallPlan', name: planName, namespace: ns, uid: `${ns}-${planName}-uid` } },
  };
}

function ip(ns: string, name: string, owner: string | undefined, rv: string, csv: string): KubeObject {
  return {
    apiVersion: V1A,
    kind: 'InstallPlan',
    metadata: {
      name,
      namespace: ns,
      uid: `${ns}-${name}-uid`,
      resourceVersion: rv,
      creationTimestamp: CREATED,
      ...(owner ? { ownerReferences: [{ apiVersion: V1A, kind: 'Subscription', name: owner, uid: `${ns}-${owner}-uid`, controller: false, blockOwnerDeletion: false }] } : {}),
      labels: { [`operators.coreos.com/pkg-${owner ?? 's'}.${ns}`]: '' },
    },
    spec: { clusterServiceVersionNames: [csv] },
  };
}

/** The asking Subscription, written long before any snapshot here. */
const AFTER = { apiVersion: V1A, kind: 'Subscription', resourceVersion: '5' };

const event = (object: KubeObject, id: string): ResourceTrigger => ({
  kind: 'resource',
  verb: 'update',
  mode: 'resource',
  ref: { apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata.namespace!, name: object.metadata.name },
  object: clone(object),
  meta: { id, source: 'apiserversource', type: 'dev.knative.apiserver.resource.update' },
});

/** A live cluster; a list is a consistent snapshot at its start (as the apiserver's paginated list). */
function cluster() {
  const objs = new Map<string, KubeObject>();
  const key = (kind: string, ns: string | undefined, name: string): string => `${kind}/${ns}/${name}`;
  // One revision counter for every write, as etcd's: each put stamps the next resourceVersion.
  let rev = 0;
  const put = (o: KubeObject): KubeObject => {
    const stored = clone(o);
    stored.metadata.resourceVersion = String(++rev);
    objs.set(key(o.kind, o.metadata.namespace, o.metadata.name), stored);
    return clone(stored);
  };
  const reader: Reader = {
    async get<T extends KubeObject>(ref: Ref): Promise<T | undefined> {
      const o = objs.get(key(ref.kind, ref.namespace, ref.name));
      return o ? (clone(o) as T) : undefined;
    },
    list<T extends KubeObject>(_a: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      const items = [...objs.values()].filter((o) => o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace)).map(clone);
      opts.onListResourceVersion?.(String(rev));
      return (async function* () {
        for (const o of items) yield o as T;
      })();
    },
  };
  return { put, reader, objs };
}

const engineOn = (reader: Reader) => recordingEngine(reader, { now: () => new Date('2026-01-01T00:00:00Z') });

// =============================================================================================
// HOLES
// =============================================================================================

describe('holes: burst snapshots', () => {
  it('B1 a plan loses its owner while the Subscription is opted out; the opt-out is lifted within the snapshot\'s life: the Subscription\'s event is settled "noop" on the stale snapshot and the owner is never restored', async () => {
    const { o, plans, live } = await ownerLostThenServedAgain(true, 'opt-out');
    // The same live state, judged by the pure plan on live reads: a repair is due.
    expect(live.kind).toBe('act');
    // SHOULD: the Subscription's event repairs ip-s (adds s's ownerReference), as before the change.
    expect({ status: o[0]!.status, plans: plans.map((p) => (p.kind === 'noop' ? `noop: ${p.reason}` : p.kind)) }).toEqual({ status: 'acted', plans: ['act'] });
  });

  it('B1b same without any annotation: the plan\'s event is a noop while s\'s currentCSV is not in the plan; s\'s next event (currentCSV now in it) is settled on the stale snapshot', async () => {
    const { o, plans, live } = await ownerLostThenServedAgain(true, 'csv');
    expect(live.kind).toBe('act');
    expect({ status: o[0]!.status, plans: plans.map((p) => (p.kind === 'noop' ? `noop: ${p.reason}` : p.kind)) }).toEqual({ status: 'acted', plans: ['act'] });
  });

  it('B2 a list slower than maxAgeMs answers an ask made long after it started with data older than maxAgeMs', async () => {
    const clock = { t: 0 };
    const P = { apiVersion: V1A, kind: 'InstallPlan', namespace: 'tenant', name: 'ip-s' };
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const inner: Reader = {
      get: async () => undefined,
      list<T extends KubeObject>(_a: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
        // Consistent at its start: the plan was owned then.
        const seen = ip('tenant', 'ip-s', 's', '10', 'csv-s');
        opts.onListResourceVersion?.('100');
        if (kind === 'Subscription') return (async function* () {})();
        return (async function* () {
          await gate; // a large cluster: many pages
          yield seen as T;
        })();
      },
    };
    const r = burstSnapshots(inner, { threshold: 3, windowMs: 1_000, maxAgeMs: 5_000, now: () => clock.t });
    const early = [0, 1, 2].map(() => r.recentMetadata!(P, AFTER)); // the third starts the list at t=0
    await new Promise((res) => setTimeout(res, 0));
    // 20 s later (owner since removed), a new ask: the list under way started 20 s ago.
    clock.t = 20_000;
    const late = r.recentMetadata!(P, AFTER);
    open();
    await Promise.all(early);
    // SHOULD: nothing from a list started more than maxAgeMs before (the caller reads live).
    expect(await late).toBeUndefined();
  });
});


/**
 * t=0 a burst (3 other Subscriptions' events) builds a snapshot: tenant/ip-s owned by s, labelled.
 * t=1s s stops serving ip-s (opt-out annotation, or a currentCSV the plan does not install); the
 * admin removes s's owner from ip-s; the plan's event is decided live: noop (s does not serve it).
 * t=2s s serves ip-s again: s's event. Returns that event's outcome and the plans executed for it.
 */
async function ownerLostThenServedAgain(snapshots: boolean, how: 'opt-out' | 'csv') {
  const c = cluster();
  const clock = { t: 0 };
  const reader = snapshots ? burstSnapshots(c.reader, { threshold: 3, windowMs: 1_000, maxAgeMs: 5_000, now: () => clock.t }) : c.reader;
  const { engine, plans } = engineOn(reader);
  c.put(sub('tenant', 's', '1', 'ip-s'));
  c.put(ip('tenant', 'ip-s', 's', '10', 'csv-s'));
  const others = ['a', 'b', 'c'].map((x) => sub(`ns-${x}`, x, '1', `ip-${x}`)).map((o) => {
    const stored = c.put(o);
    c.put(ip(o.metadata.namespace!, `ip-${n(o)}`, n(o), '10', `csv-${n(o)}`));
    return stored;
  });
  for (const [i, o] of others.entries()) await engine.handle(event(o, `cat-${i}`));
  // Not vacuous: the burst's third event (the threshold) was settled from the snapshot.
  const last = plans.at(-1)!;
  expect(!snapshots || (last.kind === 'noop' && last.reason.includes('recent InstallPlan metadata'))).toBe(true);
  expect(plans.every((p) => p.kind === 'noop')).toBe(true);

  clock.t = 1_000;
  const away = how === 'opt-out' ? sub('tenant', 's', '3', 'ip-s', { [MEDIC.optOut]: 'true' }) : { ...sub('tenant', 's', '3', 'ip-s'), status: { ...(sub('tenant', 's', '3', 'ip-s').status as object), currentCSV: 'csv-elsewhere' } };
  await engine.handle(event(c.put(away), 'away'));
  const stripped = c.put(ip('tenant', 'ip-s', undefined, '11', 'csv-s'));
  plans.length = 0;
  await engine.handle(event(stripped, 'owner-removed'));
  // Nothing is written to ip-s: with s opted out its part is only an optional action policy refuses
  // (a Warning Event; this engine records plans without a policy), otherwise there is nothing to do.
  const refusedOnly = (p: Plan): boolean => p.kind === 'act' && p.actions.every((a) => a.optional && (a.regarding as { annotations?: Record<string, string> } | undefined)?.annotations?.[MEDIC.optOut] === 'true');
  expect(plans.map((p) => (how === 'opt-out' ? refusedOnly(p) : p.kind === 'noop'))).toEqual([true]);

  clock.t = 2_000;
  const back = c.put(sub('tenant', 's', '4', 'ip-s'));
  plans.length = 0;
  const o = await engine.handle(event(back, 'back'));
  engine.close();
  const livePlan = (await c.reader.get({ apiVersion: V1A, kind: 'InstallPlan', namespace: 'tenant', name: 'ip-s' }))!;
  const live = planFn({ installPlan: livePlan, subscriptions: [back] }, { now: new Date('2026-01-01T00:00:00Z'), options: {}, policy: NO_POLICY });
  return { o, plans, live };
}

function n(o: KubeObject): string {
  return o.metadata.name;
}

// =============================================================================================
// SAFE
// =============================================================================================

describe('safe: burst snapshots', () => {
  it('S0 control for B1/B1b: the same sequences on the reader without snapshots repair ip-s', async () => {
    for (const how of ['opt-out', 'csv'] as const) {
      const { o, plans } = await ownerLostThenServedAgain(false, how);
      expect({ how, status: o[0]!.status, kinds: plans.map((p) => p.kind) }).toEqual({ how, status: 'acted', kinds: ['act'] });
    }
  });

  const P = (ns: string, name: string): Ref => ({ apiVersion: V1A, kind: 'InstallPlan', namespace: ns, name });

  it('S1 recentMetadata never rejects, whatever the list yields or throws', async () => {
    const clock = { t: 0 };
    const bad: Reader = {
      get: async () => undefined,
      list<T extends KubeObject>(): AsyncIterable<T> {
        throw new Error('sync throw');
      },
    };
    const r1 = burstSnapshots(bad, { threshold: 1, windowMs: 1_000, maxAgeMs: 5_000, now: () => clock.t });
    await expect(r1.recentMetadata!(P('a', 'b'), AFTER)).resolves.toBeUndefined();
    const junk: Reader = {
      get: async () => undefined,
      list<T extends KubeObject>(): AsyncIterable<T> {
        return (async function* () {
          yield {} as T;
          yield { metadata: null } as unknown as T;
          yield null as unknown as T;
        })();
      },
    };
    const r2 = burstSnapshots(junk, { threshold: 1, windowMs: 1_000, maxAgeMs: 5_000, now: () => clock.t });
    await expect(r2.recentMetadata!(P('a', 'b'), AFTER)).resolves.toBeUndefined();
  });

  it('S2 odd event shapes reaching claimHeld through observe never throw and never settle a claim the snapshot does not hold', async () => {
    const c = cluster();
    c.put(ip('tenant', 'ip-s', 's', '10', 'csv-s'));
    const reader = burstSnapshots(c.reader, { threshold: 1, windowMs: 1_000, maxAgeMs: 5_000, now: () => 0 });
    const base = sub('tenant', 's', '1', 'ip-s');
    const odd: KubeObject[] = [
      { ...base, spec: null as unknown as Record<string, unknown> },
      { ...base, spec: { name: { toString: 1 } } as unknown as Record<string, unknown> },
      { ...base, status: { installPlanRef: { name: 'ip-s', uid: 'tenant-ip-s-uid' } }, metadata: { ...base.metadata, uid: undefined } },
      { ...base, metadata: { ...base.metadata, uid: 'other' } },
      { ...base, status: { ...(base.status as object), installPlanRef: { name: 'ip-s', uid: 'wrong' } } },
    ];
    // Not vacuous: the genuine claim IS settled from the snapshot.
    const genuine = await ownerrefRepair.observe({ ...event(base, 'g').ref, hint: { object: base } }, reader, { now: new Date(), options: {}, policy: NO_POLICY, clock: () => new Date() });
    expect(genuine?.metadataOnly).toBe(true);
    for (const o of odd) {
      const ref = { ...event(o, 'x').ref, hint: { object: o } };
      const got = await ownerrefRepair.observe(ref, reader, { now: new Date(), options: {}, policy: NO_POLICY, clock: () => new Date() });
      // Only the genuine claim (owner uid + label + plan uid) may end metadata-only.
      if (got?.metadataOnly) expect(o.metadata.uid).toBe('tenant-s-uid');
    }
  });

  it('S3 plan() with metadataOnly never acts, whatever the subscriptions', () => {
    const installPlan = { ...ip('tenant', 'ip-s', undefined, '10', 'csv-s') };
    const p = planFn({ installPlan, subscriptions: [sub('tenant', 's', '1', 'ip-s')], metadataOnly: true }, { now: new Date(), options: {}, policy: NO_POLICY });
    expect(p.kind).toBe('requeue');
  });
});
