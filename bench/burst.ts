/**
 * A burst: a catalog update touches 2,000 Subscriptions at once (smoke: 200), 1 % of them truly
 * stuck (job-conflict's "stale unpack Job blocks a second install", test/scenarios/seeds.ts). On a
 * real control plane, twin sets are seeded (admin): healthy Subscriptions that are installed (an
 * InstallPlan they own, installPlanRef, AtLatestKnown) plus the stuck situations.
 *   - baseline (set A): each Subscription's update event delivered ONCE, a few at a time, never
 *     two for the same object: the apiserver requests olm-medic needs for this work (the minimum);
 *   - burst (set B): one update per Subscription, all at once in random order from
 *     `BROKER_PARALLELISM` concurrent deliveries that behave like a Broker (429/5xx redelivered
 *     after their Retry-After), a tenth of them delivered twice (at-least-once redelivery).
 * Measured: every stuck one healed (its probe), p99 of burst start → healed; apiserver requests
 * of the burst (audit log) vs the baseline's; every answer's status (no 5xx).
 */
import { join } from 'node:path';
import { Pool } from 'undici';
import { freePort, startControlPlane, type ControlPlane } from '../test/control-plane/control-plane.js';
import { installCrds } from '../test/control-plane/crds.js';
import * as olm from '../test/fixtures/olm-objects.js';
import { staleUnpackJob, type Situation } from '../test/scenarios/seeds.js';
import { createKube, loadKubeConfig } from '../shared/kube/client.js';
import type { Kube, KubeObject } from '../shared/kube/types.js';
import { percentile, type BenchContext, type BenchResult, type Benchmark } from './types.js';
import { apiServerEvent, postUntilAnswered, type HttpEvent, type KubeObj } from './lib/events.js';
import { explorationNotes, scratchDir, serverEntry, sleep, spawnNode, type Child, serverEnv } from './lib/proc.js';
import { countBy, formatCounts, limitOf, requestKey, type AuditRecord } from './lib/audit.js';

const USER = 'bench-medic';
const BROKER_PARALLELISM = 200;
const BASELINE_PARALLELISM = 16;

/** Deterministic shuffle (the same order every run). */
function shuffle<T>(xs: T[]): T[] {
  const a = [...xs];
  let x = 12345;
  for (let i = a.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) >>> 0;
    const j = x % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        await fn(items[i]!, i);
      }
    }),
  );
}

interface SeededSet {
  namespaces: string[];
  stuck: Situation[];
}

