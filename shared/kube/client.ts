/**
 * The one module that talks to the Kubernetes API. Credentials and TLS come from
 * @kubernetes/client-node's KubeConfig (kubeconfig file or in-cluster); requests are plain REST
 * over one keep-alive node:https (or node:http) agent, with a static resource table (no
 * discovery), bounded retries of transient failures, paginated lists and a hook that counts every
 * request. A cluster reached through a proxy (`proxy-url`) keeps client-node's undici dispatcher.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { gunzip, inflate } from 'node:zlib';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { fetch, type Dispatcher } from 'undici';
import { causeChain, KubeError, mayHaveApplied, networkError, NOT_SENT, WriteOutcomeUnknown, type StatusDetails } from './errors.js';
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
  /**
   * The field manager writes are recorded under (managedFields). The runtime passes its own
   * (MEDIC.fieldManager) and reads it back to tell its own records from a user's; other users of
   * this client (tests, the demo, tools) write as `olm-medic-client` unless they say otherwise.
   */
  fieldManager?: string;
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
  /** Accept header (default application/json). */
  accept?: string;
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
  const fieldManager = options.fieldManager ?? 'olm-medic-client';
  // A cluster behind a proxy keeps client-node's own undici dispatcher (and fetch); any other is
  // reached over node:https / node:http with one keep-alive agent (see `exchange`).
  const viaProxy = Boolean(kc.getCurrentCluster()?.proxyUrl);
  let dispatcher: Dispatcher | undefined;
  let agent: HttpAgent | undefined;
  // serverTime - localTime, from the Date header of the latest answer the apiserver wrote. Date is truncated to the
  // second and read after the answer was produced, so local + offset never runs ahead of the
  // apiserver: fences and deadlines judged on it can only expire late, never early.
  let clockOffsetMs = 0;

  async function once(call: Call): Promise<unknown> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) qs.set(k, v);
    const url = `${server}${call.path}${qs.size ? `?${qs}` : ''}`;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const started = performance.now();
    let res: Answer;
    try {
      res = viaProxy ? await viaFetch(call, url, body) : await exchange(call, url, body);
    } catch (e) {
      options.onRequest?.(call.verb, call.resource, 0, (performance.now() - started) / 1000);
      throw networkError(e);
    }
    options.onRequest?.(call.verb, call.resource, res.status, (performance.now() - started) / 1000);
    const text = res.text;
    const json = text ? safeJson(text) : undefined;
    // The apiserver's clock, from answers the apiserver wrote: a success or its own Status. A proxy's
    // or load balancer's error page (a 502/504 in HTML) carries that machine's clock, not its.
    const date = Date.parse(res.date ?? '');
    if (Number.isFinite(date) && ((res.status >= 200 && res.status <= 299) || (json as { kind?: unknown } | undefined)?.kind === 'Status')) clockOffsetMs = date - localNow();
    if (res.status >= 200 && res.status <= 299) {
      // Reads always carry an object; an empty or unparsable 2xx body means a truncated answer.
      if (call.method === HttpMethod.GET && (typeof json !== 'object' || json === null || !('kind' in json || 'items' in json || 'metadata' in json))) {
        throw networkError(new Error(`truncated response to ${call.verb} ${call.resource}`));
      }
      return json;
    }
    const status = json as { kind?: string; reason?: string; message?: string; details?: StatusDetails } | undefined;
    const retryAfter = Number(res.retryAfter);
    throw new KubeError(
      res.status,
      (status?.kind === 'Status' ? status.reason : undefined) ?? res.statusText,
      status?.message ?? `${call.verb} ${call.resource}: HTTP ${res.status}`,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
      status?.kind === 'Status' && typeof status.details === 'object' && status.details ? status.details : undefined,
      status?.kind === 'Status',
    );
  }

  /**
   * One request over node:https (node:http for an http:// server, which client-node allows only
   * with insecure-skip-tls-verify), answering what the undici fetch this replaced did: gzip/deflate
   * bodies decoded, the same timeout and the same errors (TypeError "fetch failed" before the
   * answer, "terminated" when the body is cut, the signal's TimeoutError), so retries and "gone"
   * are judged as before. Only the memory differs: undici's fetch, loaded and JIT-compiled, cost
   * ~10 MB of RSS (README, Memory).
   */
  async function exchange(call: Call, url: string, body: string | undefined): Promise<Answer> {
    const opts: RequestOptions = {};
    // Per request, as before: credentials (a rotated token file, an exec plugin) are re-applied.
    // Failing here, nothing was sent (red team 35, N1).
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (e) {
      throw notSent(e);
    }
    // The scheme decides the transport (URL parsing lower-cases it: HTTPS://… is https).
    const tls = new URL(url).protocol === 'https:';
    // Like the undici dispatcher it replaces: the first request's TLS material, TCP keep-alive after
    // 30 s (client-node's setting), idle connections closed after 4 s (undici's default).
    // At most MAX_SOCKETS connections: more concurrent requests wait for one (not a connection each).
    agent ??= tls
      ? new HttpsAgent({ keepAlive: true, keepAliveMsecs: 30_000, timeout: 4_000, maxSockets: MAX_SOCKETS, ...tlsOptions(opts) })
      : new HttpAgent({ keepAlive: true, keepAliveMsecs: 30_000, timeout: 4_000, maxSockets: MAX_SOCKETS });
    const headers: Record<string, string> = { Accept: call.accept ?? 'application/json' };
    if (body !== undefined) headers['Content-Type'] = call.contentType ?? 'application/json';
    // Explicit, as fetch sent it: node:http frames a DELETE body only with a Content-Length.
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k] = `${v}`;
    // Basic credentials only where client-node set no Authorization (a token wins, as with its fetch path).
    if (opts.auth && !Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    Object.assign(headers, REQUEST_HEADERS);
    const signal = AbortSignal.timeout(timeoutMs);
    let answer: IncomingMessage;
    // The whole request (headers and body) handed to the connection: only then can the apiserver
    // have acted on it. A failure before (no connection, a TLS handshake that never ends, a request
    // queued behind busy sockets) sent nothing (red team 35, N1).
    let written = false;
    try {
      answer = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = (tls ? httpsRequest : httpRequest)(url, { method: call.method, headers, agent, signal }, resolve);
        req.on('error', reject);
        req.on('finish', () => void (written = true));
        req.end(body);
      });
    } catch (e) {
      const err = signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: e });
      throw written ? err : notSent(err);
    }
    const chunks: Buffer[] = [];
    try {
      for await (const c of answer) chunks.push(c as Buffer);
    } catch (e) {
      throw signal.aborted ? signal.reason : new TypeError('terminated', { cause: e });
    }
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const decoded = await decode(raw, answer.headers['content-encoding']);
    const text = decoded.toString('utf8');
    return {
      status: answer.statusCode ?? 0,
      statusText: answer.statusMessage ?? '',
      date: answer.headers.date,
      retryAfter: header(answer.headers['retry-after']),
      text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text,
    };
  }

  /** An error raised before the request was written: marked so that it never counts as possibly applied. */
  function notSent(e: unknown): Error {
    return Object.assign(new TypeError('fetch failed: request not sent', { cause: e }), { code: NOT_SENT });
  }

  /** The previous transport, kept for clusters behind a proxy: client-node's undici dispatcher. */
  async function viaFetch(call: Call, url: string, body: string | undefined): Promise<Answer> {
    const ctx = new RequestContext(url, call.method);
    ctx.setHeaderParam('Accept', call.accept ?? 'application/json');
    if (body !== undefined) ctx.setHeaderParam('Content-Type', call.contentType ?? 'application/json');
    // Credentials and the proxy's dispatcher: failing here, nothing was sent (red team 36, P1).
    try {
      await kc.applySecurityAuthentication(ctx);
      // client-node builds a new agent per request; keep the first so connections are pooled.
      dispatcher ??= ctx.getDispatcher() as Dispatcher | undefined;
    } catch (e) {
      throw notSent(e);
    }
    let res: Response;
    try {
      res = await fetch(url, {
        method: call.method,
        headers: ctx.getHeaders(),
        body,
        signal: AbortSignal.timeout(timeoutMs),
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (e) {
      // The proxy refused the tunnel (CONNECT answered non-200): the request never reached the apiserver.
      throw causeChain(e).some((c) => typeof c.message === 'string' && /^Proxy response \(\d+\) !== 200/.test(c.message)) ? notSent(e) : e;
    }
    // A connection cut while reading the body rejects here: a network failure, never an empty success.
    const text = await res.text();
    return { status: res.status, statusText: res.statusText, date: res.headers.get('date') ?? undefined, retryAfter: res.headers.get('retry-after') ?? undefined, text };
  }

  async function request(call: Call): Promise<unknown> {
    // A write retried after an attempt that may have been applied (its answer lost) may meet its own
    // effect: not someone else's. A dry run applies nothing.
    const write = call.method !== HttpMethod.GET && !call.query?.dryRun && !(call.body as { dryRun?: unknown } | undefined)?.dryRun;
    let unanswered = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(call);
      } catch (e) {
        if (write && unanswered && e instanceof KubeError && (e.conflict || e.notFound)) throw new WriteOutcomeUnknown(e);
        if (!(e instanceof KubeError) || !e.transient || attempt >= retries) throw e;
        if (write && mayHaveApplied(e)) unanswered = true;
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
          ...(opts.metadataOnly ? { accept: METADATA_LIST } : {}),
          query: {
            labelSelector: opts.labelSelector,
            fieldSelector: opts.fieldSelector,
            limit: String(opts.pageSize ?? 500),
            continue: cont,
          },
        })) as { items?: T[]; metadata?: { continue?: string; resourceVersion?: string } };
        if (!cont && typeof page.metadata?.resourceVersion === 'string') opts.onListResourceVersion?.(page.metadata.resourceVersion);
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
        if (e instanceof WriteOutcomeUnknown) throw e;
        return goneOr(e, info, ref.name);
      }
    },

    async mergePatch(ref: Ref, patch: Record<string, unknown>, opts: PatchOptions): Promise<KubeObject | 'gone'> {
      const { path: objPath, plural, info } = pathOf(ref);
      const path = opts.subresource ? `${objPath}/${opts.subresource}` : objPath;
      try {
        return await patchCall();
      } catch (e) {
        if (e instanceof WriteOutcomeUnknown) throw e;
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
        query: { dryRun: dry(opts), fieldManager },
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
        query: { dryRun: dry(opts), fieldManager },
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

/** What `once` needs of an HTTP answer. */
interface Answer {
  status: number;
  statusText: string;
  date?: string;
  retryAfter?: string;
  text: string;
}

/** A metadata-only list (falls back to the full list where the apiserver cannot convert). */
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** Connections to the apiserver at most (client-go multiplexes one HTTP/2 connection; this is HTTP/1.1). */
const MAX_SOCKETS = 32;

/** Sent with every request: who we are (the apiserver's audit log and metrics show it) and gzip, as client-go asks. */
const REQUEST_HEADERS = { 'user-agent': 'olm-medic', 'accept-encoding': 'gzip' };

/** The TLS material client-node put in the request options (what it gave its undici dispatcher). */
type TlsOptions = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized' | 'servername'>;
function tlsOptions(o: RequestOptions): TlsOptions {
  const t: TlsOptions = {};
  if (o.ca !== undefined) t.ca = o.ca;
  if (o.cert !== undefined) t.cert = o.cert;
  if (o.key !== undefined) t.key = o.key;
  if (o.pfx !== undefined) t.pfx = o.pfx;
  if (o.passphrase !== undefined) t.passphrase = o.passphrase;
  if (o.rejectUnauthorized !== undefined) t.rejectUnauthorized = o.rejectUnauthorized;
  if (o.servername !== undefined) t.servername = o.servername;
  return t;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Content codings fetch decoded (those it asked for: gzip, deflate), last applied first. */
async function decode(body: Buffer, encoding: string | undefined): Promise<Buffer> {
  if (!encoding || body.length === 0) return body;
  const codings = encoding.toLowerCase().split(',').map((c) => c.trim()).filter(Boolean).reverse();
  if (!codings.every((c) => c === 'gzip' || c === 'x-gzip' || c === 'deflate')) return body;
  let out = body;
  for (const c of codings) {
    out = await new Promise<Buffer>((resolve, reject) => (c === 'deflate' ? inflate : gunzip)(out, (e, r) => (e ? reject(e) : resolve(r))));
  }
  return out;
}
