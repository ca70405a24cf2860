/**
 * Shared lists: concurrent reconciles that ask for the same list (`shared: true`) read one list
 * from the apiserver instead of one each — job-conflict's cluster-wide Subscription and
 * InstallPlan lists, asked for by every stuck reconcile of a burst.
 *
 * Freshness is never traded: a caller only ever reads a list that started AFTER it asked, or —
 * with `sharedAfter`, its own object as it read it live — one that provably started after that
 * object was written: the rule burst snapshots use (burst-snapshots.ts). The first caller's list
 * starts at once; callers arriving while it runs join the next one, which starts when it ends (so
 * at most one list per key runs, plus one gathering). A running list is fetched to its end whoever
 * reads it (a caller that never reads cannot hold up the next one) and stops early only once every
 * reader that began has left. Items are handed to every reader in order and dropped once all
 * readers passed them; a reader that begins after items were dropped (or after its list was
 * stopped) reads a list of its own, started then. Callers of a shared list read it through without
 * awaiting other I/O in between (a loop that filters), so the buffer stays about one item long.
 *
 * Joining a running list (`sharedAfter`). A list started by a caller with `sharedAfter` records a
 * marker: the collection resourceVersion of that caller's resource — the list's own (from its
 * first page) when it lists that resource, else a one-item list of it read just before the list
 * starts. A later caller with the same resource whose object's resourceVersion is not newer than
 * the marker (compared within one resource, KEP-5504; not comparable: no) reads the running list
 * from its first item instead of waiting for the next: every change written before its object's
 * is in it, as with a list started after it asked (what the caller read live since stays live).
 * Such a list keeps its items from the first while it runs, up to `JOINABLE_ITEMS` (then it drops
 * them as before and takes no more joiners), so memory stays bounded. In a burst this saves the
 * stuck reconciles a whole second list: they arrive while the first one runs.
 */
import { compareResourceVersions } from './validate.js';
import type { KubeObject, ListOptions, Reader, VersionedRef } from './types.js';

/** Items a joinable list keeps from its first while it runs (then it takes no more joiners). */
export const JOINABLE_ITEMS = 10_000;

const resourceOf = (r: { apiVersion: string; kind: string }): string => `${r.apiVersion}/${r.kind}`;

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
      const { sharedAfter: after, ...listOpts } = opts;
      const make = (): Broadcast<KubeObject> => {
        // The marker is taken for the resource of the caller that makes the list, if it gave one.
        const marker = after && { resource: resourceOf(after), own: resourceOf(after) === resourceOf({ apiVersion, kind }) };
        const readMarker = marker && !marker.own
          ? async (): Promise<string | undefined> => {
              let rv: string | undefined;
              for await (const _ of inner.list(after.apiVersion, after.kind, { metadataOnly: true, pageSize: 1, onListResourceVersion: (v) => (rv = v) })) break;
              return rv;
            }
          : undefined;
        const source = (onVersion?: (rv: string) => void): AsyncIterable<KubeObject> =>
          inner.list(apiVersion, kind, onVersion ? { ...listOpts, onListResourceVersion: (rv) => (onVersion(rv), listOpts.onListResourceVersion?.(rv)) } : listOpts);
        return new Broadcast(source, () => ended(key), marker && { resource: marker.resource, own: marker.own, ...(readMarker ? { read: readMarker } : {}) });
      };
      /** The list this caller reads when it cannot join: the running one if it started after now, else the next. */
      const take = (): AsyncIterable<KubeObject> => {
        if (!running.has(key)) {
          const b = make();
          running.set(key, b);
          const reader = b.reader();
          b.start();
          return reader;
        }
        let next = gathering.get(key);
        if (!next) {
          next = make();
          gathering.set(key, next);
        }
        return next.reader();
      };
      const current = running.get(key);
      if (!after || !current?.mayAccept(after)) return take() as AsyncIterable<T>;
      // A running list that may have started after the caller's object was written: once its
      // marker is known, read it from the first item, or else take the list as any caller would
      // (decided then, still after this call).
      return {
        [Symbol.asyncIterator]: () =>
          (async function* (): AsyncGenerator<KubeObject> {
            yield* (await current.joins(after)) ? current.reader() : take();
          })(),
      } as AsyncIterable<T>;
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
  /** The marker's resourceVersion (see the file's comment), once known; undefined if it failed. */
  private markerVersion: string | undefined;
  private readonly markerKnown: Promise<void>;
  private markerDone!: () => void;

  constructor(
    private readonly source: (onListResourceVersion?: (rv: string) => void) => AsyncIterable<T>,
    private readonly onEnd: () => void,
    /** Joiners' resource; `own`: the list's own resourceVersion is the marker; else `read` it first. */
    private readonly marker?: { resource: string; own: boolean; read?: () => Promise<string | undefined> },
  ) {
    this.started = new Promise((r) => (this.resolveStarted = r));
    this.markerKnown = new Promise((r) => (this.markerDone = r));
  }

  /** Starts fetching, to the end (or until every begun reader left). */
  start(): void {
    this.resolveStarted();
    void this.fill();
  }

  private async fill(): Promise<void> {
    try {
      if (this.marker?.read) {
        // Read before the list starts: the list then started after every write it covers.
        try {
          this.markerVersion = await this.marker.read();
        } catch {
          this.markerVersion = undefined; // no marker: no joiners; the list itself goes on
        }
        this.markerDone();
      }
      const own = this.marker?.own ? (rv: string): void => ((this.markerVersion = rv), this.markerDone()) : undefined;
      for await (const item of this.source(own)) {
        this.items.push(item);
        this.wake();
        if (this.stopped) break;
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.finished = true;
      this.markerDone();
      this.wake();
      this.onEnd();
    }
  }

  /** Still keeps every item from the first, for joiners. */
  private joinable(): boolean {
    return this.marker !== undefined && !this.finished && !this.stopped && this.base === 0 && this.items.length < JOINABLE_ITEMS;
  }

  /** Whether a caller with `after` might join (its marker may still be unknown). */
  mayAccept(after: VersionedRef): boolean {
    if (!this.joinable() || this.marker!.resource !== resourceOf(after)) return false;
    return this.markerVersion === undefined || (compareResourceVersions(after.resourceVersion, this.markerVersion) ?? 1) <= 0;
  }

  /** Whether a caller with `after` joins: the list provably started after its object's write. */
  async joins(after: VersionedRef): Promise<boolean> {
    await this.markerKnown;
    return this.mayAccept(after) && this.markerVersion !== undefined && !this.failure;
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
    if (this.cursors.size === 0 || this.joinable()) return;
    let min = Infinity;
    for (const c of this.cursors) min = Math.min(min, c.pos);
    const drop = min - this.base;
    if (drop >= 64 || drop === this.items.length) {
      this.items.splice(0, drop);
      this.base = min;
    }
  }
}
