/**
 * Faults between olm-medic and the apiserver. The production server (dist/server.mjs, the shipped
 * ServiceAccount's token) talks to the real apiserver through a fault-injecting proxy that, driven
 * by a seeded PRNG, answers 30% of requests with 503 (Status body), 429 (Retry-After: 1), a
 * connection reset (before forwarding, or after the apiserver executed the request), or 50–300 ms
 * of extra latency. Events are delivered like a Broker (redelivery of any non-2xx answer with
 * backoff, bounded): the recorded ApiServerSource streams rewritten to the seed id, plus `add`
 * events for every live seed and decoy object. Sweeps (PingSource ticks) are sent only when a
 * situation has not healed from events within a few seconds.
 *
 * Shown: every seed situation heals; the decoys are untouched; no unsafe write reached the
 * apiserver (audit log); the server never crashed; every non-2xx answer was 503 or 429.
 *
 * The second block pins down resets *mid-response* (status and headers received, body cut off).
 * The kube client reads a failed body read on a 2xx as an empty answer (shared/kube/client.ts:
 * `res.text().catch(() => '')`, then `if (res.ok) return json` with json undefined): a GET then
 * looks like "not found" and a list throws a TypeError. Those tests are `it.fails` (bugs).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CloudEvent } from 'cloudevents';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { seeds, missingOwner, type Situation } from '../scenarios/seeds.js';
import * as olm from '../fixtures/olm-objects.js';
import { Broker } from '../support/broker.js';
import { eventually } from '../support/cluster.js';
import { apiServerEvent, post } from '../support/events.js';
import { startFaultProxy, type Fault, type FaultProxy } from '../support/fault-proxy.js';
import { AuditLog, auditNow, createDecoys, decoyViolations, takeBaseline, unsafeActions } from '../support/invariants.js';
import { addEvents, seedNamespaces, snapshot, streamFile, sweepEvent } from '../support/seeded.js';
import { startServer, type RunningServer } from '../support/server.js';
import { loadStream, prng } from '../support/streams.js';

const cp = inject('controlPlane');
const admin = createKube(loadKubeConfig(cp.adminKubeconfig));
const audit = new AuditLog(cp.auditLog);
const FAULT_SEED = 0x0f4017;
const refOf = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });

// Ids are 6 characters, like the recorded streams' (the seed CSV's name depends on the id's length).
// KUBE_RETRIES=3 is the shipped default (most faults are absorbed by the kube client's retries);
// with 1, many reconciles fail through to the Broker, which must redeliver until they succeed.
describe.each([
  { retries: '3', id: 'fault3', seed: FAULT_SEED },
  { retries: '1', id: 'fault1', seed: FAULT_SEED + 1 },
])('30% of apiserver requests fail (503, 429, resets, latency); KUBE_RETRIES=$retries', ({ retries, id, seed }) => {
  let proxy: FaultProxy;
  let server: RunningServer;
  const broker = new Broker({ attempts: 10, backoffMs: 200, maxBackoffMs: 2_000 });
  const pings = new Broker({ attempts: 1 });
  const knownBugHits: string[] = [];

  beforeAll(async () => {
    // Every fault kind, including resets in the middle of a response body.
    proxy = await startFaultProxy({ kubeconfig: cp.shippedKubeconfig, dir: cp.dir, rnd: prng(seed), rate: 0.3, faults: ['503', '429', 'reset', 'reset-after', 'latency', 'truncate'] });
    server = await startServer({ KUBECONFIG: proxy.kubeconfig, LOG_LEVEL: 'warn', KUBE_RETRIES: retries, OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
  });

  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
  });

  /**
   * Waits for `probe`; when it does not come true from events alone, sends a sweep (a PingSource
   * tick: one attempt, the next tick is its retry) and waits again.
   */
  async function healOrSweep(probe: () => Promise<boolean>, what: string, sweeps: string[], knownBug?: () => Promise<string | undefined>): Promise<void> {
    for (let round = 0; round < 4; round++) {
      try {
        await eventually(probe, what, 15_000);
        return;
      } catch {
        const bug = await knownBug?.();
        if (bug) {
          knownBugHits.push(bug);
          console.log(`[faults] known bug hit (pinned by an it.fails test below): ${bug}`);
          return;
        }
        sweeps.push(what);
        console.log(`[faults] ${what}: not healed from events after 15 s; sweeping. Server log tail:\n${server.output().slice(-2500)}`);
        await pings.deliver(server.url, sweepEvent());
      }
    }
    throw new Error(`${what}: not healed after 4 sweeps\n${server.output().slice(-4000)}`);
  }

  it('every seed situation heals, decoys stay untouched, no unsafe write, never a 500/4xx answer', async () => {
    const situations: Situation[] = await Promise.all(seeds.map((s) => s(admin, id)));
    const decoys = await createDecoys(admin, id);
    const namespaces = [...seeds.flatMap((s) => seedNamespaces(s, id)), ...decoys.namespaces];
    const baseline = await takeBaseline(admin, namespaces);
    const since = auditNow();
    const sweeps: string[] = [];

    await Promise.all([
      broker.deliverAll(server.url, decoys.events()),
      ...seeds.map(async (seed, i) => {
        const sit = situations[i]!;
        const live = await snapshot(admin, seedNamespaces(seed, id), id);
        const events: CloudEvent<unknown>[] = [...loadStream(streamFile(seed), id), ...addEvents(live)];
        await broker.deliverAll(server.url, events);
        if (sit.trigger) {
          await healOrSweep(() => sit.trigger!.ready(), `${sit.name}: olm-medic to prepare`, sweeps);
          await sit.trigger.act();
          // What the ApiServerSource sends next: the CSV, now with a deletionTimestamp.
          const after = await snapshot(admin, seedNamespaces(seed, id), id);
          await broker.deliverAll(server.url, addEvents(after).map((e) => apiServerEvent('update', e.data as KubeObject) as CloudEvent<unknown>));
        }
        await healOrSweep(() => sit.healed(), sit.name, sweeps);
      }),
    ]);

    for (const sit of situations) expect(await sit.healed(), sit.name).toBe(true);
    expect(knownBugHits).toEqual([]);
    expect(await decoyViolations(admin, decoys)).toEqual([]);
    await audit.settle(cp.shippedUser);
    expect(unsafeActions(audit.since(since), cp.shippedUser, baseline)).toEqual([]);

    // The server never crashed.
    expect(server.proc.exitCode).toBeNull();
    expect((await fetch(`${server.url}/health/liveness`)).status).toBe(200);

    // Every failed answer asked for a redelivery the right way: 503 (or 429 when rate-limited).
    const failures = [...broker.failures(), ...pings.failures()];
    const bad = failures.filter((a) => a.status !== 503 && a.status !== 429);
    expect(bad.map((a) => `${a.status} ${a.type} ${a.subject ?? ''}: ${a.body}`)).toEqual([]);
    // Every event was delivered in the end.
    const undelivered = new Set(broker.answers.map((a) => a.eventId));
    for (const a of broker.answers) if (a.status >= 200 && a.status < 300) undelivered.delete(a.eventId);
    expect([...undelivered]).toEqual([]);

    // The faults really happened, of every kind.
    for (const f of ['503', '429', 'reset', 'reset-after', 'latency'] as Fault[]) expect(proxy.stats.injected[f], f).toBeGreaterThan(0);
    const injected = Object.values(proxy.stats.injected).reduce((a, b) => a + b, 0);
    expect(injected / proxy.stats.requests).toBeGreaterThan(0.2);
    console.log(
      `[faults KUBE_RETRIES=${retries}] apiserver requests ${proxy.stats.requests}, injected ${JSON.stringify(proxy.stats.injected)}; ` +
        `answers ${JSON.stringify(broker.histogram())} over ${new Set(broker.answers.map((a) => a.eventId)).size} events; sweeps needed ${sweeps.length} ${JSON.stringify(sweeps)}; known-bug hits ${JSON.stringify(knownBugHits)}`,
    );
  });
});

