/**
 * The executor: the one place that writes to the cluster. For every plan it
 *  - enforces policy (protected namespaces, opt-out annotation, action budget),
 *  - writes with preconditions (uid and resourceVersion), optionally as server-side dry-run,
 *  - records a Kubernetes Event for every action, refusal and deferral,
 *  - reports a precondition conflict, or a target already gone, as `replan` so the engine re-reads
 *    and re-plans.
 */
import { isDeepStrictEqual } from 'node:util';
import { KubeError, WriteOutcomeUnknown } from '../kube/errors.js';
import { refString, type KubeObject, type Reader, type Writer } from '../kube/types.js';
import type { ActionResult, Outcome } from './outcome.js';
import { MEDIC } from '../olm/constants.js';
import { resourceFor, resourcePath } from '../kube/resources.js';
import { InvalidValue } from '../kube/validate.js';
import { ActionBudget, policyRefusal, type Policy, type Refusal } from './policy.js';
import type { Recorder } from './recorder.js';
import type { RefusedWrites } from './scheduling.js';
import { soonest, writeKey, type Action, type Aside, type Plan } from './types.js';

export interface ExecutorDeps {
  writer: Writer;
  recorder: Recorder;
  policy: Policy;
  budget: ActionBudget;
  onAction?: (fn: string, action: Action, result: ActionResult['result'] | 'gone' | 'conflict' | 'error' | 'refused') => void;
  /** Where optional writes the apiserver refused for good are noted, for the next plans to see. */
  refusals?: RefusedWrites;
  /** Re-reads a target whose write's answer was lost (WriteOutcomeUnknown): did it land? */
  reader?: Pick<Reader, 'get'>;
}

/**
 * The state changed under the plan: a write precondition failed (`conflict`), a write found its
 * target already gone (`gone`), or a write whose answer was lost was shown made by a re-read
 * (`lost-answer`: its own change, maybe another's too). Re-read and re-plan; `done` holds the
 * writes made before it.
 */
export type ExecResult = Outcome | { status: 'replan'; cause: 'conflict' | 'gone' | 'lost-answer'; reason: string; done?: ActionResult[] };

