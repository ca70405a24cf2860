/**
 * The engine routes a Trigger to the functions that want it and reconciles each target
 * level-based: observe the current state, plan, execute; on a precondition conflict re-observe
 * and re-plan (bounded). Sweeps walk every function's sweep() with bounded concurrency.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { BadRequest, type ResourceTrigger, type SweepTrigger, type Trigger } from '../events/types.js';
import { KubeError } from '../kube/errors.js';
import { InvalidValue } from '../kube/validate.js';
import { refString, type Reader, type Ref } from '../kube/types.js';
import { WritesThenFailed, type Execute, type ExecResult } from './executor.js';
import { worst, type ActionResult, type Outcome } from './outcome.js';
import { claimDigest, targetsOf, withoutHint, type AnyFunction, type FunctionOptions, type PlanContext, type PlanPolicy, type TargetRef } from './types.js';
import { RecentDigests, Requeuer, KeyedMutex, forEachLimited, type RefusedWrites } from './scheduling.js';

/** An acted outcome asking to be looked at again within this many seconds is followed up at once. */
const FOLLOW_UP_MAX_SECONDS = 5;

/** Outcomes whose requeueAfterSeconds asks for a re-check. */
const RECHECKED: readonly string[] = ['requeued', 'acted', 'dry-run', 'deferred', 'refused', 'rate-limited'];

/** Whether an outcome asks the engine for a re-check (the engine queues one; the CLI waits for it). */
export function asksRecheck(o: Outcome): boolean {
  return Boolean(o.requeueAfterSeconds) && RECHECKED.includes(o.status);
}

/** Outcomes the Broker retries (429, 5xx). */
const RETRIED: readonly string[] = ['rate-limited', 'transient', 'failed'];

/**
 * Where a look comes from: an event (the Broker redelivers a non-2xx answer), a sweep (its next run
 * is the fallback), or an in-process re-check (its answer reaches no one: the engine retries it).
 */
type Origin = 'event' | 'sweep' | 'recheck';

/**
 * A re-check that ends as the Broker would retry an event (transient, failed; in the CLI, whose
 * report shows a failure, transient only) is tried again in process: after 2 s, doubling, each
 * ±20 % (keys that failed together do not retry together), at most 6 times (about 2 minutes), then
 * given up with an error in the log, as the Broker gives an event up to its dead-letter sink: the
 * next sweep looks again.
 */
const RECHECK_RETRY_MS = 2_000;
const RECHECK_RETRIES = 6;

/** The longest delay setTimeout takes (2^31 - 1 ms); beyond it Node fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface EngineDeps {
  functions: AnyFunction[];
  options: Record<string, FunctionOptions>;
  reader: Reader;
  execute: Execute;
  /** The apiserver's clock (see Kube.serverNow): fences and deadlines never expire early on a skewed host. */
  now: () => Date;
  policy: PlanPolicy;
  log: Logger;
  maxReplans: number;
  sweepConcurrency: number;
  /** Immediate re-checks after an action that asks to be re-checked (0 disables). */
  followUps: number;
  onPlan?: (fn: string, decision: string) => void;
  /** Every function name there is (enabled or not): a sweep naming another is a 400 (default: the active ones). */
  knownFunctions?: readonly string[];
  /** Optional writes the apiserver refused for good (the executor notes them): plans see them as PlanContext.refusedWrite. */
  refusals?: RefusedWrites;
}

export interface Engine {
  /** `only`: run just these functions' part of a resource event (admission runs each function apart). */
  handle(trigger: Trigger, only?: readonly string[]): Promise<Outcome[]>;
  /** Whether any function handles events about this kind (decided before reading a body). */
  wants(apiVersion: string, kind: string): boolean;
  /** Whether handle(trigger, only) would answer "duplicate of an event already handled" now. */
  isDuplicate(trigger: Trigger, only?: readonly string[]): boolean;
  reconcile(fn: AnyFunction, ref: Ref): Promise<Outcome>;
  /**
   * Follows the re-checks already scheduled (requeues, and the re-checks those schedule) until none
   * is left or `untilMs` (epoch ms) passes: the CLI's way to finish what a sweep started. Returns every
   * look at each target since trackLooks(), in order, keyed `function|Kind/namespace/name` (first
   * passes, their immediate follow-ups, held follow-ups, re-checks), and the targets whose re-check
   * is still scheduled or running at the end.
   */
  drain(untilMs: number): Promise<{ looks: Map<string, Outcome[]>; pending: string[] }>;
  /**
   * Records every look at every target from now on, for the next drain() to return (the CLI calls
   * it before its run, so a re-check due during a long sweep counts too).
   */
  trackLooks(): void;
  /** Stops pending requeue timers (shutdown, tests); a re-check needed after it is a transient outcome. */
  close(): void;
}

