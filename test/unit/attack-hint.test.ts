/**
 * Red-team checks of 621730b (a Subscription event's object is a "hint" for ownerref-repair's
 * observe; admission coalesces by targetKey; the client's list fetched one page ahead), written by
 * a helper given only the code.
 *
 * `describe('holes …')`: each test states what SHOULD hold; each FAILED on 621730b and passes since
 * the commit that added this file:
 *   H1 admission: two events with the same uid@resourceVersion but different content shared one run:
 *      the first one's (false) claim answered "noop" for the second, whose live state needs a repair.
 *      Fix: targetKey digests the hint's whole object.
 *   H2 engine requeue: the hinted ref was what the Requeuer kept; a later event's requeue for the same
 *      Subscription is dropped (one timer per key), and the stale hint then settled the re-check as
 *      "noop" without reading the live Subscription. Fix: re-checks (requeues, follow-ups) carry no
 *      hint (withoutHint).
 *   H3 client list: a caller that stopped early left the page fetched ahead in flight (never aborted);
 *      32 such callers held every connection. Fix: the page-ahead fetch was removed (its gain was not
 *      measurable in the burst benchmark); a list asks for a page only when its caller reads on.
 * `describe('safe …')`: passing regressions for hypotheses checked and found safe.
 */
import { createServer as createNetServer, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { targetKey, type AnyFunction } from '../../shared/core/types.js';
import type { ResourceTrigger } from '../../shared/events/types.js';
import { withAdmission } from '../../shared/http/admission.js';
import { createKube, type KubeClientOptions } from '../../shared/kube/client.js';
import { shareLists } from '../../shared/kube/shared-lists.js';
import { recordingEngine } from '../support/recording-engine.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';

const V1A = 'operators.coreos.com/v1alpha1';
const NS = 'tenant';
const LABEL = `operators.coreos.com/pkg.${NS}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function sub(rv: string, plan: { name: string; uid: string }, csv: string): KubeObject {
  return {
    apiVersion: V1A,
    kind: 'Subscription',
    metadata: { name: 's', namespace: NS, uid: 'sub-uid', resourceVersion: rv },
    spec: { name: 'pkg' },
    status: { currentCSV: csv, installPlanRef: { apiVersion: V1A, kind: 'InstallPlan', name: plan.name, namespace: NS, uid: plan.uid } },
  };
}

function ip(name: string, uid: string, csv: string, o: { owned: boolean; labelled: boolean; created: string; rv?: string }): KubeObject {
  return {
    apiVersion: V1A,
    kind: 'InstallPlan',
    metadata: {
      name,
      namespace: NS,
      uid,
      resourceVersion: o.rv ?? '10',
      creationTimestamp: o.created,
      ...(o.owned ? { ownerReferences: [{ apiVersion: V1A, kind: 'Subscription', name: 's', uid: 'sub-uid', controller: false, blockOwnerDeletion: false }] } : {}),
      ...(o.labelled ? { labels: { [LABEL]: '' } } : {}),
    },
    spec: { clusterServiceVersionNames: [csv] },
  };
}

const event = (object: KubeObject, id: string): ResourceTrigger => ({
  kind: 'resource',
  verb: 'update',
  mode: 'resource',
  ref: { apiVersion: V1A, kind: 'Subscription', namespace: NS, name: 's' },
  object,
  meta: { id, source: 'apiserversource', type: 'dev.knative.apiserver.resource.update' },
});

/** A live "cluster": objects by kind/name; reads counted; lists of Subscriptions in NS. */
function cluster() {
  const objs = new Map<string, KubeObject>();
  const reads: string[] = [];
  const put = (o: KubeObject): void => void objs.set(`${o.kind}/${o.metadata.name}`, o);
  const reader: Reader = {
    async get<T extends KubeObject>(ref: Ref): Promise<T | undefined> {
      reads.push(`get ${ref.kind}/${ref.name}`);
      await sleep(1);
      return objs.get(`${ref.kind}/${ref.name}`) as T | undefined;
    },
    list<T extends KubeObject>(_a: string, kind: string): AsyncIterable<T> {
      reads.push(`list ${kind}`);
      const items = [...objs.values()].filter((o) => o.kind === kind);
      return (async function* () {
        for (const o of items) yield o as T;
      })();
    },
  };
  return { objs, reads, put, reader };
}

/** An engine on the real ownerref-repair, whose executor records plans (no writes). */
function engineOn(reader: Reader, clock: { now: Date }) {
  const { engine, plans } = recordingEngine(reader, { now: () => clock.now, options: { labelGraceSeconds: 1 } });
  const patched = (): string[] => plans.flatMap((p) => (p.kind === 'act' ? p.actions.map((a) => `${a.target.name}:${Object.keys((a as { patch?: { metadata: object } }).patch?.metadata ?? {}).join('+')}`) : []));
  return { engine, plans, patched };
}

// =============================================================================================
// HOLES
// =============================================================================================

describe('holes: the hint (functions/ownerref-repair/index.ts observe, shared/core/types.ts targetKey)', () => {
  it('H1 an event whose body claims the same uid@resourceVersion as the live Subscription but names another plan shares the live event\'s run: the live event is answered "noop" and the plan its live state names is never repaired', async () => {
    const c = cluster();
    const t0 = new Date('2026-01-01T00:00:00Z');
    // LIVE: Subscription s (rv 7) points at plan ip-live, which lacks s's ownerReference.
    const live = sub('7', { name: 'ip-live', uid: 'ip-live-uid' }, 'csv.v2');
    c.put(live);
    c.put(ip('ip-live', 'ip-live-uid', 'csv.v2', { owned: false, labelled: true, created: '2025-01-01T00:00:00Z' }));
    // Some other plan that s's claimed old status would be held by.
    c.put(ip('ip-other', 'ip-other-uid', 'csv.v1', { owned: true, labelled: true, created: '2025-01-01T00:00:00Z' }));
    const { engine, patched } = engineOn(c.reader, { now: t0 });
    const a = withAdmission(engine, { functions: [ownerrefRepair as AnyFunction], maxInFlight: 4, maxQueued: 10, retryAfterSeconds: 2 });
    // Event A: any JSON a CloudEvent could carry — same uid and resourceVersion as the live object,
    // a status that names ip-other (which holds that claim). Event B: the live object itself.
    const forged = sub('7', { name: 'ip-other', uid: 'ip-other-uid' }, 'csv.v1');
    const [oa, ob] = await Promise.all([a.handle(event(forged, 'a')), a.handle(event(live, 'b'))]);
    engine.close();
    // Different claims, different keys (same uid and resourceVersion).
    expect(targetKey(ownerrefRepair.targets(event(forged, 'a'))[0]!)).not.toBe(targetKey(ownerrefRepair.targets(event(live, 'b'))[0]!));
    // SHOULD: B (the live state) is looked at on its own claim: ip-live gets s's ownerReference.
    // On 621730b: B joins A's waiting run; A's hint settles it ("owners and labels complete") with
    // one read of ip-other; the live Subscription is never read; nothing is patched.
    expect({ a: oa[0]!.status, b: ob[0]!.status, patched: patched(), reads: c.reads }).toEqual({
      a: expect.anything(),
      b: 'acted',
      patched: ['ip-live:ownerReferences'],
      reads: expect.arrayContaining(['get Subscription/s']),
    });
  });

  it('H2 a requeue keeps the first event\'s hint: the newest event\'s requeue is dropped (one timer per key) and the stale hint settles the re-check without reading the live Subscription — the newest state\'s label repair never happens', async () => {
    const c = cluster();
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const created = clock.now.toISOString();
    // E1: s (rv 1) -> ip-1, owned, component label not yet there (OLM may still add it): requeue 1 s.
    const s1 = sub('1', { name: 'ip-1', uid: 'ip-1-uid' }, 'csv.v1');
    c.put(s1);
    c.put(ip('ip-1', 'ip-1-uid', 'csv.v1', { owned: true, labelled: false, created }));
    const { engine, plans, patched } = engineOn(c.reader, clock);
    const o1 = await engine.handle(event(s1, 'e1'));
    expect(o1[0]!.status).toBe('requeued');
    // Then: OLM labels ip-1; the Subscription moves on to ip-2 (owned, label missing) — E2, the newest state.
    c.put(ip('ip-1', 'ip-1-uid', 'csv.v1', { owned: true, labelled: true, created, rv: '11' }));
    const s2 = sub('2', { name: 'ip-2', uid: 'ip-2-uid' }, 'csv.v2');
    c.put(s2);
    c.put(ip('ip-2', 'ip-2-uid', 'csv.v2', { owned: true, labelled: false, created }));
    const o2 = await engine.handle(event(s2, 'e2'));
    expect(o2[0]!.status).toBe('requeued'); // asks to be re-checked after the grace
    // The grace passes (the live state stays: s -> ip-2, ip-2 unlabelled); the requeue timer fires.
    clock.now = new Date(clock.now.getTime() + 5_000);
    c.reads.length = 0;
    await sleep(1_400);
    engine.close();
    // SHOULD: the re-check looks at the live Subscription and restores ip-2's component label.
    // On 621730b: the timer's ref carries E1's hint (s rv 1 -> ip-1); ip-1 now holds it, so observe
    // returns after ONE read of ip-1 ("owners and labels complete") and nothing else is scheduled.
    expect({ reads: c.reads, patched: patched(), last: plans.at(-1)?.kind }).toEqual({
      reads: expect.arrayContaining(['get Subscription/s']),
      patched: ['ip-2:labels'],
      last: 'act',
    });
  });
});

// ---------------------------------------------------------------------------------------------
// A raw HTTP server (as in attack-new.test.ts)
// ---------------------------------------------------------------------------------------------

async function rawServer(answer: (path: string, socket: Socket) => void) {
  const paths: string[] = [];
  const sockets = new Set<Socket>();
  const closed = { n: 0 };
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closed.n++;
    });
    socket.on('error', () => undefined);
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const path = buf.slice(0, end).split(' ')[1]!;
        buf = buf.slice(end + 4);
        paths.push(path);
        answer(path, socket);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    paths,
    closed,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const json = (s: Socket, body: string): void => void s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

function kubeAt(server: string, o: KubeClientOptions = {}) {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return createKube(kc, { retries: 0, sleep: async () => undefined, timeoutMs: 3_000, ...o });
}

const page0 = JSON.stringify({ kind: 'ConfigMapList', metadata: { continue: 'p1' }, items: [{ metadata: { name: 'a', namespace: 'n' } }] });
const CM = JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', namespace: 'n' } });

describe('holes: list pages one ahead (shared/kube/client.ts list)', () => {
  it('H3 a caller that stops after the first item leaves the next page in flight, never aborted; 32 such callers hold all MAX_SOCKETS connections and an unrelated GET waits for them to time out', async () => {
    // The apiserver is slow on continue pages (large pages of a busy cluster): it answers them late.
    const srv = await rawServer((path, socket) => {
      if (path.includes('continue=')) return; // answered never (the client's timeout ends it)
      json(socket, path.includes('/configmaps/x') ? CM : page0);
    });
    try {
      const kube = kubeAt(srv.url, { timeoutMs: 2_000 });
      // Like job-conflict's `for await (...) if (olmPod(p)) return true`: stop at the first match.
      for (let i = 0; i < 32; i++) {
        for await (const _ of kube.list('v1', 'ConfigMap', { namespace: 'n' })) break;
      }
      await sleep(50);
      const t = performance.now();
      const got = await kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'n', name: 'x' });
      const waited = performance.now() - t;
      // SHOULD: a page nobody will read is not waited for (aborted when the caller stops), so the GET
      // is answered at once. On 621730b: 32 unread pages stay in flight; the GET waits ~2 s for a socket.
      expect({ name: got?.metadata.name, waitedUnder500ms: waited < 500, unreadPagesRequested: srv.paths.filter((p) => p.includes('continue=')).length }).toEqual({
        name: 'x',
        waitedUnder500ms: true,
        unreadPagesRequested: expect.any(Number),
      });
    } finally {
      await srv.close();
    }
  }, 15_000);
});

// =============================================================================================
// SAFE (passing regressions)
// =============================================================================================

describe('safe: the hint never leads to a write', () => {
  it('S1 a hint whose status is any shape (wrong types, nulls, a plan of another namespace) never throws and never settles on its own: the live Subscription decides', async () => {
    const c = cluster();
    const live = sub('7', { name: 'ip-live', uid: 'ip-live-uid' }, 'csv.v2');
    c.put(live);
    c.put(ip('ip-live', 'ip-live-uid', 'csv.v2', { owned: true, labelled: true, created: '2025-01-01T00:00:00Z' }));
    const { engine, patched } = engineOn(c.reader, { now: new Date('2026-01-01T00:00:00Z') });
    const statuses = [
      { installPlanRef: null },
      { installPlanRef: { name: 'ip-live', uid: 5 }, currentCSV: ['x'] },
      { installPlanRef: { name: 'ip-live', uid: 'ip-live-uid', namespace: 'elsewhere' }, currentCSV: 'csv.v2', installplan: 'str' },
      { installPlanRef: { name: 'ip-live', uid: 'ip-live-uid' }, currentCSV: 'csv.v2', installplan: { uuid: {} } },
    ];
    for (const [i, st] of statuses.entries()) {
      const hinted = { ...live, spec: { name: { not: 'a string' } }, status: st } as KubeObject;
      const o = await engine.handle(event(hinted, `x${i}`));
      expect(['noop', 'ignored']).toContain(o[0]!.status);
    }
    engine.close();
    expect(patched()).toEqual([]);
  });

  it('S2 a stale hint naming a plan that does NOT hold it, while the live Subscription names a different (healthy) plan: no write, the hinted plan is not patched', async () => {
    const c = cluster();
    const live = sub('9', { name: 'ip-new', uid: 'ip-new-uid' }, 'csv.v2');
    c.put(live);
    c.put(ip('ip-new', 'ip-new-uid', 'csv.v2', { owned: true, labelled: true, created: '2025-01-01T00:00:00Z' }));
    c.put(ip('ip-old', 'ip-old-uid', 'csv.v1', { owned: false, labelled: false, created: '2025-01-01T00:00:00Z' }));
    const { engine, patched } = engineOn(c.reader, { now: new Date('2026-01-01T00:00:00Z') });
    const o = await engine.handle(event(sub('3', { name: 'ip-old', uid: 'ip-old-uid' }, 'csv.v1'), 'old'));
    engine.close();
    expect(o[0]!.status).toBe('noop');
    expect(patched()).toEqual([]);
  });

  it('S3 a hinted plan re-created under the same name between the hinted read and the live read is never patched on the old uid (uid check in servesPlan)', async () => {
    const c = cluster();
    // Live s points at ip (uid NEW); the hinted read returns the old ip (uid OLD) lacking the owner.
    const live = sub('9', { name: 'ip', uid: 'NEW' }, 'csv.v1');
    c.put(live);
    let first = true;
    const oldIp = ip('ip', 'OLD', 'csv.v1', { owned: false, labelled: false, created: '2025-01-01T00:00:00Z' });
    const reader: Reader = {
      ...c.reader,
      async get<T extends KubeObject>(ref: Ref): Promise<T | undefined> {
        if (ref.kind === 'InstallPlan' && first) {
          first = false;
          return oldIp as T;
        }
        return c.reader.get(ref);
      },
    };
    c.put(ip('ip', 'NEW', 'csv.v1', { owned: true, labelled: true, created: '2025-01-01T00:00:00Z' }));
    const { engine, patched } = engineOn(reader, { now: new Date('2026-01-01T00:00:00Z') });
    await engine.handle(event(sub('8', { name: 'ip', uid: 'OLD' }, 'csv.v1'), 'h'));
    engine.close();
    expect(patched()).toEqual([]);
  });
});

describe('safe: list pages one ahead', () => {
  it('S4 a shared list whose readers all leave stops its source; the page-ahead failure is swallowed (no unhandled rejection), and the next shared list still works', async () => {
    let n = 0;
    const srv = await rawServer((path, socket) => {
      n++;
      if (path.includes('continue=')) {
        const body = JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
        socket.write(`HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        return;
      }
      json(socket, page0);
    });
    try {
      const r = shareLists(kubeAt(srv.url));
      for await (const _ of r.list('v1', 'ConfigMap', { namespace: 'n', shared: true })) break;
      await sleep(50);
      const again: string[] = [];
      for await (const o of r.list('v1', 'ConfigMap', { namespace: 'n', shared: true })) {
        again.push(o.metadata.name);
        break;
      }
      await sleep(50);
      expect(again).toEqual(['a']);
      expect(n).toBeGreaterThanOrEqual(2);
    } finally {
      await srv.close();
    }
  });

  it('S5 order and completeness across many small pages, with a slow consumer', async () => {
    const srv = await rawServer((path, socket) => {
      const k = Number(new URL(path, 'http://x').searchParams.get('continue') ?? '0');
      json(socket, JSON.stringify({ kind: 'L', metadata: k < 19 ? { continue: String(k + 1) } : {}, items: [{ metadata: { name: `i${k}a` } }, { metadata: { name: `i${k}b` } }] }));
    });
    try {
      const names: string[] = [];
      for await (const o of kubeAt(srv.url).list('v1', 'ConfigMap', { namespace: 'n', pageSize: 2 })) {
        names.push(o.metadata.name);
        if (names.length % 7 === 0) await sleep(2);
      }
      expect(names).toEqual(Array.from({ length: 20 }, (_, k) => [`i${k}a`, `i${k}b`]).flat());
      expect(srv.paths.length).toBe(20);
    } finally {
      await srv.close();
    }
  });
});
