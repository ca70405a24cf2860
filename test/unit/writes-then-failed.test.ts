/**
 * Red team 35, E1 (fixed): a write made early in a plan is erased from the outcome when a LATER write of the
 * same plan fails (no answer, retries used up) — the write is hidden, though its Event was recorded.
 *
 * shared/core/executor.ts act() collects the writes it made in a local `results`; on any error that is
 * neither a conflict, nor a "gone", nor a lasting refusal of an optional write, it does
 * `deps.onAction?.(fn, action, 'error'); throw e;` (executor.ts:231-232): `results` dies with the
 * stack frame. engine.ts reconcileOnce() catches it as `withDone(failure(fn.name, target, e), done)`
 * (engine.ts:234), where `done` only holds writes carried over by earlier RE-PLANS, not this plan's.
 * So job-conflict's plan [delete the unpack Job, delete its ConfigMap]: the Job DELETE lands (200,
 * Event UnpackJobDeleted), the ConfigMap DELETE gets no answer on every attempt (apiserver overloaded:
 * NetworkError, exactly the lost-answer situation the newest commits care about) -> the outcome is
 * `transient` with NO actions. The CLI row shows no Job deleted; the HTTP answer (503, Knative
 * retries) and the metrics/outcome log say nothing was written; the re-plan on the Broker's retry
 * sees the Job gone and plans only the ConfigMap. The comment: writes done "stay in the outcome,
 * whatever it becomes" (engine.ts:210 comment) — true only across re-plans.
 * SAFE: the outcome of the look lists the Job delete as done (whatever status it takes).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../shared/core/engine.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { Action, AnyFunction, Plan } from '../../shared/core/types.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, Ref, Writer } from '../../shared/kube/types.js';

describe('(red team 35) E1: a later write failing does not erase an earlier one from the outcome', () => {
  it('job-conflict-like plan: Job deleted (Event recorded), ConfigMap DELETE unanswered on every attempt -> the outcome still lists the Job delete', async () => {
    const actions: Action[] = [
      { verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' },
      { verb: 'delete', target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'olm', name: 'abc', uid: 'cm-1', resourceVersion: '3' }, propagationPolicy: 'Background', reason: 'UnpackConfigMapDeleted', note: 'Deleted the unpack ConfigMap abc.' },
    ];
    const plan: Plan = { kind: 'act', summary: 'deleted the failed unpack Job abc and its ConfigMap', actions };
    const fn = {
      name: 'job-conflict',
      summary: 's',
      kinds: ['batch/v1/Job'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {},
      observe: async () => ({}),
      plan: () => plan,
    } as unknown as AnyFunction;
    const deleted: string[] = [];
    const writer: Writer = {
      async delete(ref: Ref) {
        if (ref.kind === 'ConfigMap') throw new KubeError(0, 'NetworkError', 'apiserver unreachable: TimeoutError: The operation was aborted due to timeout');
        deleted.push(`${ref.kind}/${ref.name}`);
        return 'deleted';
      },
      mergePatch: async () => ({}) as KubeObject,
      create: async (x: KubeObject) => x,
    };
    const events: EventRecord[] = [];
    const execute = createExecutor({
      writer,
      recorder: { record: async (e) => void events.push(e) },
      policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
      budget: new ActionBudget(10, 60_000, () => 0),
    });
    const engine = createEngine({
      functions: [fn],
      options: {},
      reader: {} as never,
      execute,
      now: () => new Date('2025-03-01T12:00:00Z'),
      policy: { dryRun: false, protectedNamespaces: new Set() },
      log: pino({ level: 'silent' }),
      maxReplans: 2,
      sweepConcurrency: 1,
      followUps: 0,
    });
    try {
      const out = await engine.reconcile(fn, { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc' });
      expect(deleted).toEqual(['Job/abc']);
      expect(events.map((e) => e.reason)).toEqual(['UnpackJobDeleted']);
      // Current code: { status: 'transient', actions: undefined } — the Job delete is gone from the outcome.
      expect((out.actions ?? []).map((a) => `${a.verb} ${a.target} ${a.result}`)).toEqual(['delete Job/olm/abc done']);
    } finally {
      engine.close();
    }
  });
});
