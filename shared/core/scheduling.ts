/** Small in-process helpers: duplicate suppression, per-key serialisation, delayed re-checks. */

/**
 * Remembers the most recent N digests (the first 16 bytes of each, e.g. of a SHA-256) for duplicate
 * suppression, in memory fixed when it is built: a ring of the digests in arrival order and an
 * open-addressing index into it (linear probing, backward-shift deletion). What it holds never grows
 * with the events seen: 10,000 digests are 288 KiB, allocated once, and nothing is allocated per
 * `add`. Adding a digest it holds changes nothing (it is evicted in its turn).
 */
export class RecentDigests {
  private readonly ring: Uint32Array;
  /** Slot of the index -> ring slot + 1 (0: empty). */
  private readonly index: Int32Array;
  private readonly mask: number;
  /** The digest being looked up, as four words (scratch: nothing is allocated per call). */
  private readonly w = new Uint32Array(4);
  private readonly wBytes = new Uint8Array(this.w.buffer);
  private next = 0;
  private count = 0;

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`RecentDigests: max must be a positive integer, got ${max}`);
    this.ring = new Uint32Array(max * 4);
    let size = 8;
    while (size < max * 2) size *= 2;
    this.index = new Int32Array(size);
    this.mask = size - 1;
  }

  get size(): number {
    return this.count;
  }

  has(digest: Uint8Array): boolean {
    return this.find(this.load(digest)) >= 0;
  }

  add(digest: Uint8Array): void {
    const w = this.load(digest);
    if (this.find(w) >= 0) return;
    const slot = this.next;
    if (this.count === this.max) this.remove(slot);
    else this.count++;
    this.ring.set(w, slot * 4);
    let i = w[0]! & this.mask;
    while (this.index[i] !== 0) i = (i + 1) & this.mask;
    this.index[i] = slot + 1;
    this.next = (slot + 1) % this.max;
  }

  private load(digest: Uint8Array): Uint32Array {
    if (digest.length < 16) throw new RangeError(`RecentDigests: a digest of at least 16 bytes is needed, got ${digest.length}`);
    for (let k = 0; k < 16; k++) this.wBytes[k] = digest[k]!;
    return this.w;
  }

  /** The index slot holding these words, or -1. */
  private find(w: Uint32Array): number {
    for (let i = w[0]! & this.mask; ; i = (i + 1) & this.mask) {
      const e = this.index[i]!;
      if (e === 0) return -1;
      const o = (e - 1) * 4;
      if (this.ring[o] === w[0] && this.ring[o + 1] === w[1] && this.ring[o + 2] === w[2] && this.ring[o + 3] === w[3]) return i;
    }
  }

  /** Takes ring slot `slot` out of the index, closing the gap so every probe chain stays whole. */
  private remove(slot: number): void {
    let i = this.ring[slot * 4]! & this.mask;
    while (this.index[i] !== slot + 1) i = (i + 1) & this.mask;
    for (let j = (i + 1) & this.mask; this.index[j] !== 0; j = (j + 1) & this.mask) {
      const home = this.ring[(this.index[j]! - 1) * 4]! & this.mask;
      // Entry j may move back to the gap i unless its home lies cyclically in (i, j].
      if (((j - home) & this.mask) >= ((j - i) & this.mask)) {
        this.index[i] = this.index[j]!;
        i = j;
      }
    }
    this.index[i] = 0;
  }
}

/** A map holding at most N entries (least recently set evicted first). */
export class RecentMap<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    return this.m.get(k);
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value!);
  }
  delete(k: string): void {
    this.m.delete(k);
  }
  get size(): number {
    return this.m.size;
  }
}

/**
 * Optional writes the apiserver refused for good (KubeError.lastingRefusal: admission such as
 * Gatekeeper or Kyverno, narrowed RBAC, validation), by the write (writeKey: its reason, and a
 * patch's content) and the
 * object state it was aimed at: the executor notes them, plans read them (PlanContext.refusedWrite)
 * so they stop asking for the same write (red team 28a F1: a CSV kept Terminating by a cleanup delete
 * refused on every look). In process, bounded, and for `ttlMs` only: a refusal may be lifted (RBAC
 * restored, a policy changed), so after that the same write is tried once more (red team 30, R1: a
 * leftover refused once was never deleted again). Another action on the same object is its own write.
 */
