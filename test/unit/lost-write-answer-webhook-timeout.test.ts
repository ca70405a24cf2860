/**
 * Red team 36, W1 (fixed): a failing admission webhook counts as "possibly applied" when it failed by timing
 * out — the commonest way a webhook fails (an overloaded Kyverno/Gatekeeper, failurePolicy: Fail).
 *
 * README (Writes): "an apiserver Status refusing the write (a failing webhook) ... never count as
 * possibly applied". Admission runs before storage: a webhook's failure means nothing was stored.
 * But shared/kube/errors.ts mayHaveApplied() (errors.ts:126) answers yes for any Status whose
 * message matches /timed? ?out|timeout|deadline exceeded/ — and the apiserver's message for a
 * webhook that did not answer in time is 'Internal error occurred: failed calling webhook "…":
 * failed to call webhook: Post "https://…?timeout=10s": context deadline exceeded' (it even carries
 * "?timeout=" in the URL). request() (shared/kube/client.ts:216) then sets `unanswered`; OLM (or GC)
 * deletes the Job meanwhile; the retry's 404 becomes WriteOutcomeUnknown and landed()
 * (shared/core/executor.ts:81) confirms the absence as olm-medic's own delete: an UnpackJobDeleted
 * Event "(a re-read shows its effect in place)" and a 'done' action for a DELETE the webhook refused.
 * SAFE (as lost-write-answer-never-sent.test.ts L3b for "connection refused"): replan as gone, no Event.
 */
import { describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/client.js';
import { DELETE_JOB, JOB_NOT_FOUND, JOB_PATH, failure, fixAbc, recordingExecutor, send, startScripted } from '../support/scripted-apiserver.js';

const WEBHOOK_TIMEOUTS = [
  'Internal error occurred: failed calling webhook "validate.kyverno.svc-fail": failed to call webhook: Post "https://kyverno-svc.kyverno.svc:443/validate/fail?timeout=10s": context deadline exceeded',
  'Internal error occurred: failed calling webhook "validation.gatekeeper.sh": failed to call webhook: Post "https://gatekeeper-webhook-service.gatekeeper-system.svc:443/v1/admit?timeout=3s": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)',
];

describe('(red team 36) W1: a webhook that timed out refused the write; it is not "unanswered"', () => {
  for (const message of WEBHOOK_TIMEOUTS) {
    it(`Job DELETE: attempt 1 answered 500 "${message.slice(0, 60)}…", OLM deleted the Job meanwhile, retry 404 -> re-plan as gone, no Event`, async () => {
      let deletes = 0;
      const api = await startScripted((req, res) => {
        if (req.method === 'DELETE' && req.path === JOB_PATH && ++deletes === 1) {
          return send(res, 500, failure(500, 'InternalError', message, { causes: [{ message: 'failed calling webhook' }] }));
        }
        if (req.path === JOB_PATH) return send(res, 404, JOB_NOT_FOUND);
        send(res, 404, failure(404, 'NotFound', 'no'));
      });
      const kube = createKube(api.kubeConfig(), { retries: 3, sleep: async () => undefined });
      const { execute, events } = recordingExecutor(kube);
      try {
        const out = (await execute('job-conflict', fixAbc(DELETE_JOB), 'Job/olm/abc')) as { status: string; cause?: string; done?: unknown[] };
        expect(deletes).toBe(2);
        // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
        expect({ status: out.status, cause: out.cause, done: out.done ?? [], events: events.map((e) => e.reason) }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
      } finally {
        await api.close();
      }
    }, 20_000);
  }
});
