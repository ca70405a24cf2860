/**
 * The one module that talks to the Kubernetes API. Credentials and TLS come from
 * @kubernetes/client-node's KubeConfig (kubeconfig file or in-cluster); requests are plain REST
 * over one pooled undici dispatcher, with a static resource table (no discovery), bounded
 * retries of transient failures, paginated lists and a hook that counts every request.
 */
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fetch, type Dispatcher } from 'undici';
import { KubeError, networkError, type StatusDetails } from './errors.js';
import { resourceFor, resourcePath, type ResourceInfo } from './resources.js';
import type { DeleteOptions, Kube, KubeObject, ListOptions, PatchOptions, Ref, WriteOptions } from './types.js';

export interface KubeClientOptions {
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Extra attempts for transient failures (5xx, 429, network). */
  retries?: number;
  /** Base backoff between attempts; doubled each time, capped by maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Called once per HTTP request, for metrics. */
  onRequest?: (verb: string, resource: string, status: number, seconds: number) => void;
  sleep?: (ms: number) => Promise<void>;
  /** The local clock (ms since the epoch); the server's is derived from it and response Date headers. */
  localNow?: () => number;
}

/** Loads credentials: an explicit kubeconfig path, else in-cluster, else the default chain. */
export function loadKubeConfig(kubeconfig?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster in the loaded configuration');
  return kc;
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Call {
  method: HttpMethod;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
  /** For metrics: "<verb> <plural>". */
  verb: string;
  resource: string;
}

export function createKube(kc: KubeConfig, options: KubeClientOptions = {}): Kube {
  const server = kc.getCurrentCluster()!.server.replace(/\/$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = options.retries ?? 3;
  const backoffMs = options.backoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 2_000;
  const sleep = options.sleep ?? wait;
  const localNow = options.localNow ?? Date.now;
  let dispatcher: Dispatcher | undefined;
  // serverTime - localTime, from the Date header of the latest response. Date is truncated to the
  // second and read after the answer was produced, so local + offset never runs ahead of the
  // apiserver: fences and deadlines judged on it can only expire late, never early.
  let clockOffsetMs = 0;

  async function once(call: Call): Promise<unknown> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) qs.set(k, v);
    const url = `${server}${call.path}${qs.size ? `?${qs}` : ''}`;
    const ctx = new RequestContext(url, call.method);
    ctx.setHeaderParam('Accept', 'application/json');
    if (call.body !== undefined) ctx.setHeaderParam('Content-Type', call.contentType ?? 'application/json');
    await kc.applySecurityAuthentication(ctx);
    // client-node builds a new agent per request; keep the first so connections are pooled.
    dispatcher ??= ctx.getDispatcher() as Dispatcher | undefined;
    const started = performance.now();
    let res;
    try {
      res = await fetch(url, {
        method: call.method,
        headers: ctx.getHeaders(),
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: AbortSignal.timeout(timeoutMs),
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (e) {
      options.onRequest?.(call.verb, call.resource, 0, (performance.now() - started) / 1000);
      throw networkError(e);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      // A connection cut while reading the body is a network failure, never an empty success.
      options.onRequest?.(call.verb, call.resource, 0, (performance.now() - started) / 1000);
      throw networkError(e);
    }
    options.onRequest?.(call.verb, call.resource, res.status, (performance.now() - started) / 1000);
    const date = Date.parse(res.headers.get('date') ?? '');
    if (Number.isFinite(date)) clockOffsetMs = date - localNow();
    const json = text ? safeJson(text) : undefined;
    if (res.ok) {
      // Reads always carry an object; an empty or unparsable 2xx body means a truncated answer.
      if (call.method === HttpMethod.GET && (typeof json !== 'object' || json === null || !('kind' in json || 'items' in json || 'metadata' in json))) {
        throw networkError(new Error(`truncated response to ${call.verb} ${call.resource}`));
      }
      return json;
    }
    const status = json as { kind?: string; reason?: string; message?: string; details?: StatusDetails } | undefined;
    const retryAfter = Number(res.headers.get('retry-after'));
    throw new KubeError(
      res.status,
      (status?.kind === 'Status' ? status.reason : undefined) ?? res.statusText,
      status?.message ?? `${call.verb} ${call.resource}: HTTP ${res.status}`,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
      status?.kind === 'Status' && typeof status.details === 'object' && status.details ? status.details : undefined,
    );
  }

  async function request(call: Call): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(call);
      } catch (e) {
        if (!(e instanceof KubeError) || !e.transient || attempt >= retries) throw e;
        const backoff = Math.min(maxBackoffMs, backoffMs * 2 ** attempt);
        const hinted = e.retryAfterSeconds ? Math.min(maxBackoffMs, e.retryAfterSeconds * 1000) : 0;
        await sleep(Math.max(backoff, hinted));
      }
    }
  }

  function pathOf(ref: Ref, withName = true): { path: string; plural: string; info: ResourceInfo } {
    const info = resourceFor(ref.apiVersion, ref.kind);
    return { path: resourcePath(info, ref.namespace, withName ? ref.name : undefined), plural: info.plural, info };
  }

  /** A 404 that proves the object is gone, else the error itself (a failure, never "gone"). */
  function goneOr(e: unknown, info: ResourceInfo, name: string): 'gone' {
    if (e instanceof KubeError && e.isGone(info, name)) return 'gone';
    if (e instanceof KubeError && e.notFound) {
      throw new KubeError(e.status, e.reason, `no evidence that ${info.plural} "${name}" is gone: ${e.message}`, undefined, e.details);
    }
    throw e;
  }

  const dry = (o: WriteOptions): string | undefined => (o.dryRun ? 'All' : undefined);

  return {
    async get<T extends KubeObject>(ref: Ref): Promise<T | undefined> {
      const { path, plural, info } = pathOf(ref);
      try {
        return (await request({ method: HttpMethod.GET, path, verb: 'get', resource: plural })) as T;
      } catch (e) {
        goneOr(e, info, ref.name);
        return undefined;
      }
    },

    async *list<T extends KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      const info = resourceFor(apiVersion, kind);
      const path = resourcePath(info, opts.namespace);
      let cont: string | undefined;
      do {
        const page = (await request({
          method: HttpMethod.GET,
          path,
          verb: 'list',
          resource: info.plural,
          query: {
            labelSelector: opts.labelSelector,
            fieldSelector: opts.fieldSelector,
            limit: String(opts.pageSize ?? 500),
            continue: cont,
          },
        })) as { items?: T[]; metadata?: { continue?: string } };
        // List items carry no apiVersion/kind; restore them so callers can build refs.
        for (const item of page.items ?? []) yield { ...item, apiVersion, kind };
        cont = page.metadata?.continue || undefined;
      } while (cont);
    },

    async delete(ref: Ref, opts: DeleteOptions): Promise<'deleted' | 'pending' | 'gone'> {
      const { path, plural, info } = pathOf(ref);
      const body = {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { uid: opts.uid, ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}) },
        ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
        ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
        // With a body, the apiserver reads DeleteOptions from it and ignores the dryRun query parameter.
        ...(opts.dryRun ? { dryRun: ['All'] } : {}),
      };
      try {
        const res = (await request({ method: HttpMethod.DELETE, path, body, verb: 'delete', resource: plural, query: { dryRun: dry(opts) } })) as
          | { kind?: string; metadata?: { deletionTimestamp?: string; finalizers?: string[] } }
          | undefined;
        // The apiserver answers with the object while finalizers hold it, with a Status once it is gone.
        const held = res && res.kind !== 'Status' && res.metadata?.deletionTimestamp && (res.metadata.finalizers?.length ?? 0) > 0;
        return held ? 'pending' : 'deleted';
      } catch (e) {
        return goneOr(e, info, ref.name);
      }
    },

    async mergePatch(ref: Ref, patch: Record<string, unknown>, opts: PatchOptions): Promise<KubeObject | 'gone'> {
      const { path: objPath, plural, info } = pathOf(ref);
      const path = opts.subresource ? `${objPath}/${opts.subresource}` : objPath;
      try {
        return await patchCall();
      } catch (e) {
        return goneOr(e, info, ref.name);
      }
      async function patchCall(): Promise<KubeObject> {
      return (await request({
        method: HttpMethod.PATCH,
        path,
        body: patch,
        contentType: 'application/merge-patch+json',
        verb: 'patch',
        resource: plural,
        query: { dryRun: dry(opts), fieldManager: 'olm-medic' },
      })) as KubeObject;
      }
    },

    serverNow: () => new Date(localNow() + clockOffsetMs),

    async create(obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
      const { path, plural } = pathOf(refOfNew(obj), false);
      return (await request({
        method: HttpMethod.POST,
        path,
        body: obj,
        verb: 'create',
        resource: plural,
        query: { dryRun: dry(opts), fieldManager: 'olm-medic' },
      })) as KubeObject;
    },
  };
}

function refOfNew(obj: KubeObject): Ref {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) };
  }
}
