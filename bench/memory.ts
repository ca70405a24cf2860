/**
 * Memory under a long stream of mixed events: RSS of olm-medic (dist/server.mjs, a dedicated user
 * on a real control plane) while it handles 1,000,000 events (smoke: 20,000) — 99 % that need no
 * action (see unwantedPool: Pods without the catalog label, Pod add/delete, CronJob Jobs,
 * ConfigMaps, ~6 KB Ready catalog pod updates, ~60 KB copied CSVs, and events of never-seen CloudEvent
 * types) and 1 % that make it read: Subscription updates without an
 * installPlanRef (job-conflict observes: get Subscription, list Jobs) and NotReady catalog Pod
 * updates on a Ready Node (catalog-reschedule observes: get Node). The referenced objects exist,
 * so the reads succeed; each wanted event has a new resourceVersion, so none is a duplicate.
 * Sent over keep-alive connections (undici Pool) at a paced, steady rate; VmRSS sampled every
 * 250 ms from /proc/<pid>/status. Afterwards, the heap still reachable after forced full GCs
 * (through the inspector, opened only then) tells a leak from garbage not yet collected.
 * The same stream (same events, same pace, same connections) then goes to the baselines, one after
 * the other, each in its plain `node` (as in the throughput and cold-start rows): the express +
 * cloudevents echo and the bare node:http echo (bench/fixtures/), so the row shows what any Node
 * server's warm-up does to the same start/peak/growth figures.
 * Exploration knobs (never set by `npm run bench`): OLM_MEDIC_BENCH_MEMORY_EVENTS (count),
 * OLM_MEDIC_BENCH_MEMORY_NO_BASELINES=1 (olm-medic alone),
 * OLM_MEDIC_BENCH_SERVER_NODE_OPTIONS (extra server Node flags, e.g. --max-semi-space-size=8),
 * OLM_MEDIC_BENCH_MEMORY_NO_WANTED=1 (unwanted events only), OLM_MEDIC_BENCH_SERVER_ENV (NAME=value,…
 * over npm start's environment, e.g. MALLOC_ARENA_MAX=1); each is named in the notes when used.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import { freePort, startControlPlane, type ControlPlane } from '../test/control-plane/control-plane.js';
import { installCrds } from '../test/control-plane/crds.js';
import { createKube, loadKubeConfig } from '../shared/kube/client.js';
import type { KubeObject } from '../shared/kube/types.js';
import type { BenchContext, BenchResult, Benchmark } from './types.js';
import { apiServerEvent, postUntilAnswered, realisticPod, type HttpEvent, type KubeObj } from './lib/events.js';
import { copiedCsv, nonOlmJob, readyCatalogPodUpdate } from './lib/payloads.js';
import { explorationNotes, fixturesDir, rssBytes, scratchDir, serverEntry, serverEnv, sleep, spawnNode, type Child } from './lib/proc.js';

const USER = 'bench-medic';
const NS = 'bench-mem';
const CATALOG_NS = 'bench-mem-catalog';
const NODES = ['bench-node-0', 'bench-node-1'];
const SUBS = Array.from({ length: 10 }, (_, i) => `sub-${i}`);
const MB = 1024 * 1024;

/** Objects the wanted events refer to, created as admin before the run. */
async function seed(cp: ControlPlane): Promise<void> {
  await installCrds(cp.admin.kubeconfig);
  const kube = createKube(loadKubeConfig(cp.admin.kubeconfig));
  const create = (o: KubeObject): Promise<KubeObject> => kube.create(o, { dryRun: false });
  for (const name of [NS, CATALOG_NS]) await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (const name of NODES) {
    await create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' } } });
    await kube.mergePatch(
      { apiVersion: 'v1', kind: 'Node', name },
      { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }] } },
      { dryRun: false, subresource: 'status' },
    );
  }
  for (const name of SUBS) {
    await create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name, namespace: NS },
      spec: { channel: 'stable', installPlanApproval: 'Automatic', name: `pkg-${name}`, source: 'bench-catalog', sourceNamespace: CATALOG_NS },
    });
  }
}