export function createEngine(deps: EngineDeps): Engine {
  const refusals = deps.refusals;
  const refusedWrite = refusals ? (write: string, uid: string | undefined, rv: string | undefined) => refusals.get(write, uid, rv) : undefined;
  const { functions, reader, execute, log } = deps;
  const seen = new RecentDigests(10_000);
  const kinds = new Set(functions.flatMap((f) => f.kinds));
  const requeuer = new Requeuer(1_000);
  let closed = false;
  const mutex = new KeyedMutex();
  /** Requeued reconciles under way, their keys (drain waits for them). */
  const rechecking = new Map<Promise<void>, string>();
  /** While tracking (the CLI): every look at each target, in order. */
  let history: Map<string, Outcome[]> | undefined;
  /** A wake-up for the drain loop. */
  let wake: (() => void) | undefined;
  /** Outcomes that ask for a re-check the bounded queue could not take (full, or closed). */
  const unqueued = new WeakSet<Outcome>();

  /** One target's reconcile, then the immediate looks at what its actions left held (`origin`: see Origin). */
  async function reconcile(fn: AnyFunction, ref: Ref, chain = true, origin: Origin = 'event'): Promise<Outcome> {
    let outcome = await reconcileKey(fn, ref, origin);
    const asked = outcome;
    // An object we deleted is still held by a finalizer (maybe ours): check it now, for every
    // function, instead of waiting for its next event. One level deep, never recursive.
    if (chain) {
      const held = (outcome.actions ?? []).flatMap((a) => (a.held ? [a.held] : []));
      const followUps: Outcome[] = [];
      for (const h of held) {
        const t = { kind: 'resource' as const, verb: 'update' as const, mode: 'reference' as const, ref: h, meta: { id: 'held', source: 'olm-medic', type: 'io.olm-medic.held' } };
        for (const f of functions) for (const r of targetsOf(f, t)) followUps.push(unpromised(await reconcile(f, r, false, origin), origin));
      }
      // A follow-up that must be retried (failed, transient, rate-limited) makes the event's answer
      // say so: a 2xx would leave the held object unlooked-at until its next event. (Its own re-check,
      // if any, is queued under its own target, so the event's outcome keeps its own requeue.)
      const retry = followUps.filter((o) => RETRIED.includes(o.status));
      const w = worst(retry);
      const next = retry.find((o) => o.status === w);
      if (next && worst([outcome, next]) !== outcome.status) outcome = { ...outcome, status: next.status, reason: `${outcome.reason}; then ${next.function ?? ''} ${next.target ?? ''}: ${next.reason}` };
      if (followUps.length) outcome = { ...outcome, followUps };
    }
    if (outcome !== asked && unqueued.has(asked)) unqueued.add(outcome);
    return outcome;
  }

  /**
   * Queues a re-check of `key`. One asked by in-process work (a re-check, or the held follow-ups of
   * one) may use the queue's reserve: no one would redeliver it. A re-check that ends transient or
   * failed is tried again, backing off (RECHECK_RETRIES): the 2xx that promised it was answered
   * already. Its key keeps its place until done(), so this is never 'full'.
   */
  function queueRecheck(fn: AnyFunction, live: Ref, key: string, delayMs: number, origin: Origin, retries = 0): ReturnType<Requeuer['schedule']> {
    return requeuer.schedule(
      key,
      delayMs,
      () => {
        const p: Promise<void> = reconcile(fn, live, true, 'recheck')
          .then((o) => {
            // In the CLI (looks tracked) a failed re-check's answer reaches someone: the report (exit 1).
            if ((o.status !== 'transient' && (o.status !== 'failed' || history)) || requeuer.has(key)) return;
            if (retries >= RECHECK_RETRIES) {
              log.error({ fn: fn.name, target: o.target, status: o.status, reason: o.reason, retries }, 're-check still not through; giving up (the next sweep looks again)');
              return;
            }
            const delay = RECHECK_RETRY_MS * 2 ** retries * (0.8 + 0.4 * Math.random());
            const again = queueRecheck(fn, live, key, delay, 'recheck', retries + 1);
            log.warn({ fn: fn.name, target: o.target, status: o.status, reason: o.reason, retries: retries + 1, queued: again }, 're-check not through; trying again');
          })
          .catch((e) => log.error({ err: e, fn: fn.name }, 'requeued reconcile failed'))
          .finally(() => {
            requeuer.done(key);
            rechecking.delete(p);
            wake?.();
          });
        rechecking.set(p, key);
      },
      origin === 'recheck',
    );
  }

  async function reconcileKey(fn: AnyFunction, ref: TargetRef, origin: Origin): Promise<Outcome> {
    // A scoped look is its own target (its re-checks stay scoped); it still runs one at a time with
    // the unscoped look at the same object.
    const key = `${fn.name}|${refString(ref)}${ref.scope ? `@${ref.scope}` : ''}`;
    // Re-checks look at live state, never at the claim of the event that started them.
    const live = withoutHint(ref);
    return mutex.run(`${fn.name}|${refString(ref)}`, async () => {
      let outcome = await reconcileOnce(fn, ref);
      // Many follow-ups (GC of cluster-scoped objects, finalizer removal) are ready at once: look
      // again right away a few times before falling back to a timer.
      // (A re-check asked for later than that, such as a catalog pod's fence, waits for its timer.)
      for (let pass = 0; pass < deps.followUps && outcome.status === 'acted' && outcome.requeueAfterSeconds && outcome.requeueAfterSeconds <= FOLLOW_UP_MAX_SECONDS; pass++) {
        const next = await reconcileOnce(fn, live);
        outcome = merge(outcome, next);
      }
      if (ref.scope) outcome = { ...outcome, scope: ref.scope };
      if (history) {
        const h = history.get(key);
        if (h) h.push(outcome);
        else history.set(key, [outcome]);
      }
      if (asksRecheck(outcome) && outcome.requeueAfterSeconds) {
        const queued = queueRecheck(fn, live, key, outcome.requeueAfterSeconds * 1000, origin);
        if (queued === 'full' || queued === 'closed') unqueued.add(outcome);
        // In-process work past even the reserve: said in the log (the next sweep looks again).
        if (queued === 'full' && origin === 'recheck') log.warn({ fn: fn.name, target: outcome.target, queued: requeuer.size }, 're-check queue full, reserve included: not queued; the next sweep looks again');
      }
      return outcome;
    });
  }

  async function reconcileOnce(fn: AnyFunction, ref: Ref): Promise<Outcome> {
    const target = refString(ref);
    const options = deps.options[fn.name] ?? {};
    let lastReason = '';
    let lastCause: Extract<ExecResult, { status: 'replan' }>['cause'] = 'conflict';
    // Writes done before a re-plan still happened: they stay in the outcome, whatever it becomes.
    const done: ActionResult[] = [];
    for (let attempt = 0; attempt <= deps.maxReplans; attempt++) {
      try {
        const ctx: PlanContext = { now: deps.now(), options, policy: deps.policy, ...(refusedWrite ? { refusedWrite } : {}) };
        const observed = await fn.observe(ref, reader, { ...ctx, clock: deps.now });
        if (observed === undefined) return withDone({ function: fn.name, target, status: 'gone', reason: 'target no longer exists' }, done);
        // The clock as of the reads just made (the server's offset is refreshed by every response).
        const plan = fn.plan(observed, { ...ctx, now: deps.now() });
        deps.onPlan?.(fn.name, plan.kind);
        const result = await execute(fn.name, plan, target);
        if (result.status === 'replan') {
          // A simulated (dry-run) write changed nothing: the next attempt simulates it again if it
          // still applies, so only real writes are carried over.
          done.push(...(result.done ?? []).filter((a) => a.result !== 'dry-run'));
          lastReason = result.reason;
          lastCause = result.cause;
          log.debug({ fn: fn.name, target, attempt, conflict: result.reason }, 'state changed under the plan; re-planning');
          continue;
        }
        const outcome = withDone(result, done);
        if (outcome.status !== 'noop') log.info({ fn: fn.name, target, status: outcome.status, reason: outcome.reason, actions: outcome.actions }, 'reconciled');
        return outcome;
      } catch (e) {
        // Writes made before the one that failed stay in the outcome (red team 35, E1).
        if (e instanceof WritesThenFailed) done.push(...e.done.filter((a) => a.result !== 'dry-run'));
        return withDone(failure(fn.name, target, e instanceof WritesThenFailed ? e.error : e), done);
      }
    }
    const attempts = `${deps.maxReplans + 1} attempt${deps.maxReplans ? 's' : ''}`;
    // Objects vanishing under the plan (GC, OLM, another replica) is the state settling, not churn:
    // look again shortly from live state (in process), instead of failing the event to the Broker.
    if (lastCause === 'gone') return withDone({ function: fn.name, target, status: 'requeued', reason: `targets went away under the plan (${attempts}): ${lastReason}; looking again`, requeueAfterSeconds: 1 }, done);
    // The last change was olm-medic's own write (its answer lost): settling, not churn; look again.
    if (lastCause === 'lost-answer') return withDone({ function: fn.name, target, status: 'requeued', reason: `${lastReason} (${attempts}); looking again`, requeueAfterSeconds: 1 }, done);
    return withDone({ function: fn.name, target, status: 'transient', reason: `state kept changing (${attempts}): ${lastReason}` }, done);
  }

  function withDone(result: Outcome, done: ActionResult[]): Outcome {
    if (done.length === 0) return result;
    const acted = done.some((a) => a.result === 'done');
    const quiet = result.status === 'noop' || result.status === 'gone' || result.status === 'requeued' || result.status === 'dry-run';
    // A write repeated by a re-plan (a Terminating object deleted again) is listed once.
    const seen = new Set<string>();
    const actions = [...done, ...(result.actions ?? [])].filter((a) => {
      const k = `${a.verb}|${a.target}|${a.result}`;
      return !seen.has(k) && Boolean(seen.add(k));
    });
    return { ...result, ...(acted && quiet ? { status: 'acted' as const } : {}), actions };
  }

  /**
   * The combined outcome of an action and its immediate follow-up: still 'acted' (something was
   * done), unless the follow-up needs a retry (transient, failed, rate-limited), which must surface.
   */
  function merge(first: Outcome, next: Outcome): Outcome {
    const actions = [...(first.actions ?? []), ...(next.actions ?? [])];
    if (next.status === 'transient' || next.status === 'failed' || next.status === 'rate-limited') return { ...next, actions };
    const { requeueAfterSeconds: _r, ...rest } = first;
    const reason = next.status === 'noop' || next.status === 'gone' ? first.reason : `${first.reason}; then ${next.status}: ${next.reason}`;
    return { ...rest, status: 'acted', reason, actions, ...(next.requeueAfterSeconds ? { requeueAfterSeconds: next.requeueAfterSeconds } : {}) };
  }

  function failure(fn: string, target: string, e: unknown): Outcome {
    // A value (from an event or an object) that cannot go into a URL: nothing was sent, and retrying
    // cannot help. Refused (logged), never a failure the Broker retries forever.
    if (e instanceof InvalidValue) {
      log.warn({ fn, target, err: e.message }, 'refused: invalid value');
      return { function: fn, target, status: 'refused', reason: `invalid value, no request made: ${e.message}` };
    }
    if (e instanceof KubeError && e.transient) {
      log.warn({ fn, target, err: e.message, status: e.status }, 'apiserver unavailable');
      return { function: fn, target, status: 'transient', reason: e.message };
    }
    log.error({ fn, target, err: e }, 'reconcile failed');
    const msg = e instanceof Error ? e.message : String(e);
    return { function: fn, target, status: 'failed', reason: msg };
  }

  /** The duplicate key of an event (or of the part of it `only` names), if it carries a resourceVersion. */
  function dedupKeyOf(t: ResourceTrigger, only?: readonly string[]): Buffer | undefined {
    const rv = t.object?.metadata.resourceVersion;
    if (!rv) return undefined;
    // A fixed-size key (a digest keeps the filter's memory fixed, whatever the events say) of the
    // whole object, not just the uid and resourceVersion it states: a sender could claim a
    // resourceVersion the object has not reached yet, and its real event must not then be a duplicate.
    // A part of an event (some functions) is a duplicate only of the same part.
    const part = only ? `|${[...only].sort().join(',')}` : '';
    return createHash('sha256').update(`${t.verb}|${refString(t.ref)}|${claimDigest(t.object!)}${part}`).digest();
  }

  async function handleResource(t: ResourceTrigger, only?: readonly string[]): Promise<Outcome[]> {
    if (!kinds.has(`${t.ref.apiVersion}/${t.ref.kind}`)) return [{ status: 'ignored', reason: `no function handles ${t.ref.kind} events` }];
    const dedupKey = dedupKeyOf(t, only);
    if (dedupKey && seen.has(dedupKey)) return [{ status: 'ignored', reason: 'duplicate of an event already handled' }];
    // Every function's targets first: an event one of them finds invalid (a 400) starts no reconcile.
    const chosen = only ? functions.filter((f) => only.includes(f.name)) : functions;
    const targets = chosen.flatMap((fn) => targetsOf(fn, t).map((ref) => [fn, ref] as const));
    const work = targets.map(([fn, ref]) => reconcile(fn, ref));
    if (work.length === 0) return [{ status: 'ignored', reason: `no function handles ${t.ref.kind} ${t.verb}` }];
    const outcomes = (await Promise.all(work)).map((o) => unpromised(o));
    if (dedupKey && outcomes.every((o) => o.status !== 'transient' && o.status !== 'failed' && o.status !== 'rate-limited')) seen.add(dedupKey);
    return outcomes;
  }

  async function handleSweep(t: SweepTrigger): Promise<Outcome[]> {
    // A name no function has (a typo in a PingSource's data) would sweep nothing, answered 2xx on every
    // tick: a 400 naming it instead (red team 15, S1). A known but disabled one is simply not run.
    const known = new Set(deps.knownFunctions ?? functions.map((f) => f.name));
    const unknown = (t.functions ?? []).filter((n) => !known.has(n));
    if (unknown.length) throw new BadRequest(400, `data.functions: unknown function ${unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ')} (known: ${[...known].join(', ')})`);
    const chosen = t.functions ? functions.filter((f) => t.functions!.includes(f.name)) : functions;
    const outcomes: Outcome[] = [];
    for (const fn of chosen) {
      try {
        await forEachLimited(fn.sweep(reader, t.namespace ? { namespace: t.namespace } : {}), deps.sweepConcurrency, async (ref) => {
          outcomes.push(await reconcile(fn, ref, true, 'sweep'));
        });
      } catch (e) {
        outcomes.push(failure(fn.name, 'sweep', e));
      }
    }
    if (outcomes.length === 0) outcomes.push({ status: 'noop', reason: 'sweep found nothing to check' });
    return outcomes.map((o) => unpromised(o, 'sweep'));
  }

  /**
   * An outcome that needs a re-check that will not run here is transient: not a 2xx, and the Broker
   * redelivers the event (to a replica that will look again). Closed (shutting down): its timer is
   * cleared or never set. The bounded queue full: none was set, for an event; a sweep's own next run
   * is the fallback for its targets, so its answer stays (a re-check's answer reaches no one).
   */
  function unpromised(o: Outcome, origin: Origin = 'event'): Outcome {
    // Already redelivered by the Broker (429, 5xx): no in-process re-check was promised.
    if (!asksRecheck(o) || RETRIED.includes(o.status)) return o;
    if (closed) return { ...o, status: 'transient', reason: `${o.reason}; olm-medic is shutting down before the re-check it needs`, requeueAfterSeconds: undefined };
    if (origin !== 'event' || !unqueued.has(o)) return o;
    return { ...o, status: 'transient', reason: `${o.reason}; the re-check queue is full (${requeuer.size}), so the Broker's redelivery looks again`, requeueAfterSeconds: undefined };
  }

  return {
    reconcile,
    wants: (apiVersion, kind) => kinds.has(`${apiVersion}/${kind}`),
    isDuplicate(trigger, only) {
      if (trigger.kind !== 'resource') return false;
      const key = dedupKeyOf(trigger, only);
      return key !== undefined && seen.has(key);
    },
    async handle(trigger, only) {
      if (trigger.kind === 'resource') return handleResource(trigger, only);
      if (trigger.kind === 'sweep') return handleSweep(trigger);
      return [{ status: 'ignored', reason: `event type ${trigger.meta.type} is not handled` }];
    },
    trackLooks() {
      history ??= new Map();
    },
    async drain(untilMs) {
      history ??= new Map();
      try {
        while (!closed && (requeuer.size > 0 || rechecking.size > 0) && Date.now() < untilMs) {
          // A referenced timer keeps the process alive until the deadline (requeue timers are unref'd).
          await new Promise<void>((resolve) => {
            // At most setTimeout's limit (~24.8 days) per wait: a longer one fires at once, every time.
            const t = setTimeout(resolve, Math.min(MAX_TIMER_MS, Math.max(0, untilMs - Date.now())));
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          wake = undefined;
        }
        return { looks: history, pending: [...new Set([...requeuer.keys(), ...rechecking.values()])] };
      } finally {
        history = undefined;
      }
    },
    close: () => {
      closed = true;
      requeuer.close();
      // A drain under way returns now (what it waited for is dropped), not at its deadline.
      wake?.();
    },
  };
}