async function seedSet(kube: Kube, tag: string, healthy: number, stuck: number, log: (l: string) => void): Promise<SeededSet> {
  const t0 = performance.now();
  const perNs = 20;
  const namespaces = Array.from({ length: Math.ceil(healthy / perNs) }, (_, k) => `burst-${tag}-${k}`);
  for (const n of namespaces) await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } } as KubeObject, { dryRun: false });
  const situations: Situation[] = [];
  await forEachLimited(
    Array.from({ length: stuck }, (_, i) => i),
    4,
    async (i) => void situations.push(await staleUnpackJob(kube, `${tag}${i}`)),
  );
  await forEachLimited(
    Array.from({ length: healthy }, (_, i) => i),
    16,
    async (i) => {
      const namespace = namespaces[Math.floor(i / perNs)]!;
      const name = `op-${i}`;
      const sub: KubeObject = await kube.create(olm.subscription({ namespace, name, package: `pkg-${i}`, source: 'operatorhubio-catalog', sourceNamespace: 'olm', channel: 'stable' }) as KubeObject, { dryRun: false });
      // As OLM leaves it: owned by the Subscription, with the operators.coreos.com/<pkg>.<ns> component label.
      const ip = await kube.create(olm.installPlan({ namespace, name: `install-${i}`, csvNames: [`pkg-${i}.v1.0.0`], ownerSubs: [{ name, uid: sub.metadata.uid! }], labels: { [`${olm.COMPONENT_LABEL_PREFIX}pkg-${i}.${namespace}`]: '' } }) as KubeObject, { dryRun: false });
      await kube.mergePatch(
        { apiVersion: sub.apiVersion, kind: sub.kind, namespace, name },
        { status: olm.subscriptionStatus({ currentCSV: `pkg-${i}.v1.0.0`, installedCSV: `pkg-${i}.v1.0.0`, state: 'AtLatestKnown', installPlan: { name: ip.metadata.name, namespace, uid: ip.metadata.uid! }, installPlanGeneration: 1, conditions: [olm.catalogSourcesHealthyCondition()] }) },
        { dryRun: false, subresource: 'status' },
      );
    },
  );
  log(`seeded set ${tag}: ${healthy} installed Subscriptions + ${stuck} stuck situations in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return { namespaces: [...namespaces, ...situations.flatMap((s) => s.namespaces)], stuck: situations };
}

async function subscriptionsOf(kube: Kube, set: SeededSet): Promise<KubeObject[]> {
  const subs: KubeObject[] = [];
  for (const namespace of set.namespaces) for await (const s of kube.list('operators.coreos.com/v1alpha1', 'Subscription', { namespace })) subs.push(s);
  return subs;
}

const event = (sub: KubeObject): HttpEvent => apiServerEvent('update', structuredClone(sub) as unknown as KubeObj);

export const bench: Benchmark = {
  name: 'burst',
  description: 'a catalog update: 2,000 Subscriptions updated at once (10 % redelivered), 1 % stuck, Broker-like redelivery: heal p99, apiserver requests vs one-at-a-time, no 5xx',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const total = ctx.smoke ? 200 : 2_000;
    const stuckCount = Math.max(1, Math.round(total / 100));
    const healthy = total - 2 * stuckCount; // each stuck situation brings 2 Subscriptions (one installed, one stuck)
    const scratch = scratchDir('burst');
    let cp: ControlPlane | undefined;
    let medic: Child | undefined;
    let pool: Pool | undefined;
    try {
      cp = await startControlPlane({ users: { [USER]: ['system:masters'] }, log: ctx.log });
      await installCrds(cp.admin.kubeconfig);
      const admin = createKube(loadKubeConfig(cp.admin.kubeconfig));
      const [setA, setB] = [await seedSet(admin, 'a', healthy, stuckCount, ctx.log), await seedSet(admin, 'b', healthy, stuckCount, ctx.log)];
      const subsA = await subscriptionsOf(admin, setA);
      const subsB = await subscriptionsOf(admin, setB);

      const port = await freePort();
      // The action budget (default 30 per 60 s, a blast-radius limit) would by design hold back 20
      // stuck Subscriptions' heals (a Job delete and a nudge each) for a window: a cluster that expects
      // bursts of this size raises it, and so does this benchmark (both sets: 2 x 20 heals).
      medic = spawnNode(serverEntry(), { env: { ...serverEnv(), PORT: String(port), KUBECONFIG: cp.user(USER).kubeconfig, LOG_LEVEL: 'warn', MAX_ACTIONS_PER_WINDOW: String(Math.max(30, 5 * stuckCount * 2)), ...(process.env.OLM_MEDIC_BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.OLM_MEDIC_BENCH_SERVER_NODE_OPTIONS } : {}) }, logFile: join(scratch.dir, 'medic.log') });
      await postUntilAnswered(port, apiServerEvent('update', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hello', namespace: 'default' } }), { pollMs: 20, alive: medic.running, what: 'olm-medic' });
      pool = new Pool(`http://127.0.0.1:${port}`, { connections: BROKER_PARALLELISM, pipelining: 1 });
      const p = pool;
      const statuses = new Map<number, number>();
      let redeliveries = 0;
      /** A Broker's delivery: redelivered on 429/5xx after Retry-After (at most 20 tries). */
      let connectionErrors = 0;
      const deliver = async (ev: HttpEvent): Promise<number> => {
        for (let attempt = 1; ; attempt++) {
          let res;
          try {
            res = await p.request({ path: '/', method: 'POST', headers: ev.headers, body: ev.body });
            await res.body.dump();
          } catch (e) {
            // A Broker redelivers after a connection failure too; it is counted (and must stay 0).
            connectionErrors++;
            if (connectionErrors <= 3) ctx.log(`delivery failed: ${e instanceof Error ? e.message : e}; server running: ${medic!.running()}`);
            if (!medic!.running()) throw new Error(`olm-medic exited:\n${medic!.tail(40)}`);
            if (attempt >= 20) return 0;
            await sleep(1000);
            continue;
          }
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode < 300 || (res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429) || attempt >= 20) return res.statusCode;
          redeliveries++;
          const ra = Number(res.headers['retry-after']);
          await sleep((Number.isFinite(ra) && ra > 0 ? ra : 1) * 1000);
        }
      };

      // Baseline: set A, one event per Subscription, a few at a time (no two for the same object).
      const a0 = cp.requestsBy(USER).length;
      const tA = performance.now();
      await forEachLimited(subsA, BASELINE_PARALLELISM, async (s) => void (await deliver(event(s))));
      const stuckA = await healTimes(cp, setA.stuck, Date.now() - (performance.now() - tA), 30_000);
      await sleep(2_000); // follow-ups and requeues of the last ones
      const baselineRequests = cp.requestsBy(USER).length - a0;
      const baselineSeconds = (performance.now() - tA) / 1000;
      ctx.log(`baseline: ${subsA.length} events, ${BASELINE_PARALLELISM} at a time, in ${baselineSeconds.toFixed(1)} s, ${baselineRequests} apiserver requests, ${stuckA.filter((x) => x !== undefined).length}/${stuckA.length} healed`);
      const baselineStatuses = new Map(statuses);
      const baselineConnectionErrors = connectionErrors;
      statuses.clear();
      redeliveries = 0;
      connectionErrors = 0;

      // Burst: set B, one update per Subscription, all at once, in random order; a tenth of them
      // delivered twice (a Broker's at-least-once redelivery, e.g. after a lost answer).
      const updates = shuffle(subsB.map((s) => event(s)));
      const events = shuffle([...updates, ...updates.filter((_, i) => i % 10 === 0)]);
      const b0 = cp.requestsBy(USER).length;
      const t0 = performance.now();
      const t0Wall = Date.now();
      // When each stuck Subscription's event is first handed to olm-medic (the Broker's pace decides
      // it): heal latency as olm-medic contributes it is measured from there.
      const stuckSubOf = new Map(setB.stuck.map((s, k) => [stuckNamespace(s), k]));
      const firstDelivered: (number | undefined)[] = setB.stuck.map(() => undefined);
      await forEachLimited(events, BROKER_PARALLELISM, async (ev) => {
        const k = stuckSubOf.get(namespaceOf(ev));
        if (k !== undefined) firstDelivered[k] ??= performance.now() - t0;
        await deliver(ev);
      });
      const deliveredSeconds = (performance.now() - t0) / 1000;
      const healMs = await healTimes(cp, setB.stuck, t0Wall, 60_000);
      await sleep(2_000);
      const burstLog = cp.requestsBy(USER).slice(b0);
      const burstRequests = burstLog.length;
      if (!medic.running()) throw new Error(`olm-medic exited:\n${medic.tail()}`);
      const healed = healMs.filter((x): x is number => x !== undefined);
      const p99 = healed.length ? percentile(healed, 99) : Infinity;
      const sinceDelivery = healMs.flatMap((h, k) => (h !== undefined && firstDelivered[k] !== undefined ? [h - firstDelivered[k]] : []));
      const p99Delivered = sinceDelivery.length ? percentile(sinceDelivery, 99) : Infinity;
      const deliveredAt = firstDelivered.filter((x): x is number => x !== undefined);
      const fivexx = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
      const ratio = burstRequests / baselineRequests;
      const fmt = (m: Map<number, number>): string => [...m].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}: ${n}`).join(', ');
      ctx.log(`burst: ${events.length} deliveries in ${deliveredSeconds.toFixed(1)} s (${redeliveries} redeliveries), answers ${fmt(statuses)}; ${burstRequests} apiserver requests; healed ${healed.length}/${healMs.length}, p99 ${p99.toFixed(0)} ms`);
      const r2 = (x: number): number => Math.round(x * 100) / 100;
      return {
        name: 'burst',
        metrics: {
          subscriptions: subsB.length,
          stuck: setB.stuck.length,
          burstEvents: events.length,
          brokerParallelism: BROKER_PARALLELISM,
          burstDeliveredSeconds: r2(deliveredSeconds),
          'heal ms p50/p99/max': healed.length ? `${percentile(healed, 50).toFixed(0)}/${p99.toFixed(0)}/${Math.max(...healed).toFixed(0)}` : 'none',
          'heal ms p50/p99/max, stuck event first delivered → healed': sinceDelivery.length ? `${percentile(sinceDelivery, 50).toFixed(0)}/${p99Delivered.toFixed(0)}/${Math.max(...sinceDelivery).toFixed(0)}` : 'none',
          'stuck events first delivered at ms p50/max (burst start = 0)': deliveredAt.length ? `${percentile(deliveredAt, 50).toFixed(0)}/${Math.max(...deliveredAt).toFixed(0)}` : 'none',
          burstAnswers: fmt(statuses),
          connectionErrors,
          redeliveries,
          burstApiserverRequests: burstRequests,
          'burst requests by shape': formatCounts(countBy(burstLog, shapeOf)),
          baselineApiserverRequests: baselineRequests,
          baselineAnswers: fmt(baselineStatuses),
          baselineConnectionErrors,
          baselineSeconds: r2(baselineSeconds),
        },
        targets: [
          { name: 'stuck Subscriptions healed', value: healed.length, target: `== ${healMs.length}`, pass: healed.length === healMs.length },
          { name: 'heal p99, burst start → healed (ms)', value: Math.round(p99), target: '< 2000', pass: p99 < 2000 },
          { name: 'heal p99, stuck event first delivered → healed (ms)', value: Math.round(p99Delivered), target: '< 2000', pass: p99Delivered < 2000 },
          { name: 'apiserver requests: burst (all at once, 10 % delivered twice) / baseline (once each, no overlap)', value: r2(ratio), target: '<= 1.2', pass: ratio <= 1.2 },
          { name: '5xx answers and failed connections during the burst', value: fivexx + connectionErrors, target: '== 0', pass: fivexx + connectionErrors === 0 },
        ],
        notes: [
          `Twin sets on one real control plane, each ${healthy} installed Subscriptions (owning their InstallPlan, installPlanRef set, AtLatestKnown) + ${stuckCount} "stale unpack Job blocks a second install" situations (2 Subscriptions each, one stuck on BundleUnpackFailed); olm-medic = npm start's command with KUBECONFIG of ${USER}, LOG_LEVEL=warn, MAX_ACTIONS_PER_WINDOW=${Math.max(30, 5 * stuckCount * 2)} (the default, 30 per 60 s, would hold back ${2 * stuckCount} heals by design).`,
          `Baseline (set A): one update event per Subscription, ${BASELINE_PARALLELISM} at a time, never two for one object — the requests the work needs when nothing overlaps (${baselineRequests}). Burst (set B): one update event per Subscription plus a tenth delivered twice, ${events.length} in all, shuffled, from ${BROKER_PARALLELISM} concurrent Broker-like deliveries (429/5xx redelivered after Retry-After); apiserver requests counted from the audit log from the burst start until 2 s after the last answer.`,
          'Installed Subscriptions carry an installPlanRef, so ownerref-repair reads that InstallPlan for each (not decidable from the event); the stuck ones go to job-conflict.',
          ...explorationNotes(),
        ],
      };
    } finally {
      await pool?.close().catch(() => undefined);
      await medic?.stop();
      await cp?.stop();
      scratch.cleanup();
    }
  },
};