/**
 * ~99 events per 100 that need no action, each with its own object name (a realistic mix): Pods
 * no function wants, Pod add/delete, CronJob Jobs (a declared kind, not unpack Jobs), ConfigMaps,
 * Ready catalog registry pod updates (~6 KB), copied CSVs (~60 KB); `undefined` marks a slot for an event
 * of a never-seen CloudEvent type (generated per request, see distinctTypeEvent).
 */
function unwantedPool(): (HttpEvent | undefined)[] {
  const pod = realisticPod();
  const pool: (HttpEvent | undefined)[] = [];
  const clone = <T>(o: T): T => structuredClone(o);
  for (let v = 0; v < 10; v++) {
    for (let i = 0; i < 99; i++) {
      const n = v * 99 + i;
      const slot = i % 99;
      if (slot < 40) {
        const p = clone(pod);
        p.metadata.name = `payments-api-7d9c6b5f4-${n.toString(36).padStart(5, 'x')}`;
        p.metadata.namespace = `shop-${n % 7}`;
        p.metadata.resourceVersion = String(4_830_117 + n);
        pool.push(apiServerEvent('update', p));
      } else if (slot < 45) {
        const p = clone(pod);
        p.metadata.name = `payments-api-7d9c6b5f4-d${n}`;
        pool.push(apiServerEvent(slot < 42 ? 'add' : 'delete', p));
      } else if (slot < 60) {
        pool.push(apiServerEvent('update', nonOlmJob(`backup-${29_384_756 + n}`, 900_000 + n)));
      } else if (slot < 74) {
        pool.push(apiServerEvent(slot < 65 ? 'add' : 'update', configMap(`app-config-${n}`, `shop-${n % 7}`, n)));
      } else if (slot < 89) {
        pool.push(apiServerEvent('update', readyCatalogPodUpdate(`redhat-operators-${n.toString(36).padStart(5, 'q')}`, 800_000 + n)));
      } else if (slot < 94) {
        pool.push(apiServerEvent('update', copiedCsv(`team-${n % 40}`, 700_000 + n)));
      } else {
        pool.push(undefined);
      }
    }
  }
  return pool;
}

/** An event of a CloudEvent type never seen before (a Broker fed by many sources): goes through the app. */
function distinctTypeEvent(i: number): HttpEvent {
  return {
    headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': `t-${i}`, 'ce-source': `/apis/v1/namespaces/tenant-${i % 50}/sources/s`, 'ce-type': `com.example.tenant${i}.changed`, 'ce-subject': `item-${i}` },
    body: `{"tenant":${i % 50},"item":${i},"note":"an event of a type olm-medic has never seen"}`,
  };
}

function configMap(name: string, namespace: string, n: number): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, uid: `9a8b7c6d-5e4f-4a3b-8c2d-${String(n).padStart(12, '0')}`, resourceVersion: String(700_000 + n), labels: { 'app.kubernetes.io/name': 'payments-api' } },
    data: { 'application.yaml': `server:\n  port: 8080\nfeatures:\n  checkout: true\n  revision: ${n}\n`, LOG_LEVEL: 'info' },
  };
}

/** Wanted events: a body template whose resourceVersion is filled in per request. */
interface Template {
  headers: Record<string, string>;
  pre: string;
  post: string;
}

function template(verb: 'update', obj: KubeObj): Template {
  obj.metadata.resourceVersion = '__RV__';
  const ev = apiServerEvent(verb, obj);
  const [pre, post] = ev.body.split('__RV__') as [string, string];
  return { headers: ev.headers, pre, post };
}

