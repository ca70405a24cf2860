/** Small in-process helpers: duplicate suppression, per-key serialisation, delayed re-checks. */

/** Remembers the most recent N keys (insertion order), for duplicate suppression. */
export class RecentSet {
  private readonly keys = new Set<string>();
  constructor(private readonly max: number) {}
  has(k: string): boolean {
    return this.keys.has(k);
  }
  add(k: string): void {
    this.keys.delete(k);
    this.keys.add(k);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value!);
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
  private readonly timers = new Map<string, NodeJS.Timeout>();
  constructor(private readonly max: number) {}
  /** Longer waits are re-planned after this (setTimeout overflows past ~24.8 days and would fire at once). */
  static readonly MAX_DELAY_MS = 6 * 3_600_000;

  schedule(key: string, delayMs: number, run: () => void): void {
    if (this.timers.has(key) || this.timers.size >= this.max) return;
    const delay = Number.isFinite(delayMs) ? Math.min(Math.max(delayMs, 1_000), Requeuer.MAX_DELAY_MS) : Requeuer.MAX_DELAY_MS;
    const t = setTimeout(() => {
      this.timers.delete(key);
      run();
    }, delay);
    t.unref();
    this.timers.set(key, t);
  }
  /** Keys of the re-checks scheduled and not yet started. */
  keys(): string[] {
    return [...this.timers.keys()];
  }
  get size(): number {
    return this.timers.size;
  }
  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
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