/**
 * A request's shape for the burst's breakdown: requestKey (verb, resource, list scope) plus, for a
 * list, its page size and whether it is a next page; the heals' shared list rounds show here.
 */
function shapeOf(e: AuditRecord): string {
  if (e.verb !== 'list') return requestKey(e);
  const limit = limitOf(e.requestURI);
  const next = new URLSearchParams(e.requestURI.split('?')[1] ?? '').has('continue');
  return `${requestKey(e)}${limit === undefined ? '' : ` limit=${limit}`}${next ? ' (next page)' : ''}`;
}

/** The namespace of the situation's stuck Subscription (staleUnpackJob: [catalog, installed, stuck]). */
function stuckNamespace(s: Situation): string {
  return s.namespaces[2]!;
}

/** The namespace of an apiserver event's object (its ce-subject: /apis/…/namespaces/<ns>/…). */
function namespaceOf(ev: HttpEvent): string {
  return /\/namespaces\/([^/]+)\//.exec(ev.headers['ce-subject'] ?? '')?.[1] ?? '';
}

/**
 * When each situation was healed, in ms since `t0Wall` (undefined: not healed within the timeout):
 * the moment the apiserver completed the LAST of olm-medic's two heal writes (the Job's DELETE, the
 * stuck Subscription's PATCH — audit log stage ResponseComplete), once healed() confirms the state.
 * Read from the audit log, not by polling the apiserver: 20 probes polled every 100 ms are ~400
 * requests/s, as much as olm-medic's own load, and slowed the very heals they timed.
 */