function wantedTemplates(): { subs: Template[]; pods: Template[] } {
  const subs = SUBS.map((name, i) =>
    template('update', {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name, namespace: NS, uid: `5d4c3b2a-1f0e-4d9c-8b7a-${String(i).padStart(12, '0')}`, generation: 1 },
      spec: { channel: 'stable', installPlanApproval: 'Automatic', name: `pkg-${name}`, source: 'bench-catalog', sourceNamespace: CATALOG_NS },
      status: { lastUpdated: '2026-11-20T09:14:00Z' },
    }),
  );
  const pods = NODES.map((nodeName, i) =>
    template('update', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `bench-catalog-${i}x7k2p`,
        namespace: CATALOG_NS,
        uid: `6e5d4c3b-2a1f-4e0d-9c8b-${String(i).padStart(12, '0')}`,
        labels: { 'olm.catalogSource': 'bench-catalog', 'olm.managed': 'true' },
        ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', name: 'bench-catalog', uid: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', controller: true, blockOwnerDeletion: false }],
      },
      spec: { nodeName, containers: [{ name: 'registry-server', image: 'quay.io/operatorhubio/catalog:latest', ports: [{ name: 'grpc', containerPort: 50051, protocol: 'TCP' }] }] },
      // NotReady (its probe failing) on a Ready node: looked at (get Node), then noop. A Ready one is decided from the event.
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }] },
    }),
  );
  return { subs, pods };
}

interface Sample {
  t: number;
  rss: number;
}

/** What one server did under the stream. */
interface StreamRun {
  samples: Sample[];
  statuses: Map<number, number>;
  errors: number;
  elapsed: number;
  wantedSent: number;
}

interface StreamSpec {
  total: number;
  rate: number;
  concurrency: number;
  withWanted: boolean;
  unwanted: (HttpEvent | undefined)[];
  wanted: { subs: Template[]; pods: Template[] };
  log: (line: string) => void;
}

/**
 * Sends the stream to one server: `total` events paced at `rate`/s over `concurrency` keep-alive
 * connections (1 in 100 a wanted event with a fresh resourceVersion, the rest cycling through the
 * unwanted pool), sampling the server's VmRSS every 250 ms. Every server gets exactly this.
 */
async function stream(port: number, pid: number, spec: StreamSpec, who: string): Promise<StreamRun> {
  const { total, rate, concurrency, withWanted, unwanted, wanted } = spec;
  const samples: Sample[] = [];
  const t0 = performance.now();
  const timer = setInterval(() => {
    const rss = rssBytes(pid);
    if (rss !== undefined) samples.push({ t: (performance.now() - t0) / 1000, rss });
  }, 250);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const statuses = new Map<number, number>();
  let errors = 0;
  let next = 0;
  let wantedSent = 0;
  let rv = 10_000_000;
  let lastLog = performance.now();
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      const due = t0 + (i / rate) * 1000;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      let headers: Record<string, string>;
      let body: string;
      if (withWanted && i % 100 === 50) {
        const k = wantedSent++;
        const tpl = k % 2 === 0 ? wanted.subs[(k >> 1) % wanted.subs.length]! : wanted.pods[(k >> 1) % wanted.pods.length]!;
        headers = tpl.headers;
        body = `${tpl.pre}${++rv}${tpl.post}`;
      } else {
        const ev = unwanted[i % unwanted.length] ?? distinctTypeEvent(i);
        headers = ev.headers;
        body = ev.body;
      }
      try {
        const res = await pool.request({ path: '/', method: 'POST', headers, body });
        await res.body.dump();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      } catch {
        errors++;
      }
      if (performance.now() - lastLog > 30_000) {
        lastLog = performance.now();
        const el = (lastLog - t0) / 1000;
        spec.log(`${who}: ${i + 1}/${total} events in ${el.toFixed(0)} s (${((i + 1) / el).toFixed(0)}/s), RSS ${((samples.at(-1)?.rss ?? 0) / MB).toFixed(1)} MB`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    clearInterval(timer);
    await pool.close().catch(() => undefined);
  }
  return { samples, statuses, errors, elapsed: (performance.now() - t0) / 1000, wantedSent };
}

const r1 = (x: number): number => Math.round(x * 10) / 10;
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Answers outside 2xx in a status count. */
const non2xxOf = (statuses: Map<number, number>): number => [...statuses].filter(([s]) => s < 200 || s > 299).reduce((a, [, n]) => a + n, 0);

/** Peak RSS, the mean of each tenth of the samples, growth first → last and 2nd → last tenth (%). */
function rssFigures(startRss: number, endRss: number, samples: Sample[]): { peak: number; tenthsMB: string; growth: number; growthFrom2nd: number; firstTenth: number; lastTenth: number } {
  const rssList = samples.map((s) => s.rss);
  const tenth = Math.max(1, Math.floor(rssList.length / 10));
  const firstTenth = mean(rssList.slice(0, tenth));
  const lastTenth = mean(rssList.slice(-tenth));
  const byTenth = Array.from({ length: 10 }, (_, k) => mean(rssList.slice(Math.floor((k * rssList.length) / 10), Math.max(Math.floor((k * rssList.length) / 10) + 1, Math.floor(((k + 1) * rssList.length) / 10)))));
  return {
    peak: Math.max(startRss, endRss, ...rssList),
    tenthsMB: byTenth.map((x) => r1(x / MB)).join(' '),
    growth: ((lastTenth - firstTenth) / firstTenth) * 100,
    growthFrom2nd: ((byTenth[9]! - byTenth[1]!) / byTenth[1]!) * 100,
    firstTenth,
    lastTenth,
  };
}

/**
 * A baseline server (bench/fixtures/<file>, plain `node`, no flags) under the same stream: its
 * start (1 s after its first answer), peak, by-tenth and growth figures, as olm-medic's.
 */
async function baselineRun(file: string, who: string, spec: StreamSpec, logDir: string): Promise<{ start: number; end: number; run: StreamRun; figures: ReturnType<typeof rssFigures> }> {
  const port = await freePort();
  const child = spawnNode([join(fixturesDir, file)], { env: { PORT: String(port) }, logFile: join(logDir, `${file}.log`) });
  try {
    await postUntilAnswered(port, spec.unwanted[0]!, { pollMs: 20, alive: child.running, what: who });
    await sleep(1_000);
    const start = rssBytes(child.pid) ?? 0;
    const run = await stream(port, child.pid, spec, who);
    const end = rssBytes(child.pid) ?? run.samples.at(-1)?.rss ?? 0;
    if (!child.running()) throw new Error(`${who} exited during the run:\n${child.tail()}`);
    return { start, end, run, figures: rssFigures(start, end, run.samples) };
  } finally {
    await child.stop();
  }
}

async function metric(port: number, name: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^(\S+?)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (m && m[1] === name) out[m[2] ?? ''] = Number(m[3]);
  }
  return out;
}

