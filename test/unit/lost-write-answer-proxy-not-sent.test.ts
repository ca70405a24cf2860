/**
 * Red team 36, P1 (fixed): the N1 fix of red team 35 ("a request that failed before it was written whole is
 * ConnectFailed, never possibly applied") covers only exchange() (node:https). A cluster reached
 * through a proxy (kubeconfig `proxy-url`) goes through viaFetch() (shared/kube/client.ts:186-203),
 * which has none of it:
 *  (1) an exec credential plugin failing once: kc.applySecurityAuthentication (client.ts:190) throws
 *      before any connection; once() wraps it with networkError (client.ts:86) -> 'NetworkError';
 *  (2) the proxy refusing the CONNECT tunnel (502: it could not reach the apiserver): undici throws
 *      RequestAbortedError "Proxy response (502) !== 200 when HTTP Tunneling" (code UND_ERR_ABORTED,
 *      not in NEVER_SENT, errors.ts:92) -> 'NetworkError'.
 * mayHaveApplied() (errors.ts:126) says yes for both, request() (client.ts:216) sets `unanswered`, and
 * the retry's 404 (OLM/GC deleted the Job meanwhile) becomes WriteOutcomeUnknown; the executor's
 * landed() (shared/core/executor.ts:81) confirms the absence as its own delete: a 'done' action and an
 * UnpackJobDeleted Event "(a re-read shows its effect in place)" for a DELETE that never left the
 * process, and a re-plan as 'lost-answer' (the engine's outcome 'acted').
 * SAFE (as lost-write-answer-not-written.test.ts for the direct transport): replan cause 'gone', no
 * Event, nothing done.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { Plan } from '../../shared/core/types.js';
import { createKube } from '../../shared/kube/client.js';

const JOB_PATH = '/apis/batch/v1/namespaces/olm/jobs/abc';
const log: string[] = [];

/** The apiserver after someone else deleted the Job: every request for it is 404 NotFound. */
function handler(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', () => {
    const path = (req.url ?? '').replace(/^https?:\/\/[^/]+/, '').split('?')[0]!;
    log.push(`${req.method} ${path}`);
    const body = path === JOB_PATH
      ? { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'jobs.batch "abc" not found', details: { name: 'abc', group: 'batch', kind: 'jobs' } }
      : { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'no' };
    const text = JSON.stringify(body);
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
}

const plan: Plan = {
  kind: 'act',
  summary: 'fix abc',
  actions: [{ verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' }],
};

async function execute(kube: ReturnType<typeof createKube>) {
  const events: EventRecord[] = [];
  const exec = createExecutor({
    writer: kube,
    reader: kube,
    recorder: { record: async (e) => void events.push(e) },
    policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
    budget: new ActionBudget(10, 60_000, () => 0),
  });
  const out = await exec('job-conflict', plan, 'Job/olm/abc');
  return { out: out as { status: string; cause?: string; done?: unknown[] }, events: events.map((e) => e.reason) };
}

describe('(red team 36) P1: through a proxy (proxy-url), a write that never left the process is confirmed by someone else\'s delete', () => {
  it('(1) exec credential plugin fails once, cluster behind an HTTP proxy: retry 404 -> re-plan as gone, no Event', async () => {
    log.length = 0;
    const api = createHttpServer(handler);
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const apiPort = (api.address() as { port: number }).port;
    // A forward proxy (absolute-form requests for an http:// server).
    const proxy = createHttpServer((req, res) => {
      const u = new URL(req.url!);
      const up = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyPort = (proxy.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'olm-medic-rt36-exec-'));
    const plugin = join(dir, 'get-token.sh');
    const marker = join(dir, 'ran-once');
    writeFileSync(plugin, `#!/bin/sh\nif [ ! -f "${marker}" ]; then touch "${marker}"; echo "could not reach STS" >&2; exit 1; fi\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'\n`);
    chmodSync(plugin, 0o755);
    const kc = new KubeConfig();
    kc.loadFromString(`apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:${apiPort}", insecure-skip-tls-verify: true, proxy-url: "http://127.0.0.1:${proxyPort}"}\nusers:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
    const kube = createKube(kc, { retries: 3, sleep: async () => undefined });
    try {
      const r = await execute(kube);
      expect(existsSync(marker)).toBe(true);
      // The apiserver saw exactly one DELETE of the Job: the retry. The first never left the process.
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      api.closeAllConnections();
      proxy.closeAllConnections();
      await new Promise<void>((r) => api.close(() => r()));
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  }, 20_000);

  it('(2) the proxy refuses the first CONNECT tunnel (502), cluster https: retry 404 -> re-plan as gone, no Event', async () => {
    log.length = 0;
    const dir = mkdtempSync(join(tmpdir(), 'olm-medic-rt36-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const https = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, handler);
    await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
    const apiPort = (https.address() as { port: number }).port;
    let connects = 0;
    const sockets: Socket[] = [];
    const proxy = createNetServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
      s.once('data', (d) => {
        const head = d.toString('latin1');
        if (!head.startsWith('CONNECT ')) return s.destroy();
        connects++;
        if (connects === 1) {
          // The proxy could not reach the apiserver: no tunnel, nothing forwarded.
          s.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
          return;
        }
        const up = new Socket();
        sockets.push(up);
        up.on('error', () => undefined);
        up.connect(apiPort, '127.0.0.1', () => {
          s.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          s.pipe(up);
          up.pipe(s);
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyPort = (proxy.address() as { port: number }).port;
    const kc = new KubeConfig();
    kc.loadFromString(`apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:${apiPort}", insecure-skip-tls-verify: true, proxy-url: "http://127.0.0.1:${proxyPort}"}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
    const kube = createKube(kc, { retries: 3, timeoutMs: 2_000, sleep: async () => undefined });
    try {
      const r = await execute(kube);
      expect(connects).toBeGreaterThanOrEqual(2);
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      for (const s of sockets) s.destroy();
      https.closeAllConnections();
      await new Promise<void>((r) => https.close(() => r()));
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  }, 20_000);
});