export function createExecutor(deps: ExecutorDeps) {
  const { writer, recorder, policy, budget } = deps;

  // Releasing our own finalizer is not a dry-run for the server (keeping it would leave the object
  // stuck); it is for the CLI, whose dry-run writes nothing (Policy.releaseInDryRun).
  const sentDry = (action: Action): boolean => policy.dryRun && !(action.releasesOwnFinalizer && policy.releaseInDryRun !== false);

  async function perform(action: Action): Promise<'done' | 'gone' | 'dry-run' | 'held'> {
    const dryRun = sentDry(action);
    if (action.verb === 'delete') {
      const r = await writer.delete(action.target, {
        uid: action.target.uid,
        ...(action.target.resourceVersion ? { resourceVersion: action.target.resourceVersion } : {}),
        ...(action.propagationPolicy ? { propagationPolicy: action.propagationPolicy } : {}),
        ...(action.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: action.gracePeriodSeconds } : {}),
        dryRun,
      });
      return r === 'gone' ? 'gone' : dryRun ? 'dry-run' : r === 'pending' ? 'held' : 'done';
    }
    const patch = { ...action.patch, metadata: { ...action.patch.metadata, resourceVersion: action.target.resourceVersion } };
    if ((await writer.mergePatch(action.target, patch, { dryRun })) === 'gone') return 'gone';
    return dryRun ? 'dry-run' : 'done';
  }

  /**
   * The answer to a write was lost and its retry met a changed or missing object: a re-read decides.
   * 'done'/'held' when the live state shows the write made (the object deleted, or being deleted;
   * the patch's content in place on the same object), else undefined (someone else's change: re-plan).
   */
  async function landed(action: Action): Promise<'done' | 'held' | undefined> {
    // A dry run applies nothing (red team 34, L1); without a re-read nothing is shown made.
    if (!deps.reader || sentDry(action)) return undefined;
    let live: KubeObject | undefined;
    try {
      live = await deps.reader.get(action.target);
    } catch {
      // The re-read failed (forbidden, unreachable): nothing is shown made; re-plan (red team 34, L4).
      return undefined;
    }
    if (action.verb === 'delete') {
      if (!live || live.metadata.uid !== action.target.uid) return 'done';
      // Being deleted shows this delete only if the plan saw the object whole, and with the grace
      // asked for: a pod Terminating since before (taint eviction) is not force-deleted (red team 34, L2).
      const grace = action.gracePeriodSeconds;
      const asked = grace === undefined || live.metadata.deletionGracePeriodSeconds === grace;
      return live.metadata.deletionTimestamp && !action.target.deleting && asked ? 'held' : undefined;
    }
    // A patch that removes finalizers from an object being deleted may remove the object itself
    // (red team 35, F1): gone, or replaced, is then its effect.
    const releases = action.target.deleting && Array.isArray((action.patch.metadata as { finalizers?: unknown } | undefined)?.finalizers);
    if (releases && (!live || live.metadata.uid !== action.target.uid)) return 'done';
    return live && live.metadata.uid === action.target.uid && contains(live, { ...action.patch, metadata: { ...action.patch.metadata, resourceVersion: undefined } }) ? 'done' : undefined;
  }

  async function explain(fn: string, p: Extract<Plan, { kind: 'refuse' | 'defer' }> | Aside): Promise<void> {
    await recorder.record({
      fn,
      regarding: p.regarding,
      reason: p.reason,
      note: p.note,
      type: p.kind === 'refuse' ? 'Warning' : 'Normal',
      action: p.kind === 'refuse' ? 'Refuse' : 'Defer',
      stateKey: p.regarding.uid ? `${p.regarding.uid}/${(p.regarding as { resourceVersion?: string }).resourceVersion ?? ''}` : '',
    });
  }

  return async function execute(fn: string, plan: Plan, targetName: string): Promise<ExecResult> {
    const base = { function: fn, target: targetName };
    // What the same look decided about other objects is recorded whatever becomes of the plan.
    for (const aside of plan.explained ?? []) await explain(fn, aside);
    switch (plan.kind) {
      case 'noop':
        return { ...base, status: 'noop', reason: plan.reason + asides(plan) };
      case 'requeue':
        return { ...base, status: 'requeued', reason: plan.reason + asides(plan), requeueAfterSeconds: plan.afterSeconds };
      case 'refuse':
      case 'defer':
        await explain(fn, plan);
        return {
          ...base,
          status: plan.kind === 'refuse' ? 'refused' : 'deferred',
          reason: `${plan.reason}: ${plan.note}${asides(plan)}`,
          ...(plan.requeueAfterSeconds ? { requeueAfterSeconds: plan.requeueAfterSeconds } : {}),
        };
      case 'act':
        return act(fn, plan, base);
    }
  };

  async function act(fn: string, plan: Extract<Plan, { kind: 'act' }>, base: { function: string; target: string }): Promise<ExecResult> {
    // Policy is checked for every action before any write. A refused required action refuses the
    // whole plan (never half-applied by policy); a refused optional one is skipped, so one opted-out
    // or protected object never blocks the fix for the others.
    const allowed: Action[] = [];
    const skipped: { action: Action; refusal: Refusal }[] = [];
    for (const action of plan.actions) {
      if (action.releasesOwnFinalizer) {
        checkRelease(action);
        allowed.push(action);
        continue;
      }
      const refusal = policyRefusal(policy, action) ?? invalidTarget(action);
      if (!refusal) allowed.push(action);
      else if (action.optional) skipped.push({ action, refusal });
      else {
        await recorder.record({ fn, regarding: action.regarding ?? action.target, reason: refusal.reason, note: refusal.note, type: 'Warning', action: 'Refuse', stateKey: stateKey(action) });
        return { ...base, status: 'refused', reason: `${refusal.reason}: ${refusal.note}${asides(plan)}` };
      }
    }
    for (const { action, refusal } of skipped) {
      await recorder.record({ fn, regarding: action.regarding ?? action.target, ...(action.regarding ? { related: action.target } : {}), reason: refusal.reason, note: refusal.note, type: 'Warning', action: 'Refuse', stateKey: stateKey(action) });
    }
    if (allowed.length === 0) {
      // Every optional action refused: nothing landed to look at again, but what the plan waits on
      // besides (othersRecheckAfterSeconds) still is.
      return {
        ...base,
        status: 'refused',
        reason: skipped.map(({ refusal }) => `${refusal.reason}: ${refusal.note}`).join('; ') + asides(plan),
        ...(plan.othersRecheckAfterSeconds ? { requeueAfterSeconds: plan.othersRecheckAfterSeconds } : {}),
      };
    }
    const charged = allowed.filter((a) => !a.releasesOwnFinalizer).length;
    if (!policy.dryRun && charged > 0 && !budget.take(charged)) {
      const first = allowed[0]!;
      await recorder.record({
        fn,
        regarding: first.regarding ?? first.target,
        reason: 'RateLimited',
        note: `action budget (${policy.maxActionsPerWindow} per ${policy.windowSeconds}s) used up; will retry: ${plan.summary}`,
        type: 'Warning',
        action: 'Refuse',
        stateKey: `${stateKey(first)}/rate-limited`,
      });
      const wait = budget.retryAfterSeconds(charged);
      return { ...base, status: 'rate-limited', reason: `action budget used up; retry in ${wait}s${asides(plan)}`, requeueAfterSeconds: wait };
    }
    const results: ActionResult[] = [];
    const apiRefused: Action[] = [];
    /** Refused by the apiserver this time (sent), as opposed to known refusals not sent again. */
    let newlyRefused = 0;
    for (const action of allowed) {
      let result: ActionResult['result'] | 'gone';
      let held = false;
      /** The write's answer was lost; a re-read showed it made. */
      let confirmed = false;
      // Refused for good lately, this write in this very state: not sent again (its Warning Event
      // was recorded when it was refused), and no re-check for it (red team 29a, L1: a plan that
      // does not read refusals planned it again every 2 s). RefusedWrites forgets it after a while.
      if (action.optional && !action.releasesOwnFinalizer && deps.refusals?.get(writeKey(action), action.target.uid, action.target.resourceVersion) !== undefined) {
        deps.onAction?.(fn, action, 'refused');
        apiRefused.push(action);
        continue;
      }
      try {
        let r: Awaited<ReturnType<typeof perform>> | 'gone';
        try {
          r = await perform(action);
        } catch (e) {
          // Its own effect, or someone else's change? Only the live object tells (red team 33, W1):
          // a write that landed is reported and recorded like any other.
          if (!(e instanceof WriteOutcomeUnknown)) throw e;
          const seen = await landed(action);
          // Not this write's effect: a 404 means the target was gone before it, a 409 someone else's change.
          if (!seen && !e.notFound) throw e;
          confirmed = Boolean(seen);
          r = seen || 'gone';
        }
        held = r === 'held';
        result = r === 'held' ? 'done' : r;
      } catch (e) {
        if (e instanceof KubeError && e.conflict) {
          deps.onAction?.(fn, action, 'conflict');
          return { status: 'replan', cause: 'conflict', reason: `${action.verb} ${refString(action.target)}: ${e.message}`, done: results };
        }
        // An optional write the apiserver refuses for good (admission, RBAC, validation) is skipped
        // like one policy refuses, with a Warning Event, and noted so the next plans stop asking
        // for it; the others go on. A required one still fails the whole plan.
        if (e instanceof KubeError && e.lastingRefusal && action.optional && !action.releasesOwnFinalizer) {
          deps.onAction?.(fn, action, 'refused');
          deps.refusals?.note(writeKey(action), action.target.uid, action.target.resourceVersion, `${e.status} ${e.reason}: ${e.message}`);
          apiRefused.push(action);
          newlyRefused++;
          await recorder.record({
            fn,
            regarding: action.regarding ?? action.target,
            ...(action.regarding ? { related: action.target } : {}),
            reason: 'WriteRefused',
            note: `The apiserver refused to ${action.verb} ${action.target.kind} ${action.target.name} (${e.status} ${e.reason}: ${e.message}); would have: ${action.note}`,
            type: 'Warning',
            action: 'Refuse',
            stateKey: `${stateKey(action)}/refused`,
          });
          continue;
        }
        deps.onAction?.(fn, action, 'error');
        // The writes made before it stay in the outcome, whatever it becomes (red team 35, E1).
        throw results.length ? new WritesThenFailed(e, results) : e;
      }
      deps.onAction?.(fn, action, result);
      // Something we meant to change was already gone: the plan rests on a stale view (another
      // replica, OLM or garbage collection got there first). Re-plan from live state: before any
      // dependent write (such as a nudge), and also after the last action, because a staged plan's
      // next step (an uninstall's CSVs after its InstallPlans) must not wait for an event that may
      // never come (seen on real OLM v0.25.0: GC removed the InstallPlan between read and delete).
      if (result === 'gone') {
        return { status: 'replan', cause: 'gone', reason: `${refString(action.target)} was already gone`, done: results };
      }
      const { apiVersion, kind, name, namespace } = action.target;
      results.push({ verb: action.verb, target: refString(action.target), reason: action.reason, result, ...(held ? { held: { apiVersion, kind, name, ...(namespace ? { namespace } : {}) } } : {}) });
      await recorder.record({
        fn,
        regarding: action.regarding ?? action.target,
        ...(action.regarding ? { related: action.target } : {}),
        reason: action.reason,
        note: result === 'dry-run' ? `[dry-run] would have: ${action.note}` : confirmed ? `${action.note} (The apiserver's answer to this write was lost; a re-read shows its effect in place.)` : action.note,
        type: 'Normal',
        action: action.verb === 'delete' ? 'Delete' : 'Patch',
        stateKey: `${stateKey(action)}/${result}`,
      });
      // The effect may be another's as well as this write's, and the object changed under the plan
      // either way: no further write on this view; re-plan from live state (red team 34, L3).
      if (confirmed) return { status: 'replan', cause: 'lost-answer', reason: `${action.verb} ${refString(action.target)}: its answer was lost; re-planning from live state`, done: results };
    }
    // Every allowed action ran (a target found gone re-plans above): acted, only simulated, or refused by the apiserver.
    const status = results.some((r) => r.result === 'done') ? 'acted' : results.length ? 'dry-run' : 'refused';
    const kept =
      (skipped.length ? `; refused by policy: ${skipped.map(({ action }) => refString(action.target)).join(', ')}` : '') +
      (apiRefused.length ? `; refused by the apiserver: ${apiRefused.map((a) => refString(a.target)).join(', ')}` : '') +
      asides(plan);
    // A simulated write changes nothing to look at again: a dry run keeps only the others' re-check.
    // A new refusal is looked at again as planned: the next plan knows of it (refusals) and may go
    // on (finalizer-cleanup releases the CSV); a known one changes nothing to look at again.
    const again = soonest([status === 'acted' || newlyRefused > 0 ? plan.requeueAfterSeconds : undefined, plan.othersRecheckAfterSeconds]);
    return {
      ...base,
      status,
      reason: `${plan.summary}${kept}`,
      actions: results,
      ...(again ? { requeueAfterSeconds: again } : {}),
    };
  }
}

