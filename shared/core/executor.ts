/**
 * The executor: the one place that writes to the cluster. For every plan it
 *  - enforces policy (protected namespaces, opt-out annotation, action budget),
 *  - writes with preconditions (uid and resourceVersion), optionally as server-side dry-run,
 *  - records a Kubernetes Event for every action, refusal and deferral,
 *  - reports a precondition conflict as `replan` so the engine re-reads and re-plans.
 */
import { KubeError } from '../kube/errors.js';
import { refString, type Writer } from '../kube/types.js';
import type { ActionResult, Outcome } from './outcome.js';
import { ActionBudget, policyRefusal, type Policy } from './policy.js';
import type { Recorder } from './recorder.js';
import type { Action, Plan } from './types.js';

export interface ExecutorDeps {
  writer: Writer;
  recorder: Recorder;
  policy: Policy;
  budget: ActionBudget;
  onAction?: (fn: string, action: Action, result: ActionResult['result'] | 'conflict' | 'error') => void;
}

/** A write precondition failed: the state changed under us. Re-read and re-plan. */
export type ExecResult = Outcome | { status: 'replan'; reason: string; done?: ActionResult[] };

export function createExecutor(deps: ExecutorDeps) {
  const { writer, recorder, policy, budget } = deps;

  async function perform(action: Action): Promise<'done' | 'gone' | 'dry-run' | 'held'> {
    const dryRun = policy.dryRun;
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
    try {
      await writer.mergePatch(action.target, patch, { dryRun });
    } catch (e) {
      if (e instanceof KubeError && e.notFound) return 'gone';
      throw e;
    }
    return dryRun ? 'dry-run' : 'done';
  }

  async function explain(fn: string, p: Extract<Plan, { kind: 'refuse' | 'defer' }>, stateKey: string): Promise<void> {
    await recorder.record({
      fn,
      regarding: p.regarding,
      reason: p.reason,
      note: p.note,
      type: p.kind === 'refuse' ? 'Warning' : 'Normal',
      action: p.kind === 'refuse' ? 'Refuse' : 'Defer',
      stateKey,
    });
  }

  return async function execute(fn: string, plan: Plan, targetName: string): Promise<ExecResult> {
    const base = { function: fn, target: targetName };
    switch (plan.kind) {
      case 'noop':
        return { ...base, status: 'noop', reason: plan.reason };
      case 'requeue':
        return { ...base, status: 'requeued', reason: plan.reason, requeueAfterSeconds: plan.afterSeconds };
      case 'refuse':
      case 'defer':
        await explain(fn, plan, plan.regarding.uid ? `${plan.regarding.uid}/${(plan.regarding as { resourceVersion?: string }).resourceVersion ?? ''}` : '');
        return {
          ...base,
          status: plan.kind === 'refuse' ? 'refused' : 'deferred',
          reason: `${plan.reason}: ${plan.note}`,
          ...(plan.requeueAfterSeconds ? { requeueAfterSeconds: plan.requeueAfterSeconds } : {}),
        };
      case 'act':
        return act(fn, plan, base);
    }
  };

  async function act(fn: string, plan: Extract<Plan, { kind: 'act' }>, base: { function: string; target: string }): Promise<ExecResult> {
    // Policy is checked for every action before any write, so a plan is never half-applied by policy.
    for (const action of plan.actions) {
      const refusal = policyRefusal(policy, action);
      if (refusal) {
        const regarding = action.regarding ?? action.target;
        await recorder.record({ fn, regarding, reason: refusal.reason, note: refusal.note, type: 'Warning', action: 'Refuse', stateKey: stateKey(action) });
        return { ...base, status: 'refused', reason: `${refusal.reason}: ${refusal.note}` };
      }
    }
    if (!policy.dryRun && !budget.take(plan.actions.length)) {
      const first = plan.actions[0]!;
      await recorder.record({
        fn,
        regarding: first.regarding ?? first.target,
        reason: 'RateLimited',
        note: `action budget (${policy.maxActionsPerWindow} per ${policy.windowSeconds}s) used up; will retry: ${plan.summary}`,
        type: 'Warning',
        action: 'Refuse',
        stateKey: `${stateKey(first)}/rate-limited`,
      });
      return { ...base, status: 'rate-limited', reason: `action budget used up; retry in ${budget.retryAfterSeconds()}s`, requeueAfterSeconds: budget.retryAfterSeconds() };
    }
    const results: ActionResult[] = [];
    for (const action of plan.actions) {
      let result: ActionResult['result'];
      let held = false;
      try {
        const r = await perform(action);
        held = r === 'held';
        result = r === 'held' ? 'done' : r;
      } catch (e) {
        if (e instanceof KubeError && e.conflict) {
          deps.onAction?.(fn, action, 'conflict');
          return { status: 'replan', reason: `${action.verb} ${refString(action.target)}: ${e.message}`, done: results };
        }
        deps.onAction?.(fn, action, 'error');
        throw e;
      }
      deps.onAction?.(fn, action, result);
      // Something we meant to delete was already gone: the plan rests on a stale view (another
      // replica, or OLM, got there first). Re-plan before any dependent write, such as a nudge.
      if (result === 'gone' && action !== plan.actions[plan.actions.length - 1]) {
        return { status: 'replan', reason: `${refString(action.target)} was already gone`, done: results };
      }
      const { apiVersion, kind, name, namespace } = action.target;
      results.push({ verb: action.verb, target: refString(action.target), reason: action.reason, result, ...(held ? { held: { apiVersion, kind, name, ...(namespace ? { namespace } : {}) } } : {}) });
      if (result !== 'gone') {
        await recorder.record({
          fn,
          regarding: action.regarding ?? action.target,
          ...(action.regarding ? { related: action.target } : {}),
          reason: action.reason,
          note: result === 'dry-run' ? `[dry-run] would have: ${action.note}` : action.note,
          type: 'Normal',
          action: action.verb === 'delete' ? 'Delete' : 'Patch',
          stateKey: `${stateKey(action)}/${result}`,
        });
      }
    }
    const acted = results.some((r) => r.result === 'done');
    const status = acted ? 'acted' : results.some((r) => r.result === 'dry-run') ? 'dry-run' : 'gone';
    return {
      ...base,
      status,
      reason: plan.summary,
      actions: results,
      ...(plan.requeueAfterSeconds ? { requeueAfterSeconds: plan.requeueAfterSeconds } : {}),
    };
  }
}

function stateKey(a: Action): string {
  return `${a.target.kind}/${a.target.uid}/${a.target.resourceVersion ?? ''}/${a.reason}`;
}

export type Execute = ReturnType<typeof createExecutor>;
