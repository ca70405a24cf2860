/** burst-snapshots.ts: one recent metadata list answers a burst of asks; a quiet ask never lists; never stale past maxAge. */
import { describe, expect, it } from 'vitest';
import { burstSnapshots } from '../../shared/kube/burst-snapshots.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';

const IP = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan' };
const ref = (namespace: string, name: string): Ref => ({ ...IP, namespace, name });

/**
 * A reader over a mutable set of plans; every InstallPlan list() is recorded with its options and the
 * clock when it started; a Subscription list reports `subs.rv` as its resourceVersion (the marker).
 */
function fakeReader(clock: { t: number }) {
  const objects = new Map<string, KubeObject>();
  const lists: { opts: ListOptions; at: number }[] = [];
  const markers: { at: number; rv: string }[] = [];
  const subs = { rv: '10' };
  let fail = false;
  let gate: Promise<void> | undefined;
  const reader: Reader = {
    get: async <T extends KubeObject>(r: Ref) => objects.get(`${r.namespace}/${r.name}`) as T | undefined,
    async *list<T extends KubeObject>(_a: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      if (kind === 'Subscription') {
        markers.push({ at: clock.t, rv: subs.rv });
        expect(opts).toMatchObject({ metadataOnly: true, pageSize: 1 });
        opts.onListResourceVersion?.(subs.rv);
        yield { apiVersion: 'operators.coreos.com/v1alpha1', kind, metadata: { name: 'any', namespace: 'x' } } as T;
        return;
      }
      lists.push({ opts, at: clock.t });
      if (gate) await gate;
      if (fail) throw new Error('apiserver unavailable');
      for (const o of [...objects.values()]) yield { ...o, spec: { big: 'x'.repeat(10) } } as unknown as T;
    },
  };
  const put = (ns: string, name: string, owners: string[] = []) =>
    objects.set(`${ns}/${name}`, { ...IP, metadata: { name, namespace: ns, uid: `uid-${name}`, ownerReferences: owners.map((u) => ({ apiVersion: 'v1alpha1', kind: 'Subscription', name: u, uid: u })) } });
  /** Holds every InstallPlan list started from now on until the returned function is called. */
  const hold = (): (() => void) => {
    let open!: () => void;
    gate = new Promise<void>((res) => (open = res));
    return () => {
      gate = undefined;
      open();
    };
  };
  return { reader, lists, markers, subs, put, hold, setFail: (f: boolean) => (fail = f) };
}

/** A clock at 0, a reader holding plan a/p1 (owned by s1), and burst snapshots over it. */
function setup() {
  const clock = { t: 0 };
  const f = fakeReader(clock);
  f.put('a', 'p1', ['s1']);
  return { clock, f, r: burstSnapshots(f.reader, opts(clock)) };
}

/** The asking Subscription, written at `rv`. */
const sub = (...rv: unknown[]) => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', resourceVersion: rv.length ? rv[0] : '5' });

const opts = (clock: { t: number }) => ({ threshold: 5, windowMs: 1_000, maxAgeMs: 5_000, now: () => clock.t });

