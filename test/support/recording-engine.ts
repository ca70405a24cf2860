/**
 * An engine on the real ownerref-repair whose executor only records the plans it is handed (no
 * writes): what observe() + plan() decide for a stream of events, on any Reader.
 */
import pino from 'pino';
import { createEngine } from '../../shared/core/engine.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { NO_POLICY, type AnyFunction, type FunctionOptions, type Plan } from '../../shared/core/types.js';
import type { Reader } from '../../shared/kube/types.js';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';

export function recordingEngine(reader: Reader, o: { now: () => Date; options?: FunctionOptions }) {
  const plans: Plan[] = [];
  const engine = createEngine({
    functions: [ownerrefRepair as AnyFunction],
    options: o.options ? { 'ownerref-repair': o.options } : {},
    reader,
    execute: async (fn, plan, target): Promise<Outcome> => {
      plans.push(plan);
      if (plan.kind === 'requeue') return { function: fn, target, status: 'requeued', reason: plan.reason, requeueAfterSeconds: plan.afterSeconds };
      if (plan.kind === 'act') return { function: fn, target, status: 'acted', reason: plan.summary, actions: [] };
      return { function: fn, target, status: 'noop', reason: plan.kind === 'noop' ? plan.reason : plan.kind };
    },
    now: o.now,
    policy: NO_POLICY,
    log: pino({ level: 'silent' }),
    maxReplans: 2,
    sweepConcurrency: 1,
    followUps: 0,
  });
  return { engine, plans };
}
