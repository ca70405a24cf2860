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
import { existsSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createNetServer, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/client.js';
import { JOB_PATH, executeJobDelete, flakyExecPlugin, jobGone, selfSignedTls, startScripted } from '../support/scripted-apiserver.js';

describe('(red team 36) P1: through a proxy (proxy-url), a write that never left the process is confirmed by someone else\'s delete', () => {
  it('(1) exec credential plugin fails once, cluster behind an HTTP proxy: retry 404 -> re-plan as gone, no Event', async () => {
    // The apiserver after someone else deleted the Job: every request for it is 404 NotFound.
    const api = await startScripted(jobGone);
    const log = api.log;
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
    const { plugin, marker } = flakyExecPlugin('olm-medic-rt36-exec-');
    const kube = createKube(api.kubeConfig({ exec: plugin, proxyUrl: `http://127.0.0.1:${proxyPort}` }), { retries: 3, sleep: async () => undefined });
    try {
      const r = await executeJobDelete(kube);
      expect(existsSync(marker)).toBe(true);
      // The apiserver saw exactly one DELETE of the Job: the retry. The first never left the process.
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      proxy.closeAllConnections();
      await api.close();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  }, 20_000);

  it('(2) the proxy refuses the first CONNECT tunnel (502), cluster https: retry 404 -> re-plan as gone, no Event', async () => {
    // The apiserver after someone else deleted the Job: every request for it is 404 NotFound.
    const api = await startScripted(jobGone, { tls: selfSignedTls('olm-medic-rt36-tls-') });
    const log = api.log;
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
        up.connect(api.port, '127.0.0.1', () => {
          s.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          s.pipe(up);
          up.pipe(s);
        });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyPort = (proxy.address() as { port: number }).port;
    const kube = createKube(api.kubeConfig({ proxyUrl: `http://127.0.0.1:${proxyPort}` }), { retries: 3, timeoutMs: 2_000, sleep: async () => undefined });
    try {
      const r = await executeJobDelete(kube);
      expect(connects).toBeGreaterThanOrEqual(2);
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      for (const s of sockets) s.destroy();
      await api.close();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  }, 20_000);
});
