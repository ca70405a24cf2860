/**
 * shared-lists.ts, joining a running list (`sharedAfter`): a caller may read a list that started
 * before it asked only if that list provably started after the caller's own object was written
 * (a marker resourceVersion of the caller's resource, compared within that resource). Otherwise it
 * waits for the next list, as every shared caller did before.
 */
import { describe, expect, it } from 'vitest';
import { JOINABLE_ITEMS, shareLists } from '../../shared/kube/shared-lists.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { manualReader } from '../support/manual-reader.js';

const obj = (name: string): KubeObject => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name, namespace: 'n' } });
const tick = async (n = 3): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};
const SUB = 'operators.coreos.com/v1alpha1';
const after = (resourceVersion: unknown, kind = 'Subscription', apiVersion = SUB) => ({ apiVersion, kind, resourceVersion });

type Manual = ReturnType<typeof manualReader>;
const isMarker = (l: Manual['lists'][number]): boolean => l.opts.pageSize === 1 && l.opts.metadataOnly === true;
/** The lists of data (not the one-item marker reads), in the order they started. */
const data = (m: Manual): Manual['lists'] => m.lists.filter((l) => !isMarker(l));
/** Answers every marker read not yet answered, at collection resourceVersion `rv`. */
async function answerMarkers(m: Manual, rv: string, answered = new Set<unknown>()): Promise<void> {
  for (const l of m.lists.filter(isMarker)) {
    if (answered.has(l)) continue;
    answered.add(l);
    l.version(rv);
    l.push(obj('marker'));
  }
  await tick();
}

async function drain(it: AsyncIterable<KubeObject>): Promise<string[]> {
  const out: string[] = [];
  for await (const o of it) out.push(o.metadata.name);
  return out;
}

