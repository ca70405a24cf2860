/**
 * Binary-mode CloudEvents exactly as Knative's ApiServerSource adapter sends them (Resource mode:
 * ce-* attributes and the kind/name/namespace/apiversion extensions as headers, the object as a
 * JSON body; knative-facts §1.2), built as plain strings so a load generator can make many cheaply.
 */
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, sleep } from './proc.js';

export interface HttpEvent {
  headers: Record<string, string>;
  body: string;
}

export interface KubeObj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** meta.UnsafeGuessKindToResource, which the adapter uses for the subject. */
export function plural(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('s')) return `${k}es`;
  if (k.endsWith('y')) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

let seq = 0;

export function apiServerEvent(verb: 'add' | 'update' | 'delete', obj: KubeObj, o: { id?: string; source?: string; body?: string } = {}): HttpEvent {
  const ns = obj.metadata.namespace ?? '';
  return {
    headers: {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': o.id ?? `bench-${process.pid}-${++seq}`,
      'ce-source': o.source ?? 'https://10.96.0.1:443',
      'ce-type': `dev.knative.apiserver.resource.${verb}`,
      'ce-subject': `/apis/${obj.apiVersion}/namespaces/${ns}/${plural(obj.kind)}/${obj.metadata.name}`,
      'ce-time': new Date().toISOString(),
      'ce-kind': obj.kind,
      'ce-name': obj.metadata.name,
      'ce-namespace': ns,
      'ce-apiversion': obj.apiVersion,
    },
    body: o.body ?? JSON.stringify(obj),
  };
}

/** The realistic Pod of bench/fixtures/pod-update.json (Deployment pod, managedFields, status; no olm.catalogSource label). */
export function realisticPod(): KubeObj {
  return JSON.parse(readFileSync(join(fixturesDir, 'pod-update.json'), 'utf8')) as KubeObj;
}

export interface PostResult {
  status: number;
  body: string;
  headers: Record<string, string | undefined>;
}

/** One POST on a fresh connection (no agent). Rejects with the socket error (e.g. ECONNREFUSED). */
export function postOnce(port: number, ev: HttpEvent, timeoutMs = 10_000): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/', agent: false, headers: { ...ev.headers, 'content-length': String(Buffer.byteLength(ev.body)) }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v])) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(ev.body);
  });
}

const RETRYABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

/**
 * POSTs `ev` until the server answers (connection refused → retry after `pollMs`). Used both to
 * measure a cold start (the first answer IS the measurement) and to wait until a server is up.
 */
export async function postUntilAnswered(port: number, ev: HttpEvent, o: { pollMs?: number; timeoutMs?: number; alive?: () => boolean; what?: string } = {}): Promise<PostResult> {
  const deadline = performance.now() + (o.timeoutMs ?? 30_000);
  for (;;) {
    try {
      return await postOnce(port, ev);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (!RETRYABLE.has(code)) throw e;
    }
    if (o.alive && !o.alive()) throw new Error(`${o.what ?? 'server'} exited before answering`);
    if (performance.now() > deadline) throw new Error(`${o.what ?? 'server'} did not answer on port ${port} within ${o.timeoutMs ?? 30_000} ms`);
    await sleep(o.pollMs ?? 5);
  }
}

/** A kubeconfig for an unreachable server: the Kubernetes client loads and configures, never connects. */
export function dummyKubeconfig(): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'bench-dummy', cluster: { server: 'https://127.0.0.1:9' } }],
    users: [{ name: 'bench-dummy', user: { token: 'bench-dummy-token' } }],
    contexts: [{ name: 'bench-dummy', context: { cluster: 'bench-dummy', user: 'bench-dummy' } }],
    'current-context': 'bench-dummy',
  });
}