/** The plan's asides for its outcome's reason: `; refused: Job a (Reason); deferred: …`. */
function asides(plan: Plan): string {
  const of = (kind: Aside['kind']): string => (plan.explained ?? []).filter((a) => a.kind === kind).map((a) => `${a.regarding.kind} ${a.regarding.name} (${a.reason})`).join(', ');
  const refused = of('refuse');
  const deferred = of('defer');
  return (refused ? `; refused: ${refused}` : '') + (deferred ? `; deferred: ${deferred}` : '');
}

/** A write failed after others of the plan were made: the error, with those writes. */
export class WritesThenFailed extends Error {
  constructor(
    readonly error: unknown,
    readonly done: ActionResult[],
  ) {
    super(error instanceof Error ? error.message : String(error));
    this.name = 'WritesThenFailed';
  }
}

/**
 * The live object holds what a JSON merge patch sets (RFC 7396): every key the patch sets to null
 * is absent, every object is held key by key, every other value (arrays included) is equal.
 */
function contains(live: unknown, patch: unknown): boolean {
  // The apiserver stores an empty list (finalizers: []) as no field at all (red team 35, F1).
  if (Array.isArray(patch) && patch.length === 0 && (live === undefined || live === null)) return true;
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return isDeepStrictEqual(live, patch);
  if (live === null || typeof live !== 'object' || Array.isArray(live)) return false;
  const l = live as Record<string, unknown>;
  return Object.entries(patch as Record<string, unknown>).every(([k, v]) => (v === undefined ? true : v === null ? l[k] === undefined || l[k] === null : contains(l[k], v)));
}