describe('shareLists: joining a running list', () => {
  it('a caller whose object is not newer than the running list of its own resource reads that list from its first item (no second list)', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const first = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('10') }));
    await tick();
    const l = m.lists[0]!;
    l.version('20');
    l.push(obj('a'));
    await tick();
    // The first reader has passed 'a'; the joiner still gets it.
    const joiner = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('15') }));
    const equal = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('20') }));
    await tick();
    l.push(obj('b'));
    l.end();
    expect(await first).toEqual(['a', 'b']);
    expect(await joiner).toEqual(['a', 'b']);
    expect(await equal).toEqual(['a', 'b']);
    expect(m.lists).toHaveLength(1);
  });

  it('a caller whose object is newer than the marker, or not comparable, or who gives none, waits for the next list (started after it asked)', async () => {
    for (const late of [{ sharedAfter: after('21') }, { sharedAfter: after('abc') }, { sharedAfter: after(undefined) }, { sharedAfter: after('5', 'ConfigMap', 'v1') }, {}]) {
      const m = manualReader();
      const r = shareLists(m.reader);
      const first = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('10') }));
      await tick();
      m.lists[0]!.version('20');
      m.lists[0]!.push(obj('a'));
      await tick();
      const asked = m.now();
      const later = drain(r.list(SUB, 'Subscription', { shared: true, ...late }));
      await tick();
      expect(m.lists, JSON.stringify(late)).toHaveLength(1);
      m.lists[0]!.end();
      expect(await first).toEqual(['a']);
      await tick();
      await answerMarkers(m, '30'); // a caller of another resource makes the next list read its marker first
      expect(data(m)).toHaveLength(2);
      expect(data(m)[1]!.startedAt).toBeGreaterThan(asked);
      data(m)[1]!.push(obj('b'));
      data(m)[1]!.end();
      expect(await later, JSON.stringify(late)).toEqual(['b']);
    }
  });

  it('a caller asking before the list\'s first page waits for its marker, then joins (or not) by it', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const first = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('10') }));
    await tick();
    const older = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('19') }));
    const newer = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('30') }));
    await tick();
    expect(m.lists).toHaveLength(1);
    m.lists[0]!.version('20');
    m.lists[0]!.push(obj('a'));
    m.lists[0]!.end();
    expect(await first).toEqual(['a']);
    expect(await older).toEqual(['a']);
    await tick();
    expect(m.lists).toHaveLength(2);
    m.lists[1]!.push(obj('b'));
    m.lists[1]!.end();
    expect(await newer).toEqual(['b']);
  });

  it('a list of another resource reads the marker of the caller\'s resource first (one item), then starts; joiners compare with that', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const first = drain(r.list(SUB, 'InstallPlan', { shared: true, sharedAfter: after('10') }));
    await tick();
    expect(m.lists).toHaveLength(1);
    const marker = m.lists[0]!;
    expect([marker.kind, marker.opts.pageSize, marker.opts.metadataOnly]).toEqual(['Subscription', 1, true]);
    // The InstallPlan list starts only once the marker is read.
    marker.version('20');
    marker.push(obj('sub-1'));
    await tick();
    expect(m.lists).toHaveLength(2);
    const plans = m.lists[1]!;
    expect([plans.kind, plans.startedAt > marker.startedAt]).toEqual(['InstallPlan', true]);
    plans.version('999'); // the InstallPlan collection's own version says nothing about Subscriptions
    plans.push(obj('ip-a'));
    await tick();
    const joiner = drain(r.list(SUB, 'InstallPlan', { shared: true, sharedAfter: after('20') }));
    const notJoiner = drain(r.list(SUB, 'InstallPlan', { shared: true, sharedAfter: after('21') }));
    await tick();
    plans.push(obj('ip-b'));
    plans.end();
    expect(await first).toEqual(['ip-a', 'ip-b']);
    expect(await joiner).toEqual(['ip-a', 'ip-b']);
    await tick();
    await answerMarkers(m, '30', new Set([marker]));
    expect(data(m)).toHaveLength(2);
    data(m)[1]!.end();
    expect(await notJoiner).toEqual([]);
  });

  it('a marker that cannot be read admits no joiner; the list itself goes on', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const first = drain(r.list(SUB, 'InstallPlan', { shared: true, sharedAfter: after('10') }));
    await tick();
    m.lists[0]!.end(new Error('forbidden'));
    await tick();
    const plans = m.lists[1]!;
    plans.push(obj('ip-a'));
    const later = drain(r.list(SUB, 'InstallPlan', { shared: true, sharedAfter: after('1') }));
    await tick();
    plans.end();
    expect(await first).toEqual(['ip-a']);
    await tick();
    await answerMarkers(m, '30', new Set([m.lists[0]]));
    expect(data(m)).toHaveLength(2);
    data(m)[1]!.end();
    expect(await later).toEqual([]);
  });

  it(`a list past ${JOINABLE_ITEMS} items drops what its readers passed and admits no joiner (memory stays bounded)`, async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    let seen = 0;
    const first = (async () => {
      for await (const _ of r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('10') })) seen++;
    })();
    await tick();
    const l = m.lists[0]!;
    l.version('20');
    for (let i = 0; i < JOINABLE_ITEMS + 100; i++) l.push(obj(`s${i}`));
    await tick(5);
    expect(seen).toBe(JOINABLE_ITEMS + 100);
    const later = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('11') }));
    await tick();
    expect(m.lists).toHaveLength(1);
    l.end();
    await first;
    await tick();
    expect(m.lists).toHaveLength(2);
    m.lists[1]!.end();
    expect(await later).toEqual([]);
  });

  it('a list started by a caller without sharedAfter has no marker: nobody joins it', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const first = drain(r.list(SUB, 'Subscription', { shared: true }));
    await tick();
    m.lists[0]!.version('20');
    const later = drain(r.list(SUB, 'Subscription', { shared: true, sharedAfter: after('1') }));
    await tick();
    m.lists[0]!.push(obj('a'));
    m.lists[0]!.end();
    expect(await first).toEqual(['a']);
    await tick();
    expect(m.lists).toHaveLength(2);
    m.lists[1]!.end();
    expect(await later).toEqual([]);
  });
});
