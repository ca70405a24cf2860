/**
 * Red team 34, L1 (fixed): a DRY-RUN write whose answer was lost is "confirmed" by the re-read as a real write.
 *
 * With DRY_RUN=true (infra/overlays/dry-run, "the recommended first install") every write goes out
 * with dryRun=All. The kube client treats a dry-run PATCH/DELETE like any write: an attempt that
 * got no answer (timeout, reset, a proxy's 5xx) sets `unanswered` (shared/kube/client.ts request(),
 * `write = call.method !== GET`), and a retry that meets someone else's change (404: OLM / GC deleted
 * the Job meanwhile; 409: its resourceVersion moved) becomes WriteOutcomeUnknown. The executor then
 * asks landed() (shared/core/executor.ts) whether the live state shows the write made — but a
 * dry-run write never makes anything, so whatever the re-read shows is SOMEONE ELSE's doing.
 * landed() does not look at policy.dryRun: a missing Job returns 'done', `r = seen` overrides the
 * 'dry-run' result perform() would have given, and the executor
 *   - reports status 'acted' with result 'done' (not 'dry-run'),
 *   - records a Normal Event WITHOUT the "[dry-run] would have:" prefix, claiming "Deleted
 *     bundle-unpack Job ... (a re-read shows it made)",
 *   - and goes on with the plan's next write instead of re-planning on the changed state.
 * Before d54b3e5 the same retry's 404 was 'gone' (re-plan, no Event).
 * SAFE: a dry-run write is never reported as made: a lost answer to one decides nothing (re-plan
 * as gone/conflict, or report it 'dry-run'), and no Event claims a real change.
 */
import { describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/client.js';
import type { Action, Plan } from '../../shared/core/types.js';
import { KubeError, WriteOutcomeUnknown } from '../../shared/kube/errors.js';
import type { KubeObject, Reader, Writer } from '../../shared/kube/types.js';
import { DELETE_JOB, JOB_NOT_FOUND, JOB_PATH, fixAbc, recordingExecutor, send, startScripted } from '../support/scripted-apiserver.js';

function dryRunExecutor(o: { retry: 404 | 409; live: KubeObject | undefined }) {
  const sent: string[] = [];
  const refusal = o.retry === 404 ? new KubeError(404, 'NotFound', 'jobs.batch "abc" not found', undefined, { name: 'abc', group: 'batch', kind: 'jobs' }) : new KubeError(409, 'Conflict', 'the object has been modified');
  const kube: Writer & Pick<Reader, 'get'> = {
    delete: async (ref, opts) => {
      sent.push(`delete ${ref.kind}/${ref.name} dryRun=${opts.dryRun}`);
      // the first (dry-run) attempt got no answer; its retry met someone else's change
      throw new WriteOutcomeUnknown(refusal);
    },
    mergePatch: async (ref, _p, opts) => {
      sent.push(`patch ${ref.kind}/${ref.name} dryRun=${opts.dryRun}`);
      throw new WriteOutcomeUnknown(refusal);
    },
    create: async (x) => x,
    get: (async () => o.live) as never,
  };
  return { ...recordingExecutor(kube, { dryRun: true }), sent };
}

const job = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' };
const cm = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'olm', name: 'abc', uid: 'cm-1', resourceVersion: '3' };
const sub = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: 'team-a', name: 'sub', uid: 'sub-1', resourceVersion: '9' };

describe('(red team 34) L1: a dry-run write whose answer was lost is never reported as made', () => {
  it('DRY_RUN: a dry-run Job DELETE whose retry found the Job gone (OLM deleted it) is not "acted", and no Event claims the Job was deleted', async () => {
    const t = dryRunExecutor({ retry: 404, live: undefined });
    const plan: Plan = {
      kind: 'act',
      summary: 'fix abc',
      actions: [
        { verb: 'delete', target: job, reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' },
        { verb: 'delete', target: cm, optional: true, reason: 'UnpackConfigMapDeleted', note: 'Deleted the empty unpack ConfigMap abc.' },
      ] as Action[],
    };
    const out = await t.execute('job-conflict', plan, 'Job/olm/abc');
    // Current code: { status: 'acted', actions: [{ result: 'done' }, { result: 'done' }] }, two Events
    // without "[dry-run]", the second write sent on a view the 404 proved stale.
    expect(out.status).not.toBe('acted');
    expect(t.events.filter((e) => !e.note.startsWith('[dry-run]')).map((e) => `${e.reason}: ${e.note}`)).toEqual([]);
    expect(t.sent).toEqual(['delete Job/abc dryRun=true']);
  });

  it('DRY_RUN: a dry-run nudge PATCH whose retry got 409 (someone else wrote the same annotation) is not reported as a real patch', async () => {
    const live = { apiVersion: sub.apiVersion, kind: sub.kind, metadata: { name: 'sub', namespace: 'team-a', uid: 'sub-1', resourceVersion: '10', annotations: { 'olm-medic.io/nudged-at': 'T' } } } as KubeObject;
    const t = dryRunExecutor({ retry: 409, live });
    const plan: Plan = { kind: 'act', summary: 'nudge', actions: [{ verb: 'patch', target: sub, optional: true, patch: { metadata: { annotations: { 'olm-medic.io/nudged-at': 'T' } } }, reason: 'SubscriptionNudged', note: 'Nudged sub.' }] };
    const out = await t.execute('job-conflict', plan, 'Job/olm/abc');
    expect((out as { actions?: { result: string }[] }).actions?.map((a) => a.result) ?? []).not.toContain('done');
    expect(t.events.filter((e) => !e.note.startsWith('[dry-run]')).map((e) => e.reason)).toEqual([]);
  });
});

describe('(red team 34) L1, through the real kube client: DRY_RUN=true, a dry-run DELETE whose answer was cut', () => {
  it('the apiserver got DELETE ?dryRun=All (changes nothing) and the connection dropped; OLM deleted the Job meanwhile: not acted, no Event claiming a delete', async () => {
    let deletes = 0;
    const api = await startScripted(
      (req, res) => {
        if (req.method === 'DELETE' && req.path === JOB_PATH && ++deletes === 1) return req.drop(); // dry run: nothing deleted; answer lost
        // ... and OLM deleted the Job before the retry.
        send(res, 404, JOB_NOT_FOUND);
      },
      { query: true },
    );
    const log = api.log;
    const kube = createKube(api.kubeConfig(), { retries: 3, sleep: async () => undefined });
    const { execute, events } = recordingExecutor(kube, { dryRun: true });
    try {
      const out = await execute('job-conflict', fixAbc(DELETE_JOB), 'Job/olm/abc');
      expect(log.filter((l) => l.startsWith('DELETE')).every((l) => l.includes('dryRun=All'))).toBe(true);
      // Current code: status 'acted', result 'done', Event note "Deleted bundle-unpack Job abc. (The apiserver's answer to this write was lost; a re-read shows it made.)"
      expect({ status: out.status, notes: events.map((e) => e.note) }).toEqual({ status: 'replan', notes: [] });
    } finally {
      await api.close();
    }
  }, 20_000);
});
