/** shared-lists.ts: concurrent callers of the same list share one read, never one that started before they asked. */
import { describe, expect, it } from 'vitest';
import { shareLists } from '../../shared/kube/shared-lists.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';

const obj = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'n' } });
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/** A reader whose lists are fed by hand: each list() call is one "apiserver list", recorded with the time it started. */
function manualReader() {
  const lists: { opts: ListOptions; startedAt: number; push(o: KubeObject): void; end(error?: Error): void; returned: boolean }[] = [];
  let clock = 0;
  const reader: Reader = {
    async get(_ref: Ref) {
      return undefined;
    },
    list<T extends KubeObject>(_apiVersion: string, _kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      const queue: (KubeObject | { end: true; error?: Error })[] = [];
      let wake: (() => void) | undefined;
      const rec = {
        opts,
        startedAt: clock++,
        returned: false,
        push(o: KubeObject) {
          queue.push(o);
          wake?.();
        },
        end(error?: Error) {
          queue.push({ end: true, ...(error ? { error } : {}) });
          wake?.();
        },
      };
      lists.push(rec);
      return (async function* () {
        try {
          for (;;) {
            while (queue.length === 0) await new Promise<void>((r) => (wake = r));
            const x = queue.shift()!;
            if ('end' in x) {
              if (x.error) throw x.error;
              return;
            }
            yield x as T;
          }
        } finally {
          rec.returned = true;
        }
      })();
    },
  };
  return { reader, lists, now: () => clock++ };
}

async function drain(it: AsyncIterable<KubeObject>): Promise<string[]> {
  const out: string[] = [];
  for await (const o of it) out.push(o.metadata.name);
  return out;
}

type Manual = ReturnType<typeof manualReader>;

/**
 * The scene most cases share: a first shared list is running when `ask()` takes its callers' lists
 * (so they wait for the next one); then the first list ends. Returns what `ask` made and the second
 * list — theirs — for the test to feed.
 */
async function askWhileOneRuns<T>(m: Manual, r: Reader, ask: () => T): Promise<{ asked: T; next: Manual['lists'][number] }> {
  const running = drain(r.list('v1', 'ConfigMap', { shared: true }));
  await tick();
  const asked = ask();
  m.lists[0]!.end();
  await running;
  await tick();
  return { asked, next: m.lists[1]! };
}

