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
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import { createKube } from '../../shared/kube/client.js';

const JOB_PATH = '/apis/batch/v1/namespaces/olm/jobs/abc';

const WEBHOOK_TIMEOUTS = [
  'Internal error occurred: failed calling webhook "validate.kyverno.svc-fail": failed to call webhook: Post "https://kyverno-svc.kyverno.svc:443/validate/fail?timeout=10s": context deadline exceeded',
  'Internal error occurred: failed calling webhook "validation.gatekeeper.sh": failed to call webhook: Post "https://gatekeeper-webhook-service.gatekeeper-system.svc:443/v1/admit?timeout=3s": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)',
];

describe('(red team 36) W1: a webhook that timed out refused the write; it is not "unanswered"', () => {
  for (const message of WEBHOOK_TIMEOUTS) {
    it(`Job DELETE: attempt 1 answered 500 "${message.slice(0, 60)}…", OLM deleted the Job meanwhile, retry 404 -> re-plan as gone, no Event`, async () => {
      let deletes = 0;
      const send = (res: ServerResponse, code: number, body: unknown): void => {
        const text = JSON.stringify(body);
        res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        req.resume();
        req.on('end', () => {
          const path = (req.url ?? '').split('?')[0]!;
          if (req.method === 'DELETE' && path === JOB_PATH && ++deletes === 1) {
            return send(res, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500, message, details: { causes: [{ message: 'failed calling webhook' }] } });
          }
          if (path === JOB_PATH) return send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'jobs.batch "abc" not found', details: { name: 'abc', group: 'batch', kind: 'jobs' } });
          send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'no' });
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const { port } = server.address() as { port: number };
      const kc = new KubeConfig();
      kc.loadFromString(`apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
      const kube = createKube(kc, { retries: 3, sleep: async () => undefined });
      const events: EventRecord[] = [];
      const execute = createExecutor({
        writer: kube,
        reader: kube,
        recorder: { record: async (e) => void events.push(e) },
        policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
        budget: new ActionBudget(10, 60_000, () => 0),
      });
      try {
        const out = (await execute('job-conflict', { kind: 'act', summary: 'fix abc', actions: [{ verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' }] }, 'Job/olm/abc')) as { status: string; cause?: string; done?: unknown[] };
        expect(deletes).toBe(2);
        // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
        expect({ status: out.status, cause: out.cause, done: out.done ?? [], events: events.map((e) => e.reason) }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
      } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    }, 20_000);
  }
});
