/**
 * Shared lists: concurrent reconciles that ask for the same list (`shared: true`) read one list
 * from the apiserver instead of one each — job-conflict's cluster-wide Subscription and
 * InstallPlan lists, asked for by every stuck reconcile of a burst.
 *
 * Freshness is never traded: a caller only ever reads a list that started AFTER it asked. The
 * first caller's list starts at once; callers arriving while it runs join the next one, which
 * starts when it ends (so at most one list per key runs, plus one gathering). A running list is
 * fetched to its end whoever reads it (a caller that never reads cannot hold up the next one) and
 * stops early only once every reader that began has left. Items are handed to every reader in
 * order and dropped once all readers passed them; a reader that begins after items were dropped
 * (or after its list was stopped) reads a list of its own, started then. Callers of a shared list
 * read it through without awaiting other I/O in between (a loop that filters), so the buffer stays
 * about one item long.
 */
import type { KubeObject, ListOptions, Reader } from './types.js';

export function shareLists(inner: Reader): Reader {
  const running = new Map<string, Broadcast<KubeObject>>();
  const gathering = new Map<string, Broadcast<KubeObject>>();

  function ended(key: string): void {
    running.delete(key);
    const next = gathering.get(key);
    if (!next) return;
    gathering.delete(key);
    running.set(key, next);
    next.start();
  }

  return {
    get: (ref) => inner.get(ref),
    list<T extends KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      if (!opts.shared) return inner.list<T>(apiVersion, kind, opts);
      const key = JSON.stringify([apiVersion, kind, opts.namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? '', opts.pageSize ?? 0, opts.metadataOnly ?? false]);
      const source = (): AsyncIterable<KubeObject> => inner.list(apiVersion, kind, opts);
      if (!running.has(key)) {
        const b = new Broadcast(source, () => ended(key));
        running.set(key, b);
        const reader = b.reader();
        b.start();
        return reader as AsyncIterable<T>;
      }
      let next = gathering.get(key);
      if (!next) {
        next = new Broadcast(source, () => ended(key));
        gathering.set(key, next);
      }
      return next.reader() as AsyncIterable<T>;
    },
  };
}

/** One list, fetched once and handed to every reader of it (each asked before it started). */
class Broadcast<T> {
  private items: T[] = [];
  /** Absolute index of items[0] (items every begun reader has passed are dropped). */
  private base = 0;
  /** Readers that began reading (their next item's absolute index). */
  private readonly cursors = new Set<{ pos: number }>();
  private stopped = false;
  private finished = false;
  private failure: { error: unknown } | undefined;
  private waiters: (() => void)[] = [];
  private readonly started: Promise<void>;
  private resolveStarted!: () => void;

  constructor(
    private readonly source: () => AsyncIterable<T>,
    private readonly onEnd: () => void,
  ) {
    this.started = new Promise((r) => (this.resolveStarted = r));
  }

  /** Starts fetching, to the end (or until every begun reader left). */
  start(): void {
    this.resolveStarted();
    void this.fill();
  }

  private async fill(): Promise<void> {
    try {
      for await (const item of this.source()) {
        this.items.push(item);
        this.wake();
        if (this.stopped) break;
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.finished = true;
      this.wake();
      this.onEnd();
    }
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /**
   * A reader: it counts from its first `next()`; one that never reads holds nothing. It sees every
   * item from the first, or — beginning after items were dropped or the list was stopped — reads
   * a list of its own, started then (still after it asked).
   */
  reader(): AsyncIterable<T> {
    const self = this;
    return {
      [Symbol.asyncIterator]: () =>
        (async function* (): AsyncGenerator<T> {
          await self.started;
          if (self.base > 0 || self.stopped) {
            yield* self.source();
            return;
          }
          const cursor = { pos: 0 };
          self.cursors.add(cursor);
          try {
            for (;;) {
              while (cursor.pos - self.base < self.items.length) {
                const item = self.items[cursor.pos - self.base]!;
                cursor.pos++;
                self.trim();
                yield item;
              }
              if (self.finished) {
                if (self.failure) throw self.failure.error;
                return;
              }
              await new Promise<void>((r) => self.waiters.push(r));
            }
          } finally {
            self.cursors.delete(cursor);
            self.trim();
            // Every reader that began has left: stop fetching (readers beginning later read their own).
            if (self.cursors.size === 0 && !self.finished) self.stopped = true;
          }
        })(),
    };
  }

  /** Drops the items every begun reader has passed (none while no reader has begun). */
  private trim(): void {
    if (this.cursors.size === 0) return;
    let min = Infinity;
    for (const c of this.cursors) min = Math.min(min, c.pos);
    const drop = min - this.base;
    if (drop >= 64 || drop === this.items.length) {
      this.items.splice(0, drop);
      this.base = min;
    }
  }
}