/**
 * After the measurement: activates the server's inspector (SIGUSR1, on the --inspect-port it was
 * given), forces two full GCs and reads process.memoryUsage(): the heap still reachable, which
 * tells a leak from garbage V8 had not collected yet. Nothing of this runs during the sampling.
 */
async function retainedAfterGc(pid: number, inspectPort: number): Promise<{ heapUsed: number; rss: number }> {
  process.kill(pid, 'SIGUSR1');
  let wsUrl = '';
  for (let i = 0; i < 100 && !wsUrl; i++) {
    try {
      const list = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as { webSocketDebuggerUrl?: string }[];
      wsUrl = list[0]?.webSocketDebuggerUrl ?? '';
    } catch {
      await sleep(50);
    }
  }
  if (!wsUrl) throw new Error('inspector did not come up');
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('inspector websocket failed'));
  });
  let id = 0;
  const pending = new Map<number, (r: unknown) => void>();
  ws.onmessage = (m: MessageEvent) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  };
  const call = (method: string, params: Record<string, unknown> = {}): Promise<unknown> =>
    new Promise((resolve) => {
      const n = ++id;
      pending.set(n, resolve);
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const r = (await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true })) as { result: { value: string } };
    const mu = JSON.parse(r.result.value) as { heapUsed: number; rss: number };
    return { heapUsed: mu.heapUsed, rss: mu.rss };
  } finally {
    ws.close();
  }
}

/** V8 heap figures from the server's own /metrics (prom-client default metrics). */
async function heap(port: number): Promise<{ used: number; total: number; newSpace: number }> {
  const [used, total, spaces] = [
    await metric(port, 'olm_medic_nodejs_heap_size_used_bytes'),
    await metric(port, 'olm_medic_nodejs_heap_size_total_bytes'),
    await metric(port, 'olm_medic_nodejs_heap_space_size_total_bytes'),
  ];
  return { used: used[''] ?? 0, total: total[''] ?? 0, newSpace: spaces['{space="new"}'] ?? 0 };
}