describe('shareLists', () => {
  it('a list without `shared` is never shared', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const a = drain(r.list('v1', 'ConfigMap'));
    const b = drain(r.list('v1', 'ConfigMap'));
    await tick();
    expect(m.lists).toHaveLength(2);
    for (const l of m.lists) l.end();
    expect([await a, await b]).toEqual([[], []]);
  });

  it('callers arriving while a list runs share ONE next list, which starts after the running one ended and after they all asked', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const first = drain(r.list('v1', 'ConfigMap', { shared: true }));
    await tick();
    expect(m.lists).toHaveLength(1);
    // Three more reconciles ask while the first list is still being read.
    const askedAt: number[] = [];
    const later = [0, 1, 2].map(() => {
      askedAt.push(m.now());
      return drain(r.list('v1', 'ConfigMap', { shared: true }));
    });
    await tick();
    expect(m.lists).toHaveLength(1); // not started yet: they wait for a list that starts after them
    m.lists[0]!.push(obj('a'));
    m.lists[0]!.end();
    expect(await first).toEqual(['a']);
    await tick();
    expect(m.lists).toHaveLength(2);
    expect(m.lists[1]!.startedAt).toBeGreaterThan(Math.max(...askedAt));
    m.lists[1]!.push(obj('a'));
    m.lists[1]!.push(obj('b'));
    m.lists[1]!.end();
    expect(await Promise.all(later)).toEqual([['a', 'b'], ['a', 'b'], ['a', 'b']]);
    // Nothing runs any more: the next caller starts its own list at once.
    const again = drain(r.list('v1', 'ConfigMap', { shared: true }));
    await tick();
    expect(m.lists).toHaveLength(3);
    m.lists[2]!.end();
    expect(await again).toEqual([]);
  });

  it('different lists (namespace, selector) are not shared', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const its = [r.list('v1', 'ConfigMap', { shared: true }), r.list('v1', 'ConfigMap', { shared: true, namespace: 'x' }), r.list('v1', 'ConfigMap', { shared: true, labelSelector: 'a=b' }), r.list('v1', 'Secret', { shared: true })];
    const all = its.map(drain);
    await tick();
    expect(m.lists).toHaveLength(4);
    for (const l of m.lists) l.end();
    await Promise.all(all);
  });

  it('a reader that stops early neither stalls the others nor leaks the list; the last one leaving stops the read', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const {
      asked: [quitter, stayer],
      next: l,
    } = await askWhileOneRuns(m, r, () => [
      (async () => {
        for await (const o of r.list('v1', 'ConfigMap', { shared: true })) return o.metadata.name;
        return undefined;
      })(),
      drain(r.list('v1', 'ConfigMap', { shared: true })),
    ] as const);
    l.push(obj('a'));
    l.push(obj('b'));
    l.push(obj('c'));
    l.end();
    expect(await quitter).toBe('a');
    expect(await stayer).toEqual(['a', 'b', 'c']);

    // All readers stop early: the underlying read is returned (no more pages fetched).
    const solo = (async () => {
      for await (const o of r.list('v1', 'ConfigMap', { shared: true })) return o.metadata.name;
      return undefined;
    })();
    await tick();
    const l2 = m.lists[2]!;
    l2.push(obj('x'));
    expect(await solo).toBe('x');
    // A caller asking now waits for a list that starts after it asked...
    const next = drain(r.list('v1', 'ConfigMap', { shared: true }));
    await tick();
    expect(m.lists).toHaveLength(3);
    // ... which comes as soon as the stopped read's in-flight page is in: it is not read further.
    l2.push(obj('y'));
    await tick();
    await tick();
    expect(l2.returned).toBe(true);
    expect(m.lists).toHaveLength(4);
    m.lists[3]!.push(obj('z'));
    m.lists[3]!.end();
    expect(await next).toEqual(['z']);
  });

  it('an error reaches every reader of that list', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const {
      asked: [a, b],
      next,
    } = await askWhileOneRuns(m, r, () => [drain(r.list('v1', 'ConfigMap', { shared: true })), drain(r.list('v1', 'ConfigMap', { shared: true }))] as const);
    next.push(obj('a'));
    next.end(new Error('apiserver unreachable'));
    await expect(a).rejects.toThrow('apiserver unreachable');
    await expect(b).rejects.toThrow('apiserver unreachable');
  });

  it('a caller that takes its list and begins reading late reads a list of its own (items others passed are gone), started after it asked', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const {
      asked: [fast, lateIt],
      next: l,
    } = await askWhileOneRuns(m, r, () => [drain(r.list('v1', 'ConfigMap', { shared: true })), r.list('v1', 'ConfigMap', { shared: true })[Symbol.asyncIterator]()] as const);
    for (const n of ['a', 'b', 'c']) l.push(obj(n));
    l.end();
    expect(await fast).toEqual(['a', 'b', 'c']);
    const first = lateIt.next();
    await tick();
    expect(m.lists).toHaveLength(3);
    m.lists[2]!.push(obj('d'));
    m.lists[2]!.end();
    const late: string[] = [];
    for (let x = await first; !x.done; x = await lateIt.next()) late.push(x.value.metadata.name);
    expect(late).toEqual(['d']);
  });

  it('a caller that takes a shared list and never reads it holds up no one: the running list is read to its end anyway', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    r.list('v1', 'ConfigMap', { shared: true }); // taken, never read
    await tick();
    const later = drain(r.list('v1', 'ConfigMap', { shared: true }));
    m.lists[0]!.push(obj('a'));
    m.lists[0]!.end();
    await tick();
    expect(m.lists).toHaveLength(2);
    m.lists[1]!.end();
    expect(await later).toEqual([]);
  });

  it('a slow reader does not hold back a fast one (items are buffered, then dropped once all passed them)', async () => {
    const m = manualReader();
    const r = shareLists(m.reader);
    const {
      asked: [fast, slowIt, slowFirst],
      next: l,
    } = await askWhileOneRuns(m, r, () => {
      const fastOne = drain(r.list('v1', 'ConfigMap', { shared: true }));
      const it = r.list('v1', 'ConfigMap', { shared: true })[Symbol.asyncIterator]();
      // The slow one begins now (its first next()), then reads nothing until the fast one is done.
      return [fastOne, it, it.next()] as const;
    });
    for (const n of ['a', 'b', 'c']) l.push(obj(n));
    l.end();
    expect(await fast).toEqual(['a', 'b', 'c']);
    const slow: string[] = [];
    for (let x = await slowFirst; !x.done; x = await slowIt.next()) slow.push(x.value.metadata.name);
    expect(slow).toEqual(['a', 'b', 'c']);
    expect(m.lists).toHaveLength(2);
  });
});
