/**
 * Admission in front of engine.handle (wraps it from the outside; the engine is unchanged):
 *   - coalescing: events whose targets (function + object, from the functions' zero-I/O
 *     targets()) are the same as an event already WAITING to run share that waiting run and its
 *     answer. Reconciles are level-based (they read the live state when they start), so a run that
 *     has not started yet covers every event that arrived before it starts. An event for keys
 *     that are RUNNING (not waiting) queues one run behind it: it may carry news the running
 *     observation missed. At most one running + one waiting run per key set.
 *   - bounded concurrency per function: at most `maxInFlight` runs per function at once; the
 *     rest wait in order, up to `maxQueued` per function. Each function's part of an event is
 *     admitted on its own: one function's backlog (thousands of healthy Subscriptions to verify)
 *     never makes another function's fix for the same event wait, nor answers it 429.
 *   - back-pressure: beyond that the event is answered `rate-limited` (HTTP 429 + Retry-After)
 *     before the apiserver sees the load; the Broker redelivers it later.
 *   - sweeps (level-based like reconciles: a waiting sweep of the same functions and namespace
 *     covers every later one) are coalesced the same way and admitted on their own slots, at most
 *     `maxSweepsInFlight` running and `maxSweepsQueued` waiting; beyond that 429 (red team 15, F1:
 *     a flood of tiny sweep events each listed the cluster at once, without bound).
 * Events no function targets pass straight through.
 */
import type { Engine } from '../core/engine.js';
import type { Outcome } from '../core/outcome.js';
import { targetKey, targetsOf, type AnyFunction } from '../core/types.js';
import { BadRequest, type Trigger } from '../events/types.js';

export interface AdmissionOptions {
  functions: readonly AnyFunction[];
  /** Runs per function at once. */
  maxInFlight: number;
  /** Runs per function waiting for a slot; beyond that: 429. */
  maxQueued: number;
  /** Retry-After for a 429, in seconds. */
  retryAfterSeconds: number;
  /** Distinct sweeps running at once (default 2) and waiting (default 8); beyond: 429. */
  maxSweepsInFlight?: number;
  maxSweepsQueued?: number;
}

/** The slots sweeps run on (not a function name: those are DNS labels). */
const SWEEPS = '(sweeps)';

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

/** One lane's slots: `max` runs at once, `queueMax` more waiting, named `what` in a 429's reason. */
class Slots {
  inFlight = 0;
  /** Runs admitted and not finished (running or waiting for a slot), counted when admitted. */
  admitted = 0;
  private waiters: (() => void)[] = [];
  constructor(
    readonly max: number,
    readonly queueMax: number,
    readonly what: string,
  ) {}
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
  /** The events that share the waiting run, oldest first. */
  joined?: Trigger[];
}

export function withAdmission(engine: Engine, o: AdmissionOptions): AdmittedEngine {
  const slots = new Map(o.functions.map((f) => [f.name, new Slots(o.maxInFlight, o.maxQueued, f.name)]));
  slots.set(SWEEPS, new Slots(o.maxSweepsInFlight ?? 2, o.maxSweepsQueued ?? 8, 'sweeps'));
  const keys = new Map<string, KeyState>();
  const stats: AdmissionStats = { ran: 0, coalesced: 0, rejected: 0 };

  /** Each targeting function's name and coalescing key (its targets), or undefined (pass through). */
  function classify(t: Trigger): { fn: string; key: string }[] | undefined {
    // An unambiguous key (red team 16: joined names and a '*' for "all" let different scopes share one
    // answer, a typo's 400 for a valid sweep or a 2xx for a typo).
    if (t.kind === 'sweep') return [{ fn: SWEEPS, key: JSON.stringify([SWEEPS, t.functions ? [...new Set(t.functions)].sort() : null, t.namespace ?? null]) }];
    if (t.kind !== 'resource' || !engine.wants(t.ref.apiVersion, t.ref.kind)) return undefined;
    const parts: { fn: string; key: string }[] = [];
    for (const f of o.functions) {
      let key;
      try {
        const refs = targetsOf(f, t);
        if (refs.length === 0) continue;
        key = refs.map((r) => `${f.name}|${targetKey(r)}`).sort().join('\n');
      } catch (e) {
        // A target no object could have: the engine's own targetsOf answers the event's 400. Any
        // other failure is a fault, never a way around the limits below.
        if (e instanceof BadRequest) return undefined;
        throw e;
      }
      parts.push({ fn: f.name, key });
    }
    return parts.length ? parts : undefined;
  }

  async function run(joined: Trigger[], fn: string, started: () => void): Promise<Outcome[]> {
    const slot = slots.get(fn)!;
    await slot.acquire();
    started();
    try {
      stats.ran++;
      // The run answers every event that joined it, so it must look at the cluster unless ALL of them
      // were already handled: a redelivered copy that waited here must not turn a new event that
      // joined it into "duplicate" (that event would be answered 2xx and never looked at).
      if (fn === SWEEPS) return await engine.handle(joined[0]!);
      const fresh = joined.find((t) => !engine.isDuplicate(t, [fn]));
      return await engine.handle(fresh ?? joined[0]!, [fn]);
    } finally {
      slot.release();
    }
  }

  /** One function's part of an event: coalesced with a waiting run of the same targets, queued, or 429. */
  function admit(t: Trigger, fn: string, key: string): Promise<Outcome[]> {
    const state = keys.get(key) ?? {};
    if (state.waiting) {
      stats.coalesced++;
      state.joined!.push(t);
      return state.waiting;
    }
    const slot = slots.get(fn)!;
    if (slot.admitted >= slot.max + slot.queueMax) {
      stats.rejected++;
      return Promise.resolve([{ ...(fn === SWEEPS ? {} : { function: fn }), status: 'rate-limited', reason: `busy: ${slot.max} running and ${slot.queueMax} waiting for ${slot.what}; retry later`, requeueAfterSeconds: o.retryAfterSeconds }]);
    }
    const before = state.running;
    const joined = [t];
    const p: Promise<Outcome[]> = (before ? before.catch(() => undefined) : Promise.resolve()).then(() =>
      run(joined, fn, () => {
        // Observing starts now: later events for these keys must queue a new run behind this one.
        const s = keys.get(key)!;
        if (s.waiting === p) {
          s.waiting = undefined;
          s.joined = undefined;
        }
        s.running = p;
      }),
    );
    state.waiting = p;
    state.joined = joined;
    keys.set(key, state);
    slot.admitted++;
    const done = (): void => {
      slot.admitted--;
      const s = keys.get(key);
      if (s && s.running === p) s.running = undefined;
      if (s && !s.running && !s.waiting) keys.delete(key);
    };
    p.then(done, done);
    return p;
  }

  async function handle(t: Trigger): Promise<Outcome[]> {
    const parts = classify(t);
    if (!parts) return engine.handle(t);
    if (parts.length === 1) return admit(t, parts[0]!.fn, parts[0]!.key);
    return (await Promise.all(parts.map((x) => admit(t, x.fn, x.key)))).flat();
  }

  return {
    handle,
    wants: (a, k) => engine.wants(a, k),
    isDuplicate: (t, only) => engine.isDuplicate(t, only),
    reconcile: (fn, ref) => engine.reconcile(fn, ref),
    trackLooks: () => engine.trackLooks(),
    drain: (untilMs) => engine.drain(untilMs),
    close: () => engine.close(),
    stats,
  };
}
