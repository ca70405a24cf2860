/**
 * Red team 34, L3 (fixed): a write that NEVER reached the apiserver (connection refused) is confirmed as made
 * by someone else's delete, and the plan goes on past it.
 *
 * shared/kube/client.ts request() sets `unanswered = true` after ANY transient failure of a write
 * but 429 — including status 0 for a connection that was never established (ECONNREFUSED: an
 * apiserver restarting, a load balancer with no backend yet). Such an attempt cannot have been
 * applied. When the retry then gets 404 (OLM, GC or a user deleted the Job meanwhile), it is still
 * turned into WriteOutcomeUnknown, and the executor's landed() (shared/core/executor.ts, `if (!live
 * || live.metadata.uid !== action.target.uid) return 'done'`) counts the absence as its own delete:
 *   - an UnpackJobDeleted Event "Deleted bundle-unpack Job ... (a re-read shows it made)" for a
 *     write that never left the process,
 *   - status 'acted' (CLI exit 3) instead of the re-plan a target "already gone" must cause,
 *   - and the NEXT action of the plan (the ConfigMap delete) is sent on the view the 404 just proved
 *     stale (executor.ts: "Re-plan from live state: before any dependent write").
 * Before d54b3e5 the retry's 404 was 'gone' -> replan.
 * SAFE: an attempt the apiserver cannot have received (no connection) leaves the outcome known:
 * the retry's 404 is "already gone" (re-plan, no Event, nothing after it).
 */
import { describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/client.js';
import { freePort } from '../control-plane/control-plane.js';
import { CM_PATH, DELETE_CM, DELETE_JOB, JOB_NOT_FOUND, JOB_PATH, failure, fixAbc, kubeConfig, recordingExecutor, send, startScripted, type ScriptedApiserver } from '../support/scripted-apiserver.js';

describe('(red team 34) L3: a write refused a connection is not confirmed by someone else\'s delete', () => {
  it('Job DELETE: attempt 1 ECONNREFUSED (never sent), meanwhile OLM deleted the Job, retry 404 -> re-plan as gone, no Event, no ConfigMap delete', async () => {
    const port = await freePort();
    let api: ScriptedApiserver | undefined;
    const start = async (): Promise<void> => {
      api = await startScripted(
        (req, res) => {
          // The Job was deleted by someone else while the apiserver was unreachable.
          if (req.path === JOB_PATH) return send(res, 404, JOB_NOT_FOUND);
          if (req.method === 'DELETE' && req.path === CM_PATH) return send(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success' });
          send(res, 404, failure(404, 'NotFound', 'no'));
        },
        { port },
      );
    };
    // Nothing listens on the port for the first attempt (connection refused); the apiserver is back for the retry.
    const kube = createKube(kubeConfig(`http://127.0.0.1:${port}`), { retries: 3, sleep: async () => (api ? undefined : start()) });
    const { execute, events } = recordingExecutor(kube);
    try {
      const out = await execute('job-conflict', fixAbc(DELETE_JOB, DELETE_CM), 'Job/olm/abc');
      const log = api?.log ?? [];
      // The first DELETE never reached a server: the only DELETE of the Job the apiserver saw is the retry.
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: status 'acted', Events [UnpackJobDeleted, UnpackConfigMapDeleted], the ConfigMap deleted.
      expect({ status: out.status, events: events.map((e) => e.reason), cmDeletes: log.filter((l) => l === `DELETE ${CM_PATH}`).length }).toEqual({ status: 'replan', events: [], cmDeletes: 0 });
    } finally {
      await api?.close();
    }
  }, 20_000);
});

describe('(red team 34) L3b: a write the apiserver ANSWERED with a refusal (a failing admission webhook, 500) is not "unanswered"', () => {
  it('Job DELETE: attempt 1 answered 500 InternalError "failed calling webhook" (admission runs before storage: nothing deleted), OLM deleted the Job meanwhile, retry 404 -> re-plan as gone, no Event', async () => {
    let deletes = 0;
    const api = await startScripted((req, res) => {
      if (req.method === 'DELETE' && req.path === JOB_PATH && ++deletes === 1) {
        return send(res, 500, failure(500, 'InternalError', 'Internal error occurred: failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy.svc:443/validate": dial tcp 10.96.4.4:443: connect: connection refused', { causes: [{ message: 'failed calling webhook' }] }));
      }
      if (req.path === JOB_PATH) return send(res, 404, JOB_NOT_FOUND);
      send(res, 404, failure(404, 'NotFound', 'no'));
    });
    const kube = createKube(api.kubeConfig(), { retries: 3, sleep: async () => undefined });
    const { execute, events } = recordingExecutor(kube);
    try {
      const out = await execute('job-conflict', fixAbc(DELETE_JOB), 'Job/olm/abc');
      // Current code: status 'acted', an UnpackJobDeleted Event "(a re-read shows it made)".
      expect({ status: out.status, events: events.map((e) => e.reason) }).toEqual({ status: 'replan', events: [] });
    } finally {
      await api.close();
    }
  }, 20_000);
});
