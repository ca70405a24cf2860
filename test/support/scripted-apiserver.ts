/**
 * Test support: a scripted apiserver for unit tests of the kube client (shared/kube/client.ts) and the
 * executor on it, no cluster (test/unit/lost-write-answer-*.test.ts, client-clock-offset.test.ts).
 *   send(res, code, body)          a JSON answer with its content-length;
 *   notFound(name, group, kind)    the apiserver's NotFound Status for one object; failure(code, reason,
 *                                  message, details?) any other Status refusing a request;
 *   scriptedListener(script, o)    a request listener that reads each request whole, logs it as
 *                                  "METHOD path" (the query too with o.query), then hands it to script:
 *                                  { method, path, url, body, drop() } (drop: the connection cut, no answer);
 *   startScripted(script, o)       that listener on 127.0.0.1 (on o.port, else any free port; HTTPS with
 *                                  o.tls): { port, url, log, kubeconfigYaml, kubeConfig(k?), close() };
 *   kubeconfigYaml(server, k) / kubeConfig(server, k)   a one-cluster kubeconfig (insecure-skip-tls-verify,
 *                                  token x, or k.exec's credential plugin; k.proxyUrl's proxy-url);
 *   selfSignedTls(prefix)          a key and certificate for 127.0.0.1 (openssl), for startScripted's o.tls;
 *   flakyExecPlugin(prefix)        an exec credential plugin whose first call fails (exit 1), then a token;
 *   recordingExecutor(kube, o)     createExecutor writing and re-reading through kube, its Events pushed
 *                                  to `events`; no protected namespace, 10 actions a minute on a still clock;
 *   executeJobDelete(kube)         that executor run on fixAbc(DELETE_JOB): its outcome and its Events' reasons;
 *   JOB_PATH / CM_PATH, JOB_NOT_FOUND, DELETE_JOB / DELETE_CM, fixAbc(...actions), jobGone
 *                                  the unpack Job olm/abc and its ConfigMap: their paths, the Job's
 *                                  NotFound, job-conflict's deletes of them, a plan of those deletes, and a
 *                                  script for the apiserver after someone else deleted the Job (all 404).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { Action, Plan } from '../../shared/core/types.js';
import type { Kube, Reader, Writer } from '../../shared/kube/types.js';

export function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function failure(code: number, reason: string, message: string, details?: Record<string, unknown>) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message, ...(details ? { details } : {}) };
}

export function notFound(name: string, group: string, kind: string) {
  return failure(404, 'NotFound', `${kind}.${group} "${name}" not found`, { name, group, kind });
}

export interface ScriptedRequest {
  method: string;
  /** Without the query (and without the scheme and host of a proxy's absolute-form request). */
  path: string;
  /** path and query. */
  url: string;
  body: string;
  drop(): void;
}
export type Script = (req: ScriptedRequest, res: ServerResponse) => void;

export function scriptedListener(script: Script, o: { query?: boolean } = {}): { listener: RequestListener; log: string[] } {
  const log: string[] = [];
  const listener: RequestListener = (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const url = (req.url ?? '').replace(/^https?:\/\/[^/]+/, '');
      const path = url.split('?')[0]!;
      log.push(`${req.method} ${o.query ? url : path}`);
      script({ method: req.method ?? '', path, url, body, drop: () => void req.socket.destroy() }, res);
    });
  };
  return { listener, log };
}

export interface KubeconfigOptions {
  /** The exec credential plugin's command (else the user is token x). */
  exec?: string;
  proxyUrl?: string;
}

export function kubeconfigYaml(server: string, k: KubeconfigOptions = {}): string {
  const proxy = k.proxyUrl ? `, proxy-url: "${k.proxyUrl}"` : '';
  const user = k.exec ? `\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: "${k.exec}", interactiveMode: Never}` : ' {token: x}';
  return `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${server}", insecure-skip-tls-verify: true${proxy}}\nusers:\n- name: u\n  user:${user}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`;
}

export function kubeConfig(server: string, k: KubeconfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(server, k));
  return kc;
}

export interface ScriptedApiserver {
  port: number;
  url: string;
  log: string[];
  kubeconfigYaml: string;
  kubeConfig(k?: KubeconfigOptions): KubeConfig;
  close(): Promise<void>;
}

export async function startScripted(script: Script, o: { port?: number; query?: boolean; tls?: { key: Buffer; cert: Buffer } } = {}): Promise<ScriptedApiserver> {
  const { listener, log } = scriptedListener(script, o);
  const server = o.tls ? createHttpsServer(o.tls, listener) : createServer(listener);
  await new Promise<void>((r) => server.listen(o.port ?? 0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const url = `${o.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    port,
    url,
    log,
    kubeconfigYaml: kubeconfigYaml(url),
    kubeConfig: (k) => kubeConfig(url, k),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export function selfSignedTls(prefix: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
}

/** `marker` exists once the plugin has run (and failed). */
export function flakyExecPlugin(prefix: string): { plugin: string; marker: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const plugin = join(dir, 'get-token.sh');
  const marker = join(dir, 'ran-once');
  writeFileSync(plugin, `#!/bin/sh\nif [ ! -f "${marker}" ]; then touch "${marker}"; echo "could not reach STS" >&2; exit 1; fi\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'\n`);
  chmodSync(plugin, 0o755);
  return { plugin, marker };
}

export function recordingExecutor(kube: Writer & Pick<Reader, 'get'>, o: { dryRun?: boolean } = {}) {
  const events: EventRecord[] = [];
  const execute = createExecutor({
    writer: kube,
    reader: kube,
    recorder: { record: async (e) => void events.push(e) },
    policy: { dryRun: o.dryRun ?? false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
    budget: new ActionBudget(10, 60_000, () => 0),
  });
  return { execute, events };
}

export const JOB_PATH = '/apis/batch/v1/namespaces/olm/jobs/abc';
export const CM_PATH = '/api/v1/namespaces/olm/configmaps/abc';
export const JOB_NOT_FOUND = notFound('abc', 'batch', 'jobs');

export const DELETE_JOB: Action = { verb: 'delete', target: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: 'abc', uid: 'job-1', resourceVersion: '7' }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: 'Deleted bundle-unpack Job abc.' };
export const DELETE_CM: Action = { verb: 'delete', target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'olm', name: 'abc', uid: 'cm-1', resourceVersion: '3' }, optional: true, propagationPolicy: 'Background', reason: 'UnpackConfigMapDeleted', note: 'Deleted the empty unpack ConfigMap abc.' };

export const fixAbc = (...actions: Action[]): Plan => ({ kind: 'act', summary: 'fix abc', actions });

export async function executeJobDelete(kube: Kube) {
  const { execute, events } = recordingExecutor(kube);
  const out = await execute('job-conflict', fixAbc(DELETE_JOB), 'Job/olm/abc');
  return { out: out as { status: string; cause?: string; done?: unknown[] }, events: events.map((e) => e.reason) };
}

export const jobGone: Script = (req, res) => send(res, 404, req.path === JOB_PATH ? JOB_NOT_FOUND : failure(404, 'NotFound', 'no'));
