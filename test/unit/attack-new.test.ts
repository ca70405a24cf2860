/**
 * Red-team checks of the newest changes (shared lists + job-conflict's concurrent observe; the
 * node:https transport of kube/client.ts), written by a helper given only the code.
 *
 * `describe('holes …')` (N1-N4): each test states what SHOULD hold; each failed on a25a448 (before the
 * fixes in the same commit as this file) and passes since.
 *   N1 shared-lists: a shared list taken but never read blocks that list's key forever (latent: no
 *      caller does it today).
 *   N2 client exchange: token + username/password sends Basic where the previous transport sent Bearer.
 *   N3 client exchange: an upper-case scheme (HTTPS://) makes every request fail.
 *   N4 job-conflict observe: OperatorGroup lists fan out unbounded (one per subscriber namespace, all
 *      at once, each on a new connection); before a25a448 they ran one at a time.
 * `describe('safe …')`: passing regressions for hypotheses that were checked and found safe.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createNetServer, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKube, type KubeClientOptions } from '../../shared/kube/client.js';
import { KubeError, WriteOutcomeUnknown } from '../../shared/kube/errors.js';
import { shareLists } from '../../shared/kube/shared-lists.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { prng } from '../support/streams.js';

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
const SEEDS = Number(process.env.ATTACK_SEEDS ?? 300);
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
const obj = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'n' } });
/** Resolves with 'HUNG' if `p` has not settled within `ms`. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'HUNG'> => Promise.race([p, new Promise<'HUNG'>((r) => setTimeout(() => r('HUNG'), ms))]);

async function drain(it: AsyncIterable<KubeObject>): Promise<string[]> {
  const out: string[] = [];
  for await (const o of it) out.push(o.metadata.name);
  return out;
}

// ---------------------------------------------------------------------------------------------
// A hand-fed inner reader for shareLists (each list() call is one "apiserver list")
// ---------------------------------------------------------------------------------------------

interface FedList {
  idx: number;
  /** When the inner list() was called (the Broadcast started). */
  createdAt: number;
  /** When its first next() ran (the first apiserver request would be sent), if ever. */
  firstPullAt?: number;
  pushed: string[];
  ended: boolean;
  returned: boolean;
  push(name: string): void;
  end(error?: Error): void;
}

function fedReader(clock: { t: number }) {
  const lists: FedList[] = [];
  const reader: Reader = {
    get: async (_ref: Ref) => undefined,
    list<T extends KubeObject>(_apiVersion: string, _kind: string, _opts: ListOptions = {}): AsyncIterable<T> {
      const queue: (string | { end: true; error?: Error })[] = [];
      let wake: (() => void) | undefined;
      const rec: FedList = {
        idx: lists.length,
        createdAt: clock.t++,
        pushed: [],
        ended: false,
        returned: false,
        push(name) {
          rec.pushed.push(name);
          queue.push(name);
          wake?.();
        },
        end(error) {
          rec.ended = true;
          queue.push({ end: true, ...(error ? { error } : {}) });
          wake?.();
        },
      };
      lists.push(rec);
      return (async function* () {
        rec.firstPullAt = clock.t++;
        try {
          for (;;) {
            while (queue.length === 0) await new Promise<void>((r) => (wake = r));
            const x = queue.shift()!;
            if (typeof x !== 'string') {
              if (x.error) throw x.error;
              return;
            }
            yield obj(x) as T;
          }
        } finally {
          rec.returned = true;
        }
      })();
    },
  };
  return { reader, lists };
}


// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 server on 127.0.0.1 whose answers are written byte by byte by each test
// ---------------------------------------------------------------------------------------------

interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  rawHead: string;
  body: string;
}