export class RefusedWrites {
  private readonly m: RecentMap<{ answer: string; at: number }>;
  constructor(
    max = 1_000,
    private readonly nowMs: () => number = Date.now,
    private readonly ttlMs = REFUSAL_MEMORY_MS,
  ) {
    this.m = new RecentMap(max);
  }
  note(reason: string, uid: string | undefined, resourceVersion: string | undefined, answer: string): void {
    if (uid) this.m.set(`${reason}/${uid}/${resourceVersion ?? ''}`, { answer: answer.slice(0, 300), at: this.nowMs() });
  }
  get(reason: string, uid: string | undefined, resourceVersion: string | undefined): string | undefined {
    if (!uid) return undefined;
    const k = `${reason}/${uid}/${resourceVersion ?? ''}`;
    const e = this.m.get(k);
    if (e && this.nowMs() - e.at >= this.ttlMs) {
      this.m.delete(k);
      return undefined;
    }
    return e?.answer;
  }
}

/** How long a write the apiserver refused for good is not sent again (about two sweeps). */
export const REFUSAL_MEMORY_MS = 10 * 60_000;

/** Runs tasks with the same key one at a time, so one process never races itself on an object. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

/**
 * Delayed re-checks ("look again when the fence expires"). Bounded and unref'd: this is a
 * latency optimisation only; periodic sweeps are the durable fallback if the process goes away.
 */
export class Requeuer {
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; due: number }>();
  /** Keys whose re-check is running (fired, not yet done()), with how many. */
  private readonly running = new Map<string, number>();
  /** Keys holding a place: queued or running. A running re-check keeps its place for the one it may ask next. */
  private readonly places = new Set<string>();
  constructor(private readonly max: number) {}
  /** Longer waits are re-planned after this (setTimeout overflows past ~24.8 days and would fire at once). */
  static readonly MAX_DELAY_MS = 6 * 3_600_000;

  private closed = false;

  /**
   * Whether the re-check is queued ('queued', also when it moves a queued one of the key earlier;
   * 'already' when one of the key is queued as soon or sooner), or why not. One timer per key, due at
   * the soonest time asked (on the monotonic clock: a wall-clock step does not reorder them): a look
   * that needs a re-check in 1 s is not kept waiting behind an earlier look's 10-minute fence. At most
   * `max` keys hold a place; a key whose re-check is running keeps its place until done(key), so a
   * re-check that asks for the next one is never turned away by the cap (no one would redeliver it).
   * `reserve`: asked by in-process work (a re-check's held follow-ups), which may use up to `max`
   * more places; events and sweeps, which are redelivered or run again, may not.
   */
  schedule(key: string, delayMs: number, run: () => void, reserve = false): 'queued' | 'already' | 'full' | 'closed' {
    // Closed: nothing new starts (a re-check that ends after close() would otherwise queue another).
    if (this.closed) return 'closed';
    const delay = Number.isFinite(delayMs) ? Math.min(Math.max(delayMs, 1_000), Requeuer.MAX_DELAY_MS) : Requeuer.MAX_DELAY_MS;
    const due = performance.now() + delay;
    const queued = this.timers.get(key);
    if (queued && queued.due <= due) return 'already';
    if (!this.places.has(key) && this.places.size >= (reserve ? 2 * this.max : this.max)) return 'full';
    if (queued) clearTimeout(queued.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.running.set(key, (this.running.get(key) ?? 0) + 1);
      run();
    }, delay);
    timer.unref();
    this.timers.set(key, { timer, due });
    this.places.add(key);
    return 'queued';
  }
  /** A re-check started by this Requeuer has ended (its next one, if any, is scheduled by now). */
  done(key: string): void {
    const n = (this.running.get(key) ?? 0) - 1;
    if (n > 0) this.running.set(key, n);
    else this.running.delete(key);
    if (n <= 0 && !this.timers.has(key)) this.places.delete(key);
  }
  /** Whether a re-check of the key is queued (not yet started). */
  has(key: string): boolean {
    return this.timers.has(key);
  }
  /** Keys of the re-checks scheduled and not yet started. */
  keys(): string[] {
    return [...this.timers.keys()];
  }
  get size(): number {
    return this.timers.size;
  }
  close(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.running.clear();
    this.places.clear();
  }
}

/**
 * Runs `fn` over the items with at most `limit` in flight. The first failure stops new starts;
 * the ones running are awaited (none is left to reject unhandled), then it is thrown.
 */
export async function forEachLimited<T>(items: Iterable<T> | AsyncIterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  try {
    for await (const item of items) {
      if (failure) break;
      const p: Promise<void> = fn(item)
        .catch((error: unknown) => void (failure ??= { error }))
        .finally(() => running.delete(p));
      running.add(p);
      if (running.size >= limit) await Promise.race(running);
    }
  } finally {
    await Promise.all(running);
  }
  if (failure) throw failure.error;
}