/**
 * A reset after the status line and headers: the body read fails. These must be transient
 * failures (retried by the kube client, else 503 to the Broker), never an empty successful answer.
 * BUG (shared/kube/client.ts, once()): `const text = await res.text().catch(() => '')` swallows the
 * failed body read; with res.ok, `json` is undefined and is returned as the result. So a GET of an
 * existing object returns undefined — every caller reads that as "not found" — and a list page is
 * undefined, so `page.items` throws a TypeError (answered 500). Fix: on a body-read failure throw
 * networkError(e) (transient, retried) instead of returning. (Checked on a scratch copy: with
 * that change all four tests below pass.)
 */
describe('a connection reset mid-response (headers received, body cut off)', () => {
  let proxy: FaultProxy;
  let server: RunningServer;
  /** Truncate the first response to a request matching the pattern, then pass everything. */
  const once = new Map<RegExp, number>();
  const truncateOnce = (pattern: RegExp): void => void once.set(pattern, 1);

  beforeAll(async () => {
    proxy = await startFaultProxy({
      kubeconfig: cp.shippedKubeconfig,
      dir: cp.dir,
      rnd: prng(1),
      rate: 0,
      rule: ({ method, url }) => {
        for (const [re, left] of once) {
          if (left > 0 && re.test(`${method} ${url}`)) {
            once.set(re, left - 1);
            return 'truncate';
          }
        }
        return 'pass';
      },
    });
    server = await startServer({ KUBECONFIG: proxy.kubeconfig, LOG_LEVEL: 'warn', OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
  });

  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
  });

  // BUG: the truncated GET of a Ready node reads as "node no longer exists" and the catalog pod on
  // it is force-deleted at once (catalog-reschedule: `if (!node) why = 'node … no longer exists'`).
  it('a truncated GET of a Ready node is not "node gone": its catalog pod is never force-deleted', async () => {
    const decoys = await createDecoys(admin, 'trc1');
    const pod = decoys.objects.find((o) => o.kind === 'Pod')!;
    const node = decoys.objects.find((o) => o.kind === 'Node')!;
    truncateOnce(new RegExp(`^GET /api/v1/nodes/${node.metadata.name}(\\?|$)`));
    const res = await post(server.url, apiServerEvent('update', pod));
    await res.text();
    expect(await admin.get(refOf(pod)), 'the catalog pod on the Ready node').toBeDefined();
    expect([200, 503]).toContain(res.status); // retried and right (noop), or left to the Broker
  });

  // BUG: the truncated GET of a live CSV reads as "CSV deleted", so the cluster-scoped objects
  // labelled as its own are deleted as orphans. (Grace 0 here as in the other suites; with the
  // default OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS=120 every such object older than two
  // minutes — i.e. the RBAC of any installed operator — is deleted the same way.)
  it('a truncated GET of a live CSV is not "CSV gone": its ClusterRole is not deleted as an orphan', async () => {
    const ns = 'trc2';
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { dryRun: false });
    const csv = await admin.create(olm.csv({ namespace: ns, name: 'live-op.v1.0.0', phase: 'Succeeded' }) as KubeObject, { dryRun: false });
    const cr = await admin.create(olm.csvClusterRole({ csvName: csv.metadata.name, csvNamespace: ns, name: 'trc2-live-op-cr' } as never) as KubeObject, { dryRun: false });
    truncateOnce(new RegExp(`^GET /apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${csv.metadata.name.replaceAll('.', '\\.')}(\\?|$)`));
    const res = await post(server.url, apiServerEvent('add', csv));
    await res.text();
    expect(await admin.get(refOf(cr)), 'the ClusterRole of the live CSV').toBeDefined();
    expect([200, 503]).toContain(res.status); // retried and right (finalizer added), or left to the Broker
  });

  // BUG: the truncated GET of the target reads as "already gone": answered 200, so the Broker never
  // redelivers and the InstallPlan stays without its owner until some later event or sweep.
  it('a truncated GET of the target is not "already gone": the event is not acknowledged unrepaired', async () => {
    const sit = await missingOwner(admin, 'trc3');
    const ip = (await snapshot(admin, ['apps-trc3'], 'trc3')).objects.get('installplans/apps-trc3/install-x7k2p')!;
    truncateOnce(/^GET \/apis\/operators\.coreos\.com\/v1alpha1\/namespaces\/apps-trc3\/installplans\/install-x7k2p(\?|$)/);
    const res = await post(server.url, apiServerEvent('add', ip));
    await res.text();
    // Either repaired now, or not acknowledged (so the Broker redelivers).
    expect(res.status === 503 || (res.status === 200 && (await sit.healed())), `answered ${res.status}, healed ${await sit.healed()}`).toBe(true);
  });

  // BUG: a truncated list page is `undefined`; `page.items` throws a TypeError, answered 500
  // ("unexpected failure": retried, then dead-lettered) instead of a retried read (or 503).
  it('a truncated list is a transient failure (retried, or 503), never a 500', async () => {
    const sit = await missingOwner(admin, 'trc4');
    const ip = (await snapshot(admin, ['apps-trc4'], 'trc4')).objects.get('installplans/apps-trc4/install-x7k2p')!;
    truncateOnce(/^GET \/apis\/operators\.coreos\.com\/v1alpha1\/namespaces\/apps-trc4\/subscriptions\?/);
    const res = await post(server.url, apiServerEvent('add', ip));
    const body = await res.text();
    // Retried and repaired, or left to the Broker (503) — never "unexpected failure" (500).
    expect(res.status === 503 || (res.status === 200 && (await sit.healed())), `answered ${res.status}: ${body}`).toBe(true);
  });
});