async function rawServer(answer: (req: RawRequest, socket: Socket, n: number) => void) {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const stats = { connections: 0 };
  const server = createNetServer((socket) => {
    stats.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    socket.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const rawHead = buf.subarray(0, end).toString('latin1');
        const [start, ...lines] = rawHead.split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const len = Number(headers['content-length'] ?? 0);
        if (buf.length < end + 4 + len) return;
        const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
        buf = buf.subarray(end + 4 + len);
        const [method, path] = start!.split(' ');
        const req = { method: method!, path: path!, headers, rawHead, body };
        requests.push(req);
        answer(req, socket, requests.length);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stats,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function head(status: string, headers: Record<string, string | number>): string {
  return `HTTP/1.1 ${status}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

function kubeAt(server: string, user: Record<string, unknown> = { token: 't' }, o: KubeClientOptions = {}) {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return createKube(kc, { retries: 0, sleep: async () => undefined, timeoutMs: 3_000, ...o });
}

const JOB: Ref = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'j' };
const JOB_PATH = '/apis/batch/v1/namespaces/ns/jobs/j';
const JOB_JSON = JSON.stringify({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'ns', uid: 'u1', resourceVersion: '7' } });
const NOT_FOUND = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'jobs.batch "j" not found', details: { name: 'j', group: 'batch', kind: 'jobs' } });
const DEL = { uid: 'u1', dryRun: false };

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await p };
  } catch (e) {
    return e;
  }
}

// =============================================================================================
// HOLES
// =============================================================================================

describe('holes: shared lists (shared/kube/shared-lists.ts)', () => {
  it('N1 a caller that takes a shared list and never reads it (or closes it before its first item) blocks every later caller of that list forever', async () => {
    const clock = { t: 0 };
    const m = fedReader(clock);
    const r = shareLists(m.reader);
    // Reconcile A asks for the cluster-wide list, then fails before its `for await` (any throw or
    // early return between list() and the loop), or closes the iterator unread.
    const it = r.list('v1', 'ConfigMap', { shared: true })[Symbol.asyncIterator]();
    await it.return?.();
    // Reconcile B asks afterwards and reads normally.
    const b = drain(r.list('v1', 'ConfigMap', { shared: true }));
    for (let i = 0; i < 5; i++) await tick();
    for (const l of m.lists) if (!l.ended) l.end();
    for (let i = 0; i < 5; i++) await tick();
    for (const l of m.lists) if (!l.ended) l.end();
    // SAFE: B gets its (empty) list. On main: A's cursor stays registered, A's list is never pulled,
    // never ends, so B's list never starts: B (and every later caller of this list) hangs.
    expect(await within(b, 300)).toEqual([]);
  });
});

describe('holes: job-conflict observe fan-out (functions/job-conflict/index.ts:89)', () => {
  it('N4 one reconcile of a failed unpack Job in a catalog namespace with subscribers in N namespaces sends N OperatorGroup lists at once, over N new apiserver connections (unbounded; was 1 at a time)', async () => {
    const N = 120;
    const name = 'b'.repeat(63);
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'olm', uid: 'job-1', resourceVersion: '1', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name, uid: 'cm-1' }] }, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: '2020-01-01T00:00:00Z' }] } };
    const subs = Array.from({ length: N }, (_, i) => ({ metadata: { name: 's', namespace: `tenant-${i}`, uid: `sub-${i}`, resourceVersion: '1' }, spec: { source: 'cat', sourceNamespace: 'olm', name: 'p' } }));
    let inFlight = 0;
    let maxInFlight = 0;
    const json = (s: Socket, status: string, body: string) => s.write(head(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) + body);
    const srv = await rawServer((req, socket) => {
      const path = req.path.split('?')[0]!;
      if (path === `/apis/batch/v1/namespaces/olm/jobs/${name}`) return json(socket, '200 OK', JSON.stringify(job));
      if (path.startsWith('/api/v1/namespaces/olm/configmaps/')) return json(socket, '404 Not Found', JSON.stringify({ kind: 'Status', reason: 'NotFound', code: 404, details: { name, kind: 'configmaps' } }));
      if (path === '/apis/operators.coreos.com/v1alpha1/subscriptions') return json(socket, '200 OK', JSON.stringify({ kind: 'SubscriptionList', metadata: {}, items: subs }));
      if (/^\/apis\/operators.coreos.com\/v1\/namespaces\/[^/]+\/operatorgroups$/.test(path)) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight--;
          json(socket, '200 OK', JSON.stringify({ kind: 'OperatorGroupList', metadata: {}, items: [] }));
        }, 150);
        return;
      }
      return json(socket, '200 OK', JSON.stringify({ kind: 'List', metadata: {}, items: [] }));
    });
    try {
      const kube = kubeAt(srv.url);
      const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name }, shareLists(kube), { now: new Date(), options: {}, policy: { dryRun: false, protectedNamespaces: new Set() }, clock: () => new Date() } as never);
      expect(observed?.subscribers).toHaveLength(N);
      // SAFE: a bounded number of OperatorGroup reads at once (or one cluster-wide list). On main all N
      // run at once, each on its own new connection (the agent has no maxSockets).
      expect({ maxConcurrentOperatorGroupLists: maxInFlight, connections: srv.stats.connections }).toEqual({ maxConcurrentOperatorGroupLists: expect.toSatisfy((n: number) => n <= 8), connections: expect.toSatisfy((n: number) => n <= 16) });
    } finally {
      await srv.close();
    }
  });
});

describe('holes: node:https transport (shared/kube/client.ts exchange)', () => {
  it('N2 a kubeconfig user with a token AND username/password: the undici path sent the Bearer token, exchange sends Basic (credentials changed by the transport swap)', async () => {
    const srv = await rawServer((_req, socket) => socket.end(head('200 OK', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON));
    try {
      const user = { token: 'the-token', username: 'alice', password: 'pw' };
      // What viaFetch (and the transport before 0cc4ed0) sends: applySecurityAuthentication sets Basic,
      // then copies applyOptions' headers (Bearer) over it.
      const kc = new KubeConfig();
      kc.loadFromOptions({ clusters: [{ name: 'c', server: srv.url, skipTLSVerify: true }], users: [{ name: 'u', ...user }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
      const ctx = new RequestContext(`${srv.url}${JOB_PATH}`, HttpMethod.GET);
      await kc.applySecurityAuthentication(ctx);
      expect(ctx.getHeaders().Authorization).toBe('Bearer the-token');
      // exchange (the default transport now) sends the Basic credentials instead.
      await kubeAt(srv.url, user).get(JOB);
      expect(srv.requests[0]!.headers.authorization).toBe('Bearer the-token');
    } finally {
      await srv.close();
    }
  });

  describe('N3 a server URL with an upper-case scheme', () => {
    let dir = '';
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'attack-new-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
    });
    async function tlsServer() {
      const server = createTlsServer({ key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) }, (_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JOB_JSON);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return { port: (server.address() as { port: number }).port, close: async () => { server.closeAllConnections(); await new Promise<void>((r) => server.close(() => r())); } };
    }
    it('control (passes): https://127.0.0.1:port with insecure-skip-tls-verify is read', async () => {
      const s = await tlsServer();
      try {
        expect((await kubeAt(`https://127.0.0.1:${s.port}`).get(JOB))?.kind).toBe('Job');
      } finally {
        await s.close();
      }
    });
    it('HTTPS://127.0.0.1:port: every request fails (node:http is handed an https URL); fetch and client-go normalise the scheme', async () => {
      const server = createTlsServer({ key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) }, (_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JOB_JSON);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      try {
        const port = (server.address() as { port: number }).port;
        const kube = kubeAt(`HTTPS://127.0.0.1:${port}`);
        const got = await errorOf(kube.get(JOB));
        expect(got instanceof Error ? `${got.name}: ${got.message}` : got).toEqual({ resolved: expect.objectContaining({ kind: 'Job' }) });
      } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    });
  });
});