describe('burstSnapshots', () => {
  it('answers nothing (no list) while asks are not a burst', async () => {
    const { clock, f, r } = setup();
    for (let i = 0; i < 10; i++) {
      clock.t += 300; // 10 asks, but never 5 within a second
      expect(await r.recentMetadata!(ref('a', 'p1'), sub())).toBeUndefined();
    }
    expect(f.lists).toEqual([]);
  });

  it('in a burst: one metadata-only list started at the burst, answering every ask for maxAge, then dropped', async () => {
    const clock = { t: 0 };
    const f = fakeReader(clock);
    f.put('a', 'p1', ['s1']);
    f.put('b', 'p2', ['s2']);
    const r = burstSnapshots(f.reader, opts(clock));
    for (let i = 0; i < 4; i++) expect(await r.recentMetadata!(ref('a', 'p1'), sub())).toBeUndefined();
    clock.t = 100;
    const m = await r.recentMetadata!(ref('a', 'p1'), sub());
    expect(m).toMatchObject({ name: 'p1', namespace: 'a', uid: 'uid-p1', ownerReferences: [{ uid: 's1' }] });
    expect(f.lists).toEqual([{ opts: expect.objectContaining({ metadataOnly: true }), at: 100 }]);
    // Only metadata is kept.
    expect(Object.keys(m!)).not.toContain('spec');
    // Within maxAge: served from that list, including other namespaces; a plan not in it is not known.
    f.put('a', 'p1', []); // changed after the list: the snapshot still says what the list saw
    clock.t = 5_100;
    expect((await r.recentMetadata!(ref('b', 'p2'), sub()))?.uid).toBe('uid-p2');
    expect((await r.recentMetadata!(ref('a', 'p1'), sub()))?.ownerReferences?.length).toBe(1);
    expect(await r.recentMetadata!(ref('a', 'new'), sub())).toBeUndefined();
    expect(f.lists.length).toBe(1);
    // Past maxAge from the list's START: never served. Not yet a burst again (the 5 latest asks span
    // more than the window): no answer; one more ask makes one, and a new list sees the change.
    clock.t = 5_101;
    expect(await r.recentMetadata!(ref('a', 'p1'), sub())).toBeUndefined();
    expect(f.lists.length).toBe(1);
    expect((await r.recentMetadata!(ref('a', 'p1'), sub()))?.ownerReferences).toEqual([]);
    expect(f.lists.map((l) => l.at)).toEqual([100, 5_101]);
  });

  it('past maxAge and no longer a burst: no answer and no list', async () => {
    const { clock, f, r } = setup();
    for (let i = 0; i < 5; i++) await r.recentMetadata!(ref('a', 'p1'), sub());
    expect(f.lists.length).toBe(1);
    clock.t = 20_000;
    expect(await r.recentMetadata!(ref('a', 'p1'), sub())).toBeUndefined();
    expect(f.lists.length).toBe(1);
  });

  it('concurrent asks share one list; a failed list answers nothing and is not retried for maxAge', async () => {
    const { clock, f, r } = setup();
    const open = f.hold();
    const asks = Array.from({ length: 20 }, () => r.recentMetadata!(ref('a', 'p1'), sub()));
    await new Promise((res) => setTimeout(res, 0));
    expect(f.lists.length).toBe(1);
    open();
    const got = await Promise.all(asks);
    expect(got.slice(0, 4)).toEqual([undefined, undefined, undefined, undefined]); // before the burst was seen
    expect(got.slice(4).every((m) => m?.uid === 'uid-p1')).toBe(true);
    expect(f.lists.length).toBe(1);

    const clock2 = { t: 0 };
    const g = fakeReader(clock2);
    g.put('a', 'p1', ['s1']);
    g.setFail(true);
    const r2 = burstSnapshots(g.reader, opts(clock2));
    for (let i = 0; i < 5; i++) expect(await r2.recentMetadata!(ref('a', 'p1'), sub())).toBeUndefined();
    expect(g.lists.length).toBe(1);
    g.setFail(false);
    clock2.t = 4_000;
    expect(await r2.recentMetadata!(ref('a', 'p1'), sub())).toBeUndefined();
    expect(g.lists.length).toBe(1);
    clock2.t = 5_001;
    for (let i = 0; i < 5; i++) await r2.recentMetadata!(ref('a', 'p1'), sub());
    expect((await r2.recentMetadata!(ref('a', 'p1'), sub()))?.uid).toBe('uid-p1');
    expect(g.lists.length).toBe(2);
  });

  it('answers only an asker whose object was written before the snapshot started (resourceVersion vs the marker read first)', async () => {
    const clock = { t: 0 };
    const f = fakeReader(clock);
    f.put('a', 'p1', ['s1']);
    f.subs.rv = '1000';
    const r = burstSnapshots(f.reader, opts(clock));
    for (let i = 0; i < 4; i++) await r.recentMetadata!(ref('a', 'p1'), sub('999'));
    expect((await r.recentMetadata!(ref('a', 'p1'), sub('999')))?.uid).toBe('uid-p1');
    expect(f.markers).toEqual([{ at: 0, rv: '1000' }]);
    expect((await r.recentMetadata!(ref('a', 'p1'), sub('1000')))?.uid).toBe('uid-p1');
    // Written after the marker: the snapshot may predate a change of the plan that came before it.
    expect(await r.recentMetadata!(ref('a', 'p1'), sub('1001'))).toBeUndefined();
    expect(await r.recentMetadata!(ref('a', 'p1'), sub('10000'))).toBeUndefined();
    // Not comparable (KEP-5504: positive decimal integers without leading zeros): never answered.
    for (const rv of ['0999', '', 'abc', '0', 999, undefined, null, '1e3', ' 999', '-1']) expect(await r.recentMetadata!(ref('a', 'p1'), sub(rv)), String(rv)).toBeUndefined();
    // Another asking resource: its resourceVersions are not comparable with the marker.
    expect(await r.recentMetadata!(ref('a', 'p1'), { apiVersion: 'v1', kind: 'Pod', resourceVersion: '5' })).toBeUndefined();
    expect(f.lists.length).toBe(1);
  });

  it('an ask that waited for a list older than maxAge by the time it ends gets nothing', async () => {
    const { clock, f, r } = setup();
    const open = f.hold();
    const early = Array.from({ length: 5 }, () => r.recentMetadata!(ref('a', 'p1'), sub()));
    await new Promise((res) => setTimeout(res, 0));
    clock.t = 20_000; // a slow list on a large cluster
    const late = r.recentMetadata!(ref('a', 'p1'), sub());
    open();
    expect(await Promise.all(early)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(await late).toBeUndefined();
  });

  it('kinds are counted and listed apart; get and list pass through', async () => {
    const { clock, f, r } = setup();
    const other = { apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p1' };
    for (let i = 0; i < 4; i++) await r.recentMetadata!(ref('a', 'p1'), sub());
    for (let i = 0; i < 4; i++) expect(await r.recentMetadata!(other, sub())).toBeUndefined();
    expect(f.lists.length).toBe(0);
    expect((await r.get(ref('a', 'p1')))?.metadata.uid).toBe('uid-p1');
  });
});