/**
 * BUG (job-conflict): the Subscription nudge cannot be re-derived from the cluster. The plan is
 * [delete Job, (delete ConfigMap,) nudge Subscription]; if the nudge write fails transiently after
 * the Job delete succeeded (or the process stops in between), the answer is 503 and the Broker
 * redelivers — but now the Job is gone, so the redelivery, later Subscription events and sweeps
 * all plan nothing ("no unpack jobs"), and the stuck Subscription is never nudged: OLM retries
 * only on its own resync. Hit by the random faults above (KUBE_RETRIES=1: both attempts of the
 * nudge failed); made deterministic here by failing every attempt of that one PATCH until the
 * first answer. Fix idea: derive the nudge from state (e.g. nudge a Subscription stuck on
 * BundleUnpackFailed whose nudged-at is older than its condition and whose unpack Job is gone),
 * or nudge before deleting the Job.
 */
describe('a transient fault between the writes of one plan', () => {
  let proxy: FaultProxy;
  let server: RunningServer;
  let block: RegExp | undefined;

  beforeAll(async () => {
    proxy = await startFaultProxy({ kubeconfig: cp.shippedKubeconfig, dir: cp.dir, rnd: prng(2), rate: 0, rule: ({ method, url }) => (block?.test(`${method} ${url}`) ? '503' : 'pass') });
    server = await startServer({ KUBECONFIG: proxy.kubeconfig, LOG_LEVEL: 'warn', OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
  });

  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
  });

  it('the stuck Subscription is still nudged after the nudge failed once the Job was deleted', async () => {
    const id = 'nudge1';
    const sit = await seeds.find((s) => s.name === 'staleUnpackJob')!(admin, id);
    const job = [...(await snapshot(admin, [`olm-${id}`], id)).objects.values()].find((o) => o.kind === 'Job')!;
    const sub = (await snapshot(admin, [`team-b-${id}`], id)).objects.get(`subscriptions/team-b-${id}/etcd`)!;
    block = new RegExp(`^PATCH /apis/operators\\.coreos\\.com/v1alpha1/namespaces/team-b-${id}/subscriptions/etcd\\?`);
    const first = await post(server.url, apiServerEvent('update', job));
    expect(first.status, await first.text()).toBe(503); // the Job is deleted, the nudge failed
    expect(await admin.get(refOf(job))).toBeUndefined();
    block = undefined;
    // What follows: the Broker redelivers, the Subscription changes, a PingSource sweep.
    const broker = new Broker({ attempts: 5 });
    await broker.deliver(server.url, apiServerEvent('update', job));
    await broker.deliver(server.url, apiServerEvent('update', sub));
    await broker.deliver(server.url, sweepEvent());
    expect(await sit.healed(), 'the Subscription carries olm-medic.io/nudged-at').toBe(true);
  });
});
