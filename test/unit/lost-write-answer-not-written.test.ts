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
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
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
    const path = (req.url ?? '').split('?')[0]!;
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

describe('(red team 35) N1: a write that never reached the apiserver is not confirmed by someone else\'s delete', () => {
  it('(1) TLS handshake timeout on the first DELETE (nothing written), Job deleted by OLM meanwhile, retry 404 -> re-plan as gone, no Event', async () => {
    log.length = 0;
    const dir = mkdtempSync(join(tmpdir(), 'olm-medic-rt35-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    const https = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, handler);
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
    const kc = new KubeConfig();
    kc.loadFromString(`apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
    const kube = createKube(kc, { retries: 3, timeoutMs: 500, sleep: async () => undefined });
    try {
      const r = await execute(kube);
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
    log.length = 0;
    const server = createHttpServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const dir = mkdtempSync(join(tmpdir(), 'olm-medic-rt35-exec-'));
    const plugin = join(dir, 'get-token.sh');
    const marker = join(dir, 'ran-once');
    // Like an auth plugin whose first call hits a transient IAM/STS error: exit 1, then a token.
    writeFileSync(plugin, `#!/bin/sh\nif [ ! -f "${marker}" ]; then touch "${marker}"; echo "could not reach STS" >&2; exit 1; fi\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'\n`);
    chmodSync(plugin, 0o755);
    const kc = new KubeConfig();
    kc.loadFromString(`apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: "${plugin}", interactiveMode: Never}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`);
    const kube = createKube(kc, { retries: 3, sleep: async () => undefined });
    try {
      const r = await execute(kube);
      expect(existsSync(marker)).toBe(true);
      expect(log.filter((l) => l === `DELETE ${JOB_PATH}`)).toHaveLength(1);
      // Current code: { status: 'replan', cause: 'lost-answer', done: [delete done] }, events ['UnpackJobDeleted'].
      expect({ status: r.out.status, cause: r.out.cause, done: r.out.done ?? [], events: r.events }).toEqual({ status: 'replan', cause: 'gone', done: [], events: [] });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 20_000);
});
