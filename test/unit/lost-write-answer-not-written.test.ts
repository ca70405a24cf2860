/**
 * Red team 35, N1 (fixed): writes that NEVER reached the apiserver still count as "may have been applied",
 * so someone else's delete is confirmed as olm-medic's own (the L3 hole of red team 34, fixed only
 * for ECONNREFUSED & co.).
 *
 * shared/kube/errors.ts networkError() calls an error ConnectFailed (never sent) only when its cause
 * chain carries one of the NEVER_SENT codes. Two everyday failures before the request is written carry
 * none, become 'NetworkError', and mayHaveApplied() (errors.ts:119) says yes, so request()
 * (shared/kube/client.ts:200 `if (write && mayHaveApplied(e)) unanswered = true`) turns the retry's
 * 404 into WriteOutcomeUnknown:
 *  (1) a TLS handshake that times out (an overloaded apiserver or load balancer: client-go's classic
 *      "TLS handshake timeout"): node:https writes the request only after the handshake, so the
 *      AbortSignal's TimeoutError (client.ts:149, no error code) ends an attempt that sent nothing;
 *  (2) credentials that fail to load for one attempt (an exec credential plugin — aws/gke auth —
 *      exiting non-zero, a token file being rotated): kc.applyToHTTPSOptions throws in exchange()
 *      (client.ts:128) before any connection, and once() wraps it as networkError (client.ts:86).
 * Meanwhile OLM (or GC, a user) deleted the Job; the retry gets 404 -> WriteOutcomeUnknown; the
 * executor's landed() (shared/core/executor.ts:81 `if (!live || ...) return 'done'`) confirms the
 * absence as its own delete: an UnpackJobDeleted Event "(a re-read shows its effect in place)" and a
 * 'done' action for a DELETE that never left the process (CLI exit 3, "acted").
 * SAFE (as lost-write-answer-never-sent.test.ts for ECONNREFUSED): the retry's 404 is "already gone":
 * replan cause 'gone', no Event, nothing done.
 */
import { existsSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/client.js';
import { JOB_PATH, executeJobDelete, flakyExecPlugin, jobGone, kubeConfig, scriptedListener, selfSignedTls, startScripted } from '../support/scripted-apiserver.js';

describe('(red team 35) N1: a write that never reached the apiserver is not confirmed by someone else\'s delete', () => {
  it('(1) TLS handshake timeout on the first DELETE (nothing written), Job deleted by OLM meanwhile, retry 404 -> re-plan as gone, no Event', async () => {
    // The apiserver after someone else deleted the Job: every request for it is 404 NotFound.
    const { listener, log } = scriptedListener(jobGone);
    const https = createHttpsServer(selfSignedTls('olm-medic-rt35-tls-'), listener);
    // The front door: the first connection is accepted but its TLS handshake never answered (an
    // overloaded apiserver); later ones reach the apiserver.
    const held: Socket[] = [];
    let bytesOnStalled = 0;
    const front = createNetServer((s) => {
      if (held.length === 0) {
        held.push(s);
        s.on('data', (d) => (bytesOnStalled += d.length)); // the ClientHello only: no HTTP request
        s.on('error', () => undefined);
        return;
      }
      https.emit('connection', s);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const { port } = front.address() as { port: number };
    const kube = createKube(kubeConfig(`https://127.0.0.1:${port}`), { retries: 3, timeoutMs: 500, sleep: async () => undefined });
    try {
      const r = await executeJobDelete(kube);
      expect(held).toHaveLength(1);
      expect(bytesOnStalled).toBeGreaterThan(0);
      // The apiserver saw exactly one DELETE of the Job: the retry. The first was never written.
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      for (const s of held) s.destroy();
      https.closeAllConnections();
      await new Promise<void>((r) => front.close(() => r()));
    }
  }, 20_000);

  it('(2) exec credential plugin fails once (no request made), Job deleted by OLM meanwhile, retry 404 -> re-plan as gone, no Event', async () => {
    // Like an auth plugin whose first call hits a transient IAM/STS error: exit 1, then a token.
    const { plugin, marker } = flakyExecPlugin('olm-medic-rt35-exec-');
    const api = await startScripted(jobGone);
    const log = api.log;
    const kube = createKube(api.kubeConfig({ exec: plugin }), { retries: 3, sleep: async () => undefined });
    try {
      const r = await executeJobDelete(kube);
      expect(existsSync(marker)).toBe(true);
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      await api.close();
    }
  }, 20_000);
});
