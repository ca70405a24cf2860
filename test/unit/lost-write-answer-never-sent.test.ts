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
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { Action, Plan } from '../../shared/core/types.js';
import { createKube } from '../../shared/kube/client.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const JOB_PATH = '/apis/batch/v1/namespaces/olm/jobs/abc';
const CM_PATH = '/api/v1/namespaces/olm/configmaps/abc';

describe('(red team 34) L3: a write refused a connection is not confirmed by someone else\'s delete', () => {
  it('Job DELETE: attempt 1 ECONNREFUSED (never sent), meanwhile OLM deleted the Job, retry 404 -> re-plan as gone, no Event, no ConfigMap delete', async () => {
    const port = await freePort();
    const log: string[] = [];
    const send = (res: ServerResponse, code: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const notFound = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'jobs.batch "abc" not found', details: { name: 'abc', group: 'batch', kind: 'jobs' } };
    let server: Server | undefined;
    const start = (): Promise<void> =>
      new Promise((r) => {
        server = createServer((req: IncomingMessage, res: ServerResponse) => {
          req.resume();
          req.on('end', () => {
            const path = (req.url ?? '').split('?')[0]!;
            log.push(`${req.method} ${path}`);
            // The Job was deleted by someone else while the apiserver was unreachable.
            if (path === JOB_PATH) return send(res, 404, notFound);
            if (req.method === 'DELETE' && path === CM_PATH) return send(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success' });
            send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'no' });
          });
        });
        server.listen(port, '127.0.0.1', () => r());
      });
    const kc = new KubeConfig();
    kc.loadFromString(`apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
    // Nothing listens on the port for the first attempt (connection refused); the apiserver is back for the retry.
    const kube = createKube(kc, { retries: 3, sleep: async () => (server ? undefined : start()) });
    const events: EventRecord[] = [];
    const execute = createExecutor({
      writer: kube,
      reader: kube,
      recorder: { record: async (e) => void events.push(e) },
      policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
      budget: new ActionBudget(10, 60_000, () => 0),
    });
    const plan: Plan = {
      kind: 'act',
      summary: 'fix abc',
      actions: [
        { verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' },
        { verb: 'delete', target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'olm', name: 'abc', uid: 'cm-1', resourceVersion: '3' }, optional: true, propagationPolicy: 'Background', reason: 'UnpackConfigMapDeleted', note: 'Deleted the empty unpack ConfigMap abc.' },
      ] as Action[],
    };
    try {
      const out = await execute('job-conflict', plan, 'Job/olm/abc');
      // The first DELETE never reached a server: the only DELETE of the Job the apiserver saw is the retry.
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: status 'acted', Events [UnpackJobDeleted, UnpackConfigMapDeleted], the ConfigMap deleted.
      expect({ status: out.status, events: events.map((e) => e.reason), cmDeletes: log.filter((l) => l === `DELETE ${CM_PATH}`).length }).toEqual({ status: 'replan', events: [], cmDeletes: 0 });
    } finally {
      server?.closeAllConnections();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    }
  }, 20_000);
});

describe('(red team 34) L3b: a write the apiserver ANSWERED with a refusal (a failing admission webhook, 500) is not "unanswered"', () => {
  it('Job DELETE: attempt 1 answered 500 InternalError "failed calling webhook" (admission runs before storage: nothing deleted), OLM deleted the Job meanwhile, retry 404 -> re-plan as gone, no Event', async () => {
    const log: string[] = [];
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
        log.push(`${req.method} ${path}`);
        if (req.method === 'DELETE' && path === JOB_PATH && ++deletes === 1) {
          return send(res, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500, message: 'Internal error occurred: failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy.svc:443/validate": dial tcp 10.96.4.4:443: connect: connection refused', details: { causes: [{ message: 'failed calling webhook' }] } });
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
      const out = await execute('job-conflict', { kind: 'act', summary: 'fix abc', actions: [{ verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' }] }, 'Job/olm/abc');
      // Current code: status 'acted', an UnpackJobDeleted Event "(a re-read shows it made)".
      expect({ status: out.status, events: events.map((e) => e.reason) }).toEqual({ status: 'replan', events: [] });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 20_000);
});
