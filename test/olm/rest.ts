/**
 * A small path-based REST client for the test bed itself (any resource, server-side apply, status
 * subresources), reading a kubeconfig written by the control plane (token + CA). olm-medic's own
 * client (shared/kube) is deliberately not used here: the bed must not depend on the code under test.
 */
import { readFileSync } from 'node:fs';
import { Agent, fetch } from 'undici';

export interface Rest {
  server: string;
  request<T = unknown>(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: T }>;
  get<T = Obj>(path: string): Promise<T | undefined>;
  list<T = Obj>(path: string): Promise<T[]>;
  create<T = Obj>(path: string, obj: unknown): Promise<T>;
  /** Server-side apply as `fieldManager` (force). */
  apply<T = Obj>(path: string, obj: unknown, fieldManager: string): Promise<T>;
  mergePatch<T = Obj>(path: string, patch: unknown): Promise<T>;
  jsonPatch<T = Obj>(path: string, ops: unknown[]): Promise<T>;
  delete(path: string, body?: unknown): Promise<number>;
}

export interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    [k: string]: unknown;
  };
  spec?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  status?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  [k: string]: unknown;
}

export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
    what: string,
  ) {
    super(`${what}: ${status} ${text.slice(0, 500)}`);
  }
}

export function restFromKubeconfig(path: string): Rest {
  const cfg = JSON.parse(readFileSync(path, 'utf8'));
  const server: string = cfg.clusters[0].cluster.server;
  const ca = Buffer.from(cfg.clusters[0].cluster['certificate-authority-data'], 'base64');
  const token: string = cfg.users[0].user.token;
  const dispatcher = new Agent({ connect: { ca } });
  const request = async <T>(method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: T }> => {
    // 429 (e.g. "storage is (re)initializing" right after the bed re-applies OLM's CRDs for another
    // version) is retried after its Retry-After, as any Kubernetes client does (at most ~20 s).
    for (let attempt = 1; ; attempt++) {
      const r = await once<T>(method, p, body, contentType);
      if (r.status !== 429 || attempt >= 20) return r;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const once = async <T>(method: string, p: string, body: unknown, contentType: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${server}${p}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept: 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      dispatcher,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T };
  };
  const must = async <T>(method: string, p: string, body?: unknown, ct?: string): Promise<T> => {
    const r = await request<T>(method, p, body, ct);
    if (r.status >= 300) throw new RestError(r.status, JSON.stringify(r.body), `${method} ${p}`);
    return r.body;
  };
  return {
    server,
    request,
    async get<T>(p: string) {
      const r = await request<T>('GET', p);
      if (r.status === 404) return undefined;
      if (r.status >= 300) throw new RestError(r.status, JSON.stringify(r.body), `GET ${p}`);
      return r.body;
    },
    async list<T>(p: string) {
      return (await must<{ items: T[] }>('GET', p)).items ?? [];
    },
    create: (p, obj) => must('POST', p, obj),
    apply: (p, obj, fieldManager) => must('PATCH', `${p}${p.includes('?') ? '&' : '?'}fieldManager=${encodeURIComponent(fieldManager)}&force=true`, obj, 'application/apply-patch+yaml'),
    mergePatch: (p, patch) => must('PATCH', p, patch, 'application/merge-patch+json'),
    jsonPatch: (p, ops) => must('PATCH', p, ops, 'application/json-patch+json'),
    async delete(p, body) {
      const r = await request('DELETE', p, body);
      if (r.status >= 300 && r.status !== 404) throw new RestError(r.status, JSON.stringify(r.body), `DELETE ${p}`);
      return r.status;
    },
  };
}

/** Paths for the kinds the bed touches. */
export const paths = {
  ns: (n: string) => `/api/v1/namespaces/${n}`,
  core: (ns: string, plural: string, name = '') => `/api/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`,
  batch: (ns: string, name = '') => `/apis/batch/v1/namespaces/${ns}/jobs${name ? `/${name}` : ''}`,
  apps: (ns: string, plural: string, name = '') => `/apis/apps/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`,
  olm: (ns: string, plural: string, name = '') => `/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`,
  olmV1: (ns: string, plural: string, name = '') => `/apis/operators.coreos.com/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`,
  operators: (name = '') => `/apis/operators.coreos.com/v1/operators${name ? `/${name}` : ''}`,
  crd: (name = '') => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions${name ? `/${name}` : ''}`,
  rbac: (plural: 'clusterroles' | 'clusterrolebindings', name = '') => `/apis/rbac.authorization.k8s.io/v1/${plural}${name ? `/${name}` : ''}`,
  nodes: (name = '') => `/api/v1/nodes${name ? `/${name}` : ''}`,
};
