/**
 * Admission in front of engine.handle (wraps it from the outside; the engine is unchanged):
 *   - coalescing: events whose targets (function + object, from the functions' zero-I/O
 *     targets()) are the same as an event already WAITING to run share that waiting run and its
 *     answer. Reconciles are level-based (they read the live state when they start), so a run that
 *     has not started yet covers every event that arrived before it starts. An event for keys
 *     that are RUNNING (not waiting) queues one run behind it: it may carry news the running
 *     observation missed. At most one running + one waiting run per key set.
 *   - bounded concurrency per function: at most `maxInFlight` runs per function at once; the
 *     rest wait in order, up to `maxQueued` per function.
 *   - back-pressure: beyond that the event is answered `rate-limited` (HTTP 429 + Retry-After)
 *     before the apiserver sees the load; the Broker redelivers it later.
 * Sweeps and events no function targets pass straight through.
 */
import type { Engine } from '../core/engine.js';
import type { Outcome } from '../core/outcome.js';
import type { AnyFunction } from '../core/types.js';
import type { Trigger } from '../events/types.js';
import { refString } from '../kube/types.js';

export interface AdmissionOptions {
  functions: readonly AnyFunction[];
  /** Runs per function at once. */
  maxInFlight: number;
  /** Runs per function waiting for a slot; beyond that: 429. */
  maxQueued: number;
  /** Retry-After for a 429, in seconds. */
  retryAfterSeconds: number;
}

export interface AdmissionStats {
  /** Events that ran engine.handle themselves. */
  ran: number;
  /** Events answered by joining a waiting run. */
  coalesced: number;
  /** Events answered 429 (queue full). */
  rejected: number;
}

export interface AdmittedEngine extends Engine {
  readonly stats: AdmissionStats;
}

class Slots {
  inFlight = 0;
  /** Runs admitted and not finished (running or waiting for a slot), counted when admitted. */
  admitted = 0;
  private waiters: (() => void)[] = [];
  constructor(private readonly max: number) {}
  get queued(): number {
    return this.waiters.length;
  }
  acquire(): Promise<void> {
    if (this.inFlight < this.max) {
      this.inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  release(): void {
    const next = this.waiters.shift();
    if (next) next(); // the slot passes on: inFlight unchanged
    else this.inFlight--;
  }
}

interface KeyState {
  running?: Promise<Outcome[]>;
  waiting?: Promise<Outcome[]>;
}

export function withAdmission(engine: Engine, o: AdmissionOptions): AdmittedEngine {
  const slots = new Map(o.functions.map((f) => [f.name, new Slots(o.maxInFlight)]));
  const keys = new Map<string, KeyState>();
  const stats: AdmissionStats = { ran: 0, coalesced: 0, rejected: 0 };

  /** Function names and the coalescing key of a resource event, or undefined (pass through). */
  function classify(t: Trigger): { fns: string[]; key: string } | undefined {
    if (t.kind !== 'resource' || !engine.wants(t.ref.apiVersion, t.ref.kind)) return undefined;
    const fns: string[] = [];
    const parts: string[] = [];
    for (const f of o.functions) {
      let refs;
      try {
        refs = f.targets(t);
      } catch {
        return undefined; // the engine reports it
      }
      if (refs.length === 0) continue;
      fns.push(f.name);
      for (const r of refs) parts.push(`${f.name}|${refString(r)}`);
    }
    if (fns.length === 0) return undefined;
    return { fns, key: parts.sort().join('\n') };
  }

  async function run(t: Trigger, fns: string[], started: () => void): Promise<Outcome[]> {
    const held = fns.map((n) => slots.get(n)!);
    // Fixed order (functions' order), so two runs never wait on each other's slots crosswise.
    for (const s of held) await s.acquire();
    started();
    try {
      stats.ran++;
      return await engine.handle(t);
    } finally {
      for (const s of held) s.release();
    }
  }

  function handle(t: Trigger): Promise<Outcome[]> {
    const c = classify(t);
    if (!c) return engine.handle(t);
    const state = keys.get(c.key) ?? {};
    if (state.waiting) {
      stats.coalesced++;
      return state.waiting;
    }
    const full = c.fns.find((n) => slots.get(n)!.admitted >= o.maxInFlight + o.maxQueued);
    if (full) {
      stats.rejected++;
      return Promise.resolve([{ function: full, status: 'rate-limited', reason: `busy: ${o.maxInFlight} running and ${o.maxQueued} waiting for ${full}; retry later`, requeueAfterSeconds: o.retryAfterSeconds }]);
    }
    const before = state.running;
    const p: Promise<Outcome[]> = (before ? before.catch(() => undefined) : Promise.resolve()).then(() =>
      run(t, c.fns, () => {
        // Observing starts now: later events for these keys must queue a new run behind this one.
        const s = keys.get(c.key)!;
        if (s.waiting === p) s.waiting = undefined;
        s.running = p;
      }),
    );
    state.waiting = p;
    keys.set(c.key, state);
    for (const n of c.fns) slots.get(n)!.admitted++;
    const done = (): void => {
      for (const n of c.fns) slots.get(n)!.admitted--;
      const s = keys.get(c.key);
      if (s && s.running === p) s.running = undefined;
      if (s && !s.running && !s.waiting) keys.delete(c.key);
    };
    p.then(done, done);
    return p;
  }

  return {
    handle,
    wants: (a, k) => engine.wants(a, k),
    reconcile: (fn, ref) => engine.reconcile(fn, ref),
    close: () => engine.close(),
    stats,
  };
}