// =============================================================================================
// SAFE (passing regressions)
// =============================================================================================

describe('safe: shared lists', () => {
  it(`model check (${SEEDS} seeded interleavings): every reader gets exactly one list, started after it asked, all its items in order, no loss or duplicate; early leavers and errors; nothing hangs`, async () => {
    const seen = { sharedReaders: 0, earlyLeavers: 0, errors: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const rand = prng(seed);
      const clock = { t: 0 };
      const m = fedReader(clock);
      const r = shareLists(m.reader);
      type Caller = { askedAt: number; breakAfter: number; got: string[]; done?: 'ok' | 'error'; p: Promise<void> };
      const callers: Caller[] = [];
      let n = 0;
      const ask = () => {
        const c = { askedAt: clock.t++, breakAfter: rand() < 0.3 ? 1 + Math.floor(rand() * 3) : Infinity, got: [] as string[] } as Caller;
        const iterable = r.list('v1', 'ConfigMap', { shared: true });
        c.p = (async () => {
          try {
            for await (const o of iterable) {
              c.got.push(o.metadata.name);
              if (c.got.length >= c.breakAfter) break;
            }
            c.done = 'ok';
          } catch {
            c.done = 'error';
          }
        })();
        callers.push(c);
      };
      for (let step = 0; step < 60; step++) {
        const x = rand();
        const open = m.lists.filter((l) => !l.ended);
        if (x < 0.3) ask();
        else if (x < 0.7 && open.length) {
          const l = open[Math.floor(rand() * open.length)]!;
          l.push(`${l.idx}:${n++}`);
        } else if (x < 0.85 && open.length) {
          const l = open[Math.floor(rand() * open.length)]!;
          l.end(rand() < 0.2 ? new Error('boom') : undefined);
        } else await turn();
      }
      for (let round = 0; round < 50 && callers.some((c) => !c.done); round++) {
        for (const l of m.lists) if (!l.ended) l.end();
        await turn();
      }
      const ctx = `seed ${seed}`;
      expect(callers.filter((c) => !c.done), ctx).toEqual([]);
      // Every reader is gone: a list still open (its fetch awaiting the next page, as a real list's
      // in-flight request would) is stopped by its next item — none keeps being read.
      for (const l of m.lists) if (!l.ended && !l.returned) l.push(`${l.idx}:late`);
      for (let k = 0; k < 5; k++) await turn();
      expect(m.lists.filter((l) => !l.ended && !l.returned).length, ctx).toBe(0);
      for (const c of callers) {
        const from = new Set(c.got.map((g) => Number(g.split(':')[0])));
        expect(from.size, ctx).toBeLessThanOrEqual(1);
        if (from.size === 0) continue;
        const l = m.lists[[...from][0]!]!;
        // Freshness: the list (its first request) started after this caller asked.
        expect(l.createdAt, ctx).toBeGreaterThan(c.askedAt);
        expect(l.firstPullAt ?? Infinity, ctx).toBeGreaterThan(c.askedAt);
        // Exactly the list's items, in order, as a prefix (all of them unless it left early or the list failed).
        expect(c.got, ctx).toEqual(l.pushed.slice(0, c.got.length));
        if (c.breakAfter === Infinity && c.done === 'ok') expect(c.got, ctx).toEqual(l.pushed);
        if (callers.some((o) => o !== c && o.got.length && Number(o.got[0]!.split(':')[0]) === l.idx)) seen.sharedReaders++;
        if (c.got.length >= c.breakAfter) seen.earlyLeavers++;
        if (c.done === 'error') seen.errors++;
      }
      // At most one list of a key runs at a time (the next starts only after the running one ended).
      for (let i = 1; i < m.lists.length; i++) expect(m.lists[i]!.createdAt, ctx).toBeGreaterThan(m.lists[i - 1]!.createdAt);
    }
    // The interleavings did exercise sharing, early leavers and failing lists.
    expect(Math.min(seen.sharedReaders, seen.earlyLeavers, seen.errors), JSON.stringify(seen)).toBeGreaterThan(0);
  }, 60_000);

  it('job-conflict observe through shareLists: 6 concurrent stuck reconciles all finish (no hang), each sees its own subscribers, and the cluster-wide lists are read at most twice, never before an observe asked', async () => {
    const clock = { t: 0 };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const jobOf = (c: string): KubeObject => {
      const name = c.repeat(63);
      return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'olm', uid: `job-${c}`, resourceVersion: '1', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name, uid: `cm-${c}` }] }, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: '2020-01-01T00:00:00Z' }] } };
    };
    const started: Record<string, number[]> = {};
    const reader: Reader = {
      get: (async (ref: Ref) => (ref.kind === 'Job' ? jobOf(ref.name[0]!) : undefined)) as Reader['get'],
      list: ((_a: string, kind: string) =>
        (async function* () {
          (started[kind] ??= []).push(clock.t++);
          await sleep(10);
          if (kind === 'Subscription') {
            yield { apiVersion: 'x', kind, metadata: { name: 's1', namespace: 't1' }, spec: { sourceNamespace: 'olm' } };
            await sleep(10);
            yield { apiVersion: 'x', kind, metadata: { name: 's2', namespace: 't2' }, spec: { sourceNamespace: 'other' } };
            yield { apiVersion: 'x', kind, metadata: { name: 's3', namespace: 't3' }, spec: { sourceNamespace: 'olm' } };
          }
          if (kind === 'InstallPlan') yield { apiVersion: 'x', kind, metadata: { name: 'ip', namespace: 't1' }, status: { phase: 'Complete' } };
        })()) as Reader['list'],
    };
    const shared = shareLists(reader);
    const ctx = { now: new Date('2026-01-01T00:00:00Z'), options: {}, policy: { dryRun: false, protectedNamespaces: new Set() }, clock: () => new Date('2026-01-01T00:00:00Z') } as never;
    const asked: number[] = [];
    const runs = ['c', 'd', 'e', 'f', '1', '2'].map(async (c, i) => {
      await sleep(i === 0 ? 0 : 3);
      asked.push(clock.t++);
      return jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name: c.repeat(63) }, shared, ctx);
    });
    const all = await within(Promise.all(runs), 3_000);
    expect(all).not.toBe('HUNG');
    for (const o of all as Awaited<(typeof runs)[number]>[]) expect(o?.subscribers.map((s) => s.metadata.name)).toEqual(['s1', 's3']);
    expect(started.Subscription!.length).toBeLessThanOrEqual(2);
    expect(started.InstallPlan!.length).toBeLessThanOrEqual(2);
    // The last list of each kind started after the last observe asked.
    expect(Math.max(...started.Subscription!)).toBeGreaterThan(Math.max(...asked));
    expect(Math.max(...started.InstallPlan!)).toBeGreaterThan(Math.max(...asked));
  });

  it("job-conflict observe: one branch failing early and another failing later reject observe once, with no unhandled rejection", async () => {
    const name = 'a'.repeat(63);
    const job: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, namespace: 'olm', uid: 'job-1', resourceVersion: '1', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name, uid: 'cm-1', controller: false }] },
      status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: '2020-01-01T00:00:00Z' }] },
    };
    const asked: string[] = [];
    const failing = (kind: string, ms: number): AsyncIterable<KubeObject> => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          asked.push(kind);
          await new Promise((r) => setTimeout(r, ms));
          throw new Error(`${kind} list failed`);
        },
      }),
    });
    const reader: Reader = {
      get: (async (ref: Ref) => (ref.kind === 'Job' ? job : undefined)) as Reader['get'],
      list: ((_a: string, kind: string) => failing(kind, kind === 'CatalogSource' ? 1 : 30)) as Reader['list'],
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const p = jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'olm', name }, shareLists(reader), { now: new Date('2026-01-01T00:00:00Z'), options: {}, policy: { dryRun: false, protectedNamespaces: new Set() }, clock: () => new Date('2026-01-01T00:00:00Z') } as never);
      await expect(p).rejects.toThrow('CatalogSource list failed');
      await new Promise((r) => setTimeout(r, 100));
      expect(asked).toEqual(expect.arrayContaining(['CatalogSource', 'Subscription', 'InstallPlan']));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('safe: node:https transport', () => {
  const cases: { name: string; write: (s: Socket) => void; expectTransient: true }[] = [
    {
      name: 'a 200 whose Content-Length body is cut (connection reset)',
      write: (s) => {
        s.write(head('200 OK', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON.slice(0, 20));
        setTimeout(() => s.destroy(), 20);
      },
      expectTransient: true,
    },
    {
      name: 'a 200 whose Content-Length body is cut (clean FIN)',
      write: (s) => s.end(head('200 OK', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON.slice(0, 20)),
      expectTransient: true,
    },
    {
      name: 'a chunked 200 ended (FIN) before its last chunk, the JSON itself complete',
      write: (s) => s.end(head('200 OK', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }) + `${Buffer.byteLength(JOB_JSON).toString(16)}\r\n${JOB_JSON}\r\n`),
      expectTransient: true,
    },
    {
      name: 'a close-delimited 200 (no length) cut mid-JSON',
      write: (s) => s.end(head('200 OK', { 'content-type': 'application/json', connection: 'close' }) + JOB_JSON.slice(0, 30)),
      expectTransient: true,
    },
    {
      name: 'a close-delimited gzip 200 cut mid-stream',
      write: (s) => {
        const gz = gzipSync(JOB_JSON);
        s.write(head('200 OK', { 'content-type': 'application/json', 'content-encoding': 'gzip', connection: 'close' }));
        s.end(gz.subarray(0, gz.length - 6));
      },
      expectTransient: true,
    },
    {
      name: 'a gzip 200 whose body is not gzip',
      write: (s) => s.end(head('200 OK', { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON),
      expectTransient: true,
    },
    {
      name: 'a 200 with an empty body',
      write: (s) => s.end(head('200 OK', { 'content-type': 'application/json', 'content-length': 0 })),
      expectTransient: true,
    },
  ];
  for (const c of cases) {
    it(`GET: ${c.name} is a transient network error, never an object`, async () => {
      const srv = await rawServer((_req, socket) => c.write(socket));
      try {
        const e = await errorOf(kubeAt(srv.url).get(JOB));
        expect(e).toBeInstanceOf(KubeError);
        expect((e as KubeError).status).toBe(0);
        expect((e as KubeError).transient).toBe(true);
      } finally {
        await srv.close();
      }
    });
  }

  it('DELETE: a 404 NotFound Status is "gone" only when it is whole; gzip-corrupt, cut or non-Status 404s are errors', async () => {
    const answers: ((s: Socket) => void)[] = [
      (s) => s.end(Buffer.concat([Buffer.from(head('404 Not Found', { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gzipSync(NOT_FOUND).length })), gzipSync(NOT_FOUND)])),
      (s) => {
        const gz = gzipSync(NOT_FOUND);
        s.end(Buffer.concat([Buffer.from(head('404 Not Found', { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gz.length })), gz.subarray(0, gz.length - 8), Buffer.alloc(8, 0)]));
      },
      (s) => {
        s.write(head('404 Not Found', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(NOT_FOUND) }) + NOT_FOUND.slice(0, 40));
        setTimeout(() => s.destroy(), 20);
      },
      (s) => s.end(head('404 Not Found', { 'content-type': 'text/html', 'content-length': 9 }) + '<h1>x</h1>'.slice(0, 9)),
      (s) => s.end(head('404 Not Found', { 'content-type': 'application/json', connection: 'close' }) + NOT_FOUND.slice(0, NOT_FOUND.length - 30)),
    ];
    const results: unknown[] = [];
    for (const a of answers) {
      const srv = await rawServer((_req, socket) => a(socket));
      try {
        const r = await errorOf(kubeAt(srv.url).delete(JOB, DEL));
        results.push(r instanceof KubeError ? `error ${r.status}` : r);
      } finally {
        await srv.close();
      }
    }
    // The gzip'd whole Status proves the Job gone; a corrupt gzip (trailer zeroed: a CRC error) or cut
    // body is a network error, a 404 that is not a NotFound Status naming the Job is an error.
    expect(results).toEqual([{ resolved: 'gone' }, 'error 0', 'error 0', 'error 404', 'error 404']);
  });

  it('a DELETE whose 200 answer is cut is retried with the same uid precondition (a second write that can only fail on a different object)', async () => {
    const srv = await rawServer((req, socket, n) => {
      if (n === 1) {
        socket.write(head('200 OK', { 'content-type': 'application/json', 'content-length': 500 }) + '{"kind":"Status"');
        setTimeout(() => socket.destroy(), 20);
      } else socket.end(head('404 Not Found', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(NOT_FOUND) }) + NOT_FOUND);
    });
    try {
      // The retry's 404 may be the first attempt's own effect: an unknown outcome for the executor to
      // settle by a re-read (lost-write-answer.test.ts), never "it was already gone".
      const out = await errorOf(kubeAt(srv.url, { token: 't' }, { retries: 2 }).delete(JOB, DEL));
      expect(out).toBeInstanceOf(WriteOutcomeUnknown);
      expect((out as WriteOutcomeUnknown).status).toBe(404);
      expect(srv.requests.map((r) => [r.method, r.path.split('?')[0], JSON.parse(r.body).preconditions.uid])).toEqual([
        ['DELETE', JOB_PATH, 'u1'],
        ['DELETE', JOB_PATH, 'u1'],
      ]);
    } finally {
      await srv.close();
    }
  });

  it('requests go to the server URL (with its path prefix) with the kubeconfig credentials, framed bodies and no followed redirect', async () => {
    const srv = await rawServer((req, socket, n) => {
      if (n === 1) socket.write(head('302 Found', { location: 'http://127.0.0.1:9/steal', 'content-length': 0 }));
      else socket.end(head('200 OK', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON);
    });
    try {
      const kube = kubeAt(`${srv.url}/k8s/clusters/c-1/`, { token: 'tok', impersonateUser: 'bob' });
      const redirected = await errorOf(kube.get(JOB));
      expect(redirected).toBeInstanceOf(KubeError);
      expect((redirected as KubeError).status).toBe(302);
      expect(await kube.delete(JOB, { ...DEL, propagationPolicy: 'Background' })).toBe('deleted');
      expect(srv.requests).toHaveLength(2);
      const d = srv.requests[1]!;
      expect(d.method).toBe('DELETE');
      expect(d.path).toBe(`/k8s/clusters/c-1${JOB_PATH}`);
      expect(d.headers).toMatchObject({ authorization: 'Bearer tok', 'impersonate-user': 'bob', 'user-agent': 'olm-medic', 'accept-encoding': 'gzip', 'content-type': 'application/json' });
      expect(Number(d.headers['content-length'])).toBe(Buffer.byteLength(d.body));
      expect(JSON.parse(d.body)).toMatchObject({ kind: 'DeleteOptions', preconditions: { uid: 'u1' }, propagationPolicy: 'Background' });
    } finally {
      await srv.close();
    }
  });

  it('a token carrying CR/LF is never sent (no header injection): the request fails before reaching the server', async () => {
    const srv = await rawServer((_req, socket) => socket.end(head('200 OK', { 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON));
    try {
      const e = await errorOf(kubeAt(srv.url, { token: 't\r\nX-Injected: 1' }).get(JOB));
      expect(e).toBeInstanceOf(KubeError);
      expect(srv.requests).toHaveLength(0);
    } finally {
      await srv.close();
    }
  });

  it('a slow answer (4.5 s: longer than the agent\'s 4 s idle timeout, shorter than timeoutMs) is read, not cut', async () => {
    const srv = await rawServer((_req, socket) => {
      setTimeout(() => socket.end(head('200 OK', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(JOB_JSON) }) + JOB_JSON), 4_500);
    });
    try {
      const got = await kubeAt(srv.url, { token: 't' }, { timeoutMs: 8_000 }).get(JOB);
      expect(got?.metadata.uid).toBe('u1');
    } finally {
      await srv.close();
    }
  }, 15_000);

  it('timeoutMs cuts a stalled body: a transient error (retried), never a hang or a success', async () => {
    const srv = await rawServer((_req, socket) => socket.write(head('200 OK', { 'content-type': 'application/json', 'content-length': 1000 }) + '{"kind":'));
    try {
      const t0 = Date.now();
      const e = await errorOf(kubeAt(srv.url, { token: 't' }, { timeoutMs: 300, retries: 1 }).get(JOB));
      expect(e).toBeInstanceOf(KubeError);
      expect((e as KubeError).status).toBe(0);
      expect(srv.requests).toHaveLength(2);
      expect(Date.now() - t0).toBeLessThan(3_000);
    } finally {
      await srv.close();
    }
  });

});