async function healTimes(cp: ControlPlane, stuck: Situation[], t0Wall: number, timeoutMs: number): Promise<(number | undefined)[]> {
  const at: (number | undefined)[] = stuck.map(() => undefined);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const writes = cp.requestsBy(USER).filter((e) => (e.verb === 'delete' || e.verb === 'patch') && (e.responseStatus?.code ?? 0) < 300 && e.stageTimestamp);
    for (const [k, s] of stuck.entries()) {
      if (at[k] !== undefined) continue;
      const [cat, , b] = s.namespaces as [string, string, string];
      const done = (pred: (e: (typeof writes)[number]) => boolean): number | undefined => {
        const ts = writes.filter(pred).map((e) => Date.parse(e.stageTimestamp!));
        return ts.length ? Math.min(...ts) : undefined;
      };
      const jobDeleted = done((e) => e.verb === 'delete' && e.objectRef?.resource === 'jobs' && e.objectRef.namespace === cat);
      const nudged = done((e) => e.verb === 'patch' && e.objectRef?.resource === 'subscriptions' && e.objectRef.namespace === b);
      if (jobDeleted === undefined || nudged === undefined) continue;
      // Confirmed on the live objects once (the writes landed AND the situation reads as healed).
      if (await s.healed().catch(() => false)) at[k] = Math.max(jobDeleted, nudged) - t0Wall;
    }
    if (at.every((x) => x !== undefined) || Date.now() > deadline) return at;
    await sleep(500);
  }
}
