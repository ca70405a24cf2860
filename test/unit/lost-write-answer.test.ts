/**
 * Red team 33, W1 (fixed: shared/kube/client.ts WriteOutcomeUnknown, shared/core/executor.ts landed()): a write whose answer is lost is RETRIED by the kube client as if it were a read,
 * and the retry's answer erases the write from the outcome, the Events and the CLI's exit code.
 *
 * shared/kube/client.ts `request()` retries every call whose error is transient (status 0: network
 * error, timeout, connection reset; 408; 429; 5xx) — PATCH and DELETE included. A PATCH the
 * apiserver APPLIED whose answer never arrived (timeout under load, a reset connection, a proxy's
 * 502/504, etcd's "request timed out" that still committed) is sent again with the same
 * resourceVersion precondition; the object's resourceVersion has moved on (our own write moved it),
 * so the retry gets 409 Conflict. The executor (shared/core/executor.ts, `e.conflict`) takes that as
 * "someone else changed it": replan, with `done` EMPTY — its own write is forgotten; the re-plan sees
 * the repaired plan and answers noop. Same for DELETE: the retry gets 404 NotFound, which counts as
 * "already gone" (replan, cause gone) and the outcome is 'gone'.
 *
 * Impact, shown with `olm-medic sweep --function ownerref-repair` against the real apiserver behind a
 * proxy that lets the PATCH apply and drops the connection before answering
 * (test/integration/lost-write-answer.test.ts, which replaced this file's own fake apiserver): the InstallPlan IS patched (an
 * ownerReference added), but no InstallPlanOwnerAdded Event is recorded (README: an Event "for every
 * action"), the run reports no write and exits 0 ("clean") instead of 3 ("acted"). A job-conflict Job
 * delete or a catalog pod force-delete lost the same way is reported as "target no longer exists".
 * SAFE: a write whose answer is unknown is not reported as not made: either it is not retried blindly
 * (the re-read decides, and a write that landed is reported with its Event), or the retry's 409/404
 * is not taken as someone else's change.
 */
import { describe, expect, it } from 'vitest';
import type { Action, Plan } from '../../shared/core/types.js';
import { KubeError, WriteOutcomeUnknown } from '../../shared/kube/errors.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { recordingExecutor } from '../support/scripted-apiserver.js';

/** The executor alone, with a writer whose write's answer was lost (and a reader of the live state). */
function lostAnswer(o: { verb: 'delete' | 'patch'; retry: 404 | 409; live: KubeObject | undefined }) {
  const refusal = o.retry === 404 ? new KubeError(404, 'NotFound', 'not found') : new KubeError(409, 'Conflict', 'the object has been modified');
  const { execute, events } = recordingExecutor({
    delete: async () => Promise.reject(new WriteOutcomeUnknown(refusal)),
    mergePatch: async () => Promise.reject(new WriteOutcomeUnknown(refusal)),
    create: async (x) => x,
    get: (async () => o.live) as never,
  });
  const target = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' };
  const action: Action =
    o.verb === 'delete'
      ? { verb: 'delete', target, reason: 'UnpackJobDeleted', note: 'Deleted Job abc.' }
      : { verb: 'patch', target, patch: { metadata: { annotations: { 'olm-medic.io/nudged-at': 'T' } } }, reason: 'Nudged', note: 'Nudged abc.' };
  const plan: Plan = { kind: 'act', actions: [action], summary: 'fix abc' };
  return { run: () => execute('job-conflict', plan, 'Job/olm/abc'), events };
}
const job = (extra: Partial<KubeObject['metadata']> = {}, annotations?: Record<string, string>): KubeObject =>
  ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'abc', namespace: 'olm', uid: 'job-1', resourceVersion: '8', ...(annotations ? { annotations } : {}), ...extra } }) as KubeObject;

describe('the executor decides a write whose answer was lost by a re-read', () => {
  it('a DELETE whose retry found the Job gone: reported done, with its Event noting the lost answer (not "already gone"), then re-planned from live state', async () => {
    const t = lostAnswer({ verb: 'delete', retry: 404, live: undefined });
    const out = await t.run();
    expect(out).toMatchObject({ status: 'replan', cause: 'lost-answer', done: [{ verb: 'delete', result: 'done' }] });
    expect(t.events.map((e) => e.reason)).toEqual(['UnpackJobDeleted']);
    expect(t.events[0]!.note).toMatch(/answer to this write was lost; a re-read shows its effect in place/);
  });

  it('a DELETE whose retry found a NEW object of that name: ours is gone: reported done, re-planned', async () => {
    expect(await lostAnswer({ verb: 'delete', retry: 404, live: job({ uid: 'job-2' }) }).run()).toMatchObject({ status: 'replan', done: [{ verb: 'delete', result: 'done' }] });
  });

  it('a PATCH whose retry got 409 and whose content is in place: reported done, re-planned', async () => {
    const t = lostAnswer({ verb: 'patch', retry: 409, live: job({}, { 'olm-medic.io/nudged-at': 'T' }) });
    expect(await t.run()).toMatchObject({ status: 'replan', done: [{ verb: 'patch', result: 'done' }] });
    expect(t.events.map((e) => e.reason)).toEqual(['Nudged']);
  });

  it("twin: a PATCH whose retry got 409 and whose content is NOT in place: someone else's change, re-planned, no Event", async () => {
    const t = lostAnswer({ verb: 'patch', retry: 409, live: job({}, { 'olm-medic.io/nudged-at': 'OTHER' }) });
    expect(await t.run()).toMatchObject({ status: 'replan', cause: 'conflict' });
    expect(t.events).toEqual([]);
  });

  it('twin: a PATCH whose retry found the object gone: re-planned as gone', async () => {
    expect(await lostAnswer({ verb: 'patch', retry: 404, live: undefined }).run()).toMatchObject({ status: 'replan', cause: 'gone' });
  });
});

describe('MAX_REPLANS=0: a write confirmed by a re-read is not turned into a 503', () => {
  it('the engine reports the write (acted, looking again in process), not a transient failure for the Broker to redeliver', async () => {
    const { createRuntime } = await import('../../shared/wiring.js');
    const { loadConfig } = await import('../../shared/core/config.js');
    const pino = (await import('pino')).default;
    let observed = 0;
    const fn = {
      name: 'job-conflict',
      summary: 's',
      kinds: ['batch/v1/Job'],
      targets: () => [{ apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc' }],
      // The Job is looked at once: after the delete (made, its answer lost) it is gone.
      observe: async () => (observed++ === 0 ? {} : undefined),
      plan: (): Plan => ({ kind: 'act', actions: [{ verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, reason: 'UnpackJobDeleted', note: 'Deleted Job abc.' }], summary: 'fix abc' }),
    };
    const kube = {
      get: async () => undefined,
      list: () => (async function* () {})(),
      delete: async () => Promise.reject(new WriteOutcomeUnknown(new KubeError(404, 'NotFound', 'not found'))),
      mergePatch: async () => Promise.reject(new Error('no patch')),
      create: async (x: KubeObject) => x,
      serverNow: () => new Date(),
    };
    const fns = [fn] as never[];
    const rt = createRuntime(loadConfig({ MAX_REPLANS: '0' }, fns), fns, { kube: kube as never, log: pino({ level: 'silent' }) });
    try {
      const out = await rt.engine.reconcile(fn as never, { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc' });
      expect(out).toMatchObject({ status: 'acted', actions: [{ verb: 'delete', result: 'done' }] });
    } finally {
      rt.engine.close();
    }
  });
});
