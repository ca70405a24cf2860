/**
 * Shared lists: concurrent reconciles that ask for the same list (`shared: true`) read one list
 * from the apiserver instead of one each — job-conflict's cluster-wide Subscription and
 * InstallPlan lists, asked for by every stuck reconcile of a burst.
 *
 * Freshness is never traded: a caller only ever shares a list that starts AFTER it asked. The
 * first caller's list starts at once; callers arriving while it runs join the next one, which
 * starts when it ends (so at most one list per key runs, plus one gathering). Items are handed to
 * every caller in order; a caller reading slowly only makes the shared buffer longer, never
 * stalls the others. Callers of a shared list must read it through without awaiting other I/O in
 * between (a loop that filters); the list that runs must end before the next one starts.
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
      const key = JSON.stringify([apiVersion, kind, opts.namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? '', opts.pageSize ?? 0]);
      const source = (): AsyncIterable<KubeObject> => inner.list(apiVersion, kind, opts);
      const now = running.get(key);
      if (!now) {
        const b = new Broadcast(source, () => ended(key));
        running.set(key, b);
        const reader = b.join();
        b.start();
        return reader as AsyncIterable<T>;
      }
      let next = gathering.get(key);
      if (!next) {
        next = new Broadcast(source, () => ended(key));
        gathering.set(key, next);
      }
      return next.join() as AsyncIterable<T>;
    },
  };
}

/** One list read once and handed to every reader that joined before it started. */
class Broadcast<T> {
  private items: T[] = [];
  /** Absolute index of items[0] (items every reader has passed are dropped). */
  private base = 0;
  private readonly cursors = new Set<{ pos: number }>();
  private it: AsyncIterator<T> | undefined;
  private pulling: Promise<void> | undefined;
  private finished = false;
  private failure: { error: unknown } | undefined;
  private readonly started: Promise<void>;
  private resolveStarted!: () => void;

  constructor(
    private readonly source: () => AsyncIterable<T>,
    private readonly onEnd: () => void,
  ) {
    this.started = new Promise((r) => (this.resolveStarted = r));
  }

  start(): void {
    this.it = this.source()[Symbol.asyncIterator]();
    this.resolveStarted();
  }

  /** A reader, registered now (before the list starts): it sees every item from the first. */
  join(): AsyncIterable<T> {
    const cursor = { pos: 0 };
    this.cursors.add(cursor);
    const self = this;
    let used = false;
    return {
      [Symbol.asyncIterator]: () => {
        if (used) throw new Error('a shared list can be read once');
        used = true;
        return (async function* (): AsyncGenerator<T> {
          try {
            await self.started;
            for (;;) {
              while (cursor.pos - self.base < self.items.length) {
                const item = self.items[cursor.pos - self.base]!;
                cursor.pos++;
                self.trim();
                yield item;
              }
              if (self.failure) throw self.failure.error;
              if (self.finished) return;
              await self.pull();
            }
          } finally {
            self.leave(cursor);
          }
        })();
      },
    };
  }

  private pull(): Promise<void> {
    this.pulling ??= (async () => {
      try {
        const r = await this.it!.next();
        if (r.done) this.finish();
        else this.items.push(r.value);
      } catch (error) {
        this.failure = { error };
        this.finish();
      } finally {
        this.pulling = undefined;
      }
    })();
    return this.pulling;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.onEnd();
  }

  private leave(cursor: { pos: number }): void {
    this.cursors.delete(cursor);
    this.trim();
    // Nobody reads any more: stop fetching pages (and let the next list start).
    if (this.cursors.size === 0 && !this.finished) {
      this.finish();
      void Promise.resolve(this.pulling).then(() => this.it?.return?.()).catch(() => undefined);
    }
  }

  /** Drops the items every reader has passed. */
  private trim(): void {
    let min = Infinity;
    for (const c of this.cursors) min = Math.min(min, c.pos);
    if (min === Infinity) min = this.base + this.items.length;
    const drop = min - this.base;
    if (drop > 0) {
      this.items.splice(0, drop);
      this.base = min;
    }
  }
}