/** A target whose name or namespace cannot be put into a URL: refused (with an Event), never a thrown failure. */
function invalidTarget(a: Action): Refusal | undefined {
  try {
    resourcePath(resourceFor(a.target.apiVersion, a.target.kind), a.target.namespace, a.target.name);
    return undefined;
  } catch (e) {
    if (e instanceof InvalidValue) return { reason: 'InvalidName', note: `${e.message}; would have: ${a.note}` };
    throw e;
  }
}

/** The policy exemption is only for removing olm-medic's own finalizer: a patch of metadata.finalizers alone. */
function checkRelease(a: Action): void {
  const patch = a.verb === 'patch' ? a.patch : undefined;
  const md = patch?.metadata as { finalizers?: unknown } | undefined;
  const onlyFinalizers = patch && Object.keys(patch).length === 1 && md && Object.keys(md).length === 1 && Array.isArray(md.finalizers);
  if (!onlyFinalizers || (md.finalizers as unknown[]).includes(MEDIC.finalizer)) {
    throw new Error(`internal error: ${a.reason} is marked releasesOwnFinalizer but is not a removal of ${MEDIC.finalizer}`);
  }
}

function stateKey(a: Action): string {
  return `${a.target.kind}/${a.target.uid}/${a.target.resourceVersion ?? ''}/${a.reason}`;
}

export type Execute = ReturnType<typeof createExecutor>;