export const bench: Benchmark = {
  name: 'memory',
  description: 'RSS of olm-medic (real control plane) over 1,000,000 mixed ApiServerSource events (1 % cause reads): start, peak, end, growth',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const total = Number(process.env.OLM_MEDIC_BENCH_MEMORY_EVENTS) || (ctx.smoke ? 20_000 : 1_000_000);
    const rate = ctx.smoke ? 2_000 : 3_800; // events/s offered; 1M in ~4.4 min
    const concurrency = 32;
    // Exploration only: OLM_MEDIC_BENCH_MEMORY_NO_WANTED=1 sends unwanted events alone.
    const withWanted = !process.env.OLM_MEDIC_BENCH_MEMORY_NO_WANTED;
    // Exploration only: OLM_MEDIC_BENCH_MEMORY_NO_BASELINES=1 measures olm-medic alone.
    const withBaselines = !process.env.OLM_MEDIC_BENCH_MEMORY_NO_BASELINES;
    const scratch = scratchDir('memory');
    let cp: ControlPlane | undefined;
    let medic: Child | undefined;
    try {
      cp = await startControlPlane({ users: { [USER]: ['system:masters'] }, log: ctx.log });
      await seed(cp);
      const unwanted = unwantedPool();
      const wanted = wantedTemplates();
      writeFileSync(join(scratch.dir, 'sample-events.json'), JSON.stringify({ unwanted: unwanted.slice(0, 100), wanted }, null, 2));
      const spec: StreamSpec = { total, rate, concurrency, withWanted, unwanted, wanted, log: ctx.log };

      const port = await freePort();
      // Exploration only (never set by npm run bench): extra Node flags for the server, e.g. heap sizing.
      const nodeOptions = process.env.OLM_MEDIC_BENCH_SERVER_NODE_OPTIONS;
      // --inspect-port only chooses the port SIGUSR1 would open; the inspector stays off until the end.
      const inspectPort = await freePort();
      // serverEnv() carries OLM_MEDIC_BENCH_SERVER_ENV (exploration only), as in every benchmark.
      const env: Record<string, string> = { ...serverEnv(), PORT: String(port), KUBECONFIG: cp.user(USER).kubeconfig, LOG_LEVEL: 'info', NODE_OPTIONS: `--inspect-port=127.0.0.1:${inspectPort}${nodeOptions ? ` ${nodeOptions}` : ''}` };
      medic = spawnNode(serverEntry(), { env, logFile: join(scratch.dir, 'medic.log') });
      const first = await postUntilAnswered(port, unwanted[0]!, { pollMs: 20, alive: medic.running, what: 'olm-medic' });
      if (first.status !== 200) throw new Error(`olm-medic answered ${first.status}: ${first.body}`);
      await sleep(1_000);
      const pid = medic.pid;
      const startRss = rssBytes(pid) ?? 0;
      const startHeap = await heap(port);
      const { samples, statuses, errors, elapsed, wantedSent } = await stream(port, pid, spec, 'olm-medic');
      const endRss = rssBytes(pid) ?? samples.at(-1)?.rss ?? 0;
      if (!medic.running()) throw new Error(`olm-medic exited during the run:\n${medic.tail()}`);

      const events = await metric(port, 'olm_medic_cloudevents_total');
      const endHeap = await heap(port);
      const gc = await retainedAfterGc(pid, inspectPort).catch((e: unknown) => {
        ctx.log(`full-GC probe failed: ${e instanceof Error ? e.message : e}`);
        return undefined;
      });
      const byOutcome: Record<string, number> = {};
      for (const [labels, v] of Object.entries(events)) {
        const o = /outcome="([^"]+)"/.exec(labels)?.[1] ?? '?';
        byOutcome[o] = (byOutcome[o] ?? 0) + v;
      }
      const reads = cp.requestsBy(USER);
      const readVerbs: Record<string, number> = {};
      for (const r of reads) readVerbs[`${r.verb} ${r.objectRef?.resource ?? ''} ${r.responseStatus?.code ?? ''}`] = (readVerbs[`${r.verb} ${r.objectRef?.resource ?? ''} ${r.responseStatus?.code ?? ''}`] ?? 0) + 1;
      const non2xx = non2xxOf(statuses);

      const { peak, tenthsMB, growth, growthFrom2nd, firstTenth, lastTenth } = rssFigures(startRss, endRss, samples);
      ctx.log(`olm-medic: by tenth ${tenthsMB} MB, growth ${growth.toFixed(2)} %`);
      await medic.stop();

      // The baselines, one after the other, under the same stream (no apiserver: they only echo).
      const baselines: { key: string; who: string; start: number; end: number; run: StreamRun; figures: ReturnType<typeof rssFigures> }[] = [];
      if (withBaselines) {
        for (const [key, file, who] of [
          ['expressEcho', 'express-echo.mjs', 'express+cloudevents echo'],
          ['bareEcho', 'node-echo.mjs', 'bare node:http echo'],
        ] as const) {
          const b = await baselineRun(file, who, spec, scratch.dir);
          ctx.log(`${who}: start ${r1(b.start / MB)} MB, peak ${r1(b.figures.peak / MB)} MB, by tenth ${b.figures.tenthsMB} MB, growth ${b.figures.growth.toFixed(2)} %`);
          baselines.push({ key, who, ...b });
        }
      }
      const baselineNon2xx = baselines.reduce((a, b) => a + b.run.errors + non2xxOf(b.run.statuses), 0);
      const baselineMetrics: Record<string, number | string> = {};
      for (const b of baselines) {
        baselineMetrics[`${b.key} start/peak/end RSS MB`] = `${r1(b.start / MB)} / ${r1(b.figures.peak / MB)} / ${r1(b.end / MB)}`;
        baselineMetrics[`${b.key} rssByTenthMB`] = b.figures.tenthsMB;
        baselineMetrics[`${b.key} growth first → last tenth (%)`] = Math.round(b.figures.growth * 100) / 100;
        baselineMetrics[`${b.key} growth 2nd → last tenth (%)`] = Math.round(b.figures.growthFrom2nd * 100) / 100;
        baselineMetrics[`peak RSS ratio olm-medic / ${b.key}`] = Math.round((peak / b.figures.peak) * 100) / 100;
        baselineMetrics[`${b.key} events/s achieved`] = Math.round(total / b.run.elapsed);
      }
      ctx.log(`done: ${total} events in ${elapsed.toFixed(1)} s; RSS start ${r1(startRss / MB)} MB, peak ${r1(peak / MB)} MB, end ${r1(endRss / MB)} MB; outcomes ${JSON.stringify(byOutcome)}; apiserver requests ${reads.length}`);
      return {
        name: 'memory',
        metrics: {
          events: total,
          wantedEvents: wantedSent,
          seconds: r1(elapsed),
          eventsPerSec: Math.round(total / elapsed),
          startRssMB: r1(startRss / MB),
          peakRssMB: r1(peak / MB),
          endRssMB: r1(endRss / MB),
          firstTenthMeanRssMB: r1(firstTenth / MB),
          lastTenthMeanRssMB: r1(lastTenth / MB),
          startHeapUsedMB: r1(startHeap.used / MB),
          endHeapUsedMB: r1(endHeap.used / MB),
          startHeapTotalMB: r1(startHeap.total / MB),
          endHeapTotalMB: r1(endHeap.total / MB),
          endNewSpaceMB: r1(endHeap.newSpace / MB),
          endHeapUsedAfterFullGcMB: gc ? r1(gc.heapUsed / MB) : 'n/a',
          endRssAfterFullGcMB: gc ? r1(gc.rss / MB) : 'n/a',
          rssSamples: samples.length,
          'rssByTenthMB (mean of each 10 % of samples)': tenthsMB,
          'growth 2nd → last tenth (%)': Math.round(growthFrom2nd * 100) / 100,
          non2xx,
          connectionErrors: errors,
          apiserverRequestsByMedic: reads.length,
          outcomes: Object.entries(byOutcome).map(([k, v]) => `${k}=${v}`).join(' '),
          ...baselineMetrics,
          baselineNon2xxAndErrors: baselineNon2xx,
        },
        targets: [
          { name: 'peak RSS (MB)', value: r1(peak / MB), target: '< 110', pass: peak / MB < 110 },
          { name: 'RSS growth first 10 % → last 10 % of samples (%)', value: Math.round(growth * 100) / 100, target: '< 3', pass: growth < 3 },
          { name: 'non-2xx answers', value: non2xx + errors, target: '== 0', pass: non2xx + errors === 0 },
        ],
        notes: [
          ...explorationNotes(),
          ...(withWanted ? [] : ['EXPLORATION RUN: no wanted events (OLM_MEDIC_BENCH_MEMORY_NO_WANTED)']),
          ...(withBaselines ? [] : ['EXPLORATION RUN: no baselines (OLM_MEDIC_BENCH_MEMORY_NO_BASELINES)']),
          `npm start's command (${Object.entries(serverEnv()).map(([k, v]) => `${k}=${v} `).join('')}node ${serverEntry().slice(0, -1).join(' ')} scripts/start.mjs -> dist/server.mjs) (LOG_LEVEL=info, KUBECONFIG of user ${USER}, system:masters) on a real control plane with OLM's CRDs; seeded ${SUBS.length} Subscriptions (no status) and ${NODES.length} Ready Nodes.`,
          `Mix: 1 in 100 events is wanted — alternately a Subscription update without installPlanRef (job-conflict: get Subscription + list Jobs → noop) and a NotReady catalog-labelled Pod update on a Ready Node (catalog-reschedule: get Node → noop), each with a fresh resourceVersion; the other 99 need no action: they cycle through ${unwanted.filter(Boolean).length} distinct events (per 99: 40 unlabelled Pod updates ~4 KB incl. managedFields, 5 Pod add/delete, 15 CronJob Jobs, 14 ConfigMaps, 15 Ready catalog registry pod updates ~6 KB, 5 copied CSVs ~60 KB) plus 5 events each of a CloudEvent type never seen before (com.example.tenant<i>.changed, ${Math.round(total * 0.05).toLocaleString('en')} distinct types in the run).`,
          `Load: undici Pool, ${concurrency} keep-alive connections, paced at ${rate} events/s offered (achieved ${Math.round(total / elapsed)}/s) from the runner process; VmRSS from /proc/${'<pid>'}/status every 250 ms (${samples.length} samples); start = 1 s after the first answer, before the load; growth compares the mean of the first and last 10 % of samples.`,
          `Heap: used ${r1(startHeap.used / MB)} MB before the load; at the end ${r1(endHeap.used / MB)} MB used of ${r1(endHeap.total / MB)} MB (new space ${r1(endHeap.newSpace / MB)} MB)${gc ? `, ${r1(gc.heapUsed / MB)} MB still reachable after two forced full GCs (inspector opened with SIGUSR1 after the sampling; the server was started with NODE_OPTIONS=--inspect-port=…, which opens nothing by itself)` : ''}.`,
          `apiserver requests by ${USER} (audit log): ${Object.entries(readVerbs).map(([k, v]) => `${k.trim()}: ${v}`).join(', ') || 'none'}.`,
          ...(withBaselines
            ? [
                `Baselines, after olm-medic was stopped, one at a time under the same stream (same events incl. the wanted ones, same pace and connections; they echo every event back, so they send more bytes than olm-medic's empty answers): ${baselines.map((b) => `${b.who} (bench/fixtures/, plain node, no flags) start ${r1(b.start / MB)} MB, peak ${r1(b.figures.peak / MB)} MB, growth ${b.figures.growth.toFixed(2)} % (by tenth ${b.figures.tenthsMB})`).join('; ')}. The growth of every server is mostly its warm-up landing in the first tenth.`,
              ]
            : []),
        ],
      };
    } finally {
      await medic?.stop();
      await cp?.stop();
      scratch.cleanup();
    }
  },
};
