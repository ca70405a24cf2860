/**
 * One full sweep at scale. A local control plane is seeded through the API (admin, 32 in flight)
 * with N namespaces holding healthy OLM installs — per namespace an OperatorGroup, a Subscription
 * with status pointing at its InstallPlan, that InstallPlan (owned by the Subscription, component
 * label set), a Succeeded CSV carrying OLM's csv-cleanup finalizer — and, in every 4th namespace,
 * a CatalogSource, its unpack ConfigMap, a Complete unpack Job and a catalog pod on a Ready node
 * (full: 10,000 namespaces / 50,000 objects; smoke: 200 / 1,000). Nothing needs repair, so the
 * sweep is pure overhead: its wall time and peak RSS are measured on the shipped CLI
 * (`bin/olm-medic.mjs sweep --dry-run -o json`, the shipped CLI, as the shipped function ServiceAccount), its
 * requests counted in the audit log. Baseline, run right after on the same data: one paginated
 * pass over exactly the lists the sweep walks (in-process, same identity, no per-target reads).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Benchmark, BenchContext, BenchResult, Target } from './types.js';
import { countBy, formatCounts, limitOf, requestKey, type AuditRecord } from './lib/audit.js';
import { SHIPPED_USER, sleep, startStack, Teardown } from './lib/stack.js';
import * as olm from '../test/fixtures/olm-objects.js';
import { createKube, loadKubeConfig } from '../shared/kube/client.js';
import type { Kube, KubeObject } from '../shared/kube/types.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = 32;
const READY_NODE = 'worker-ready-0';
const V1A1 = olm.OPERATORS_V1ALPHA1;

type Obj = Record<string, any>;

/** Which function issues a request, from its resource (every kind belongs to one function's sweep/observe here). */
function functionOf(e: AuditRecord): string {
  switch (e.objectRef?.resource) {
    case 'jobs':
    case 'configmaps':
    case 'catalogsources':
    case 'operatorgroups':
      return 'job-conflict';
    case 'subscriptions':
    case 'installplans':
      return 'ownerref-repair';
    case 'pods':
    case 'nodes':
      return 'catalog-reschedule';
    case 'clusterserviceversions':
    case 'clusterroles':
    case 'clusterrolebindings':
    case 'validatingwebhookconfigurations':
    case 'mutatingwebhookconfigurations':
    case 'apiservices':
    case 'operators':
      return 'finalizer-cleanup';
    case 'events':
      return 'executor (Events)';
    default:
      return `other (${e.objectRef?.resource ?? '?'})`;
  }
}

async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>, progress: (done: number) => void): Promise<void> {
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      await task(i);
      progress(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
}

interface SeedStats {
  namespaces: number;
  objects: number;
  requests: number;
  byKind: Record<string, number>;
}

async function seed(admin: Kube, namespaces: number, log: (l: string) => void): Promise<SeedStats> {
  const stats: SeedStats = { namespaces, objects: 0, requests: 0, byKind: {} };
  const create = async (o: Obj): Promise<KubeObject> => {
    stats.requests++;
    const r = await admin.create(o as KubeObject, { dryRun: false });
    if (o.kind !== 'Namespace') {
      stats.objects++;
      stats.byKind[o.kind] = (stats.byKind[o.kind] ?? 0) + 1;
    }
    return r;
  };
  const status = async (o: KubeObject, st: Obj): Promise<void> => {
    stats.requests++;
    await admin.mergePatch({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace }, { status: st }, { dryRun: false, subresource: 'status' });
  };
  const hourAgo = new Date(Date.now() - 3_600_000);
  await admin.create(olm.node({ name: READY_NODE, ready: true, since: hourAgo }) as KubeObject, { dryRun: false });
  let lastPct = 0;
  await pool(
    namespaces,
    CONCURRENCY,
    async (i) => {
      const ns = `tenant-${String(i).padStart(5, '0')}`;
      const pkg = `operator-${i % 97}`;
      const csvName = `${pkg}.v1.${i % 7}.0`;
      await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await create(olm.operatorGroup({ namespace: ns, name: 'og', targetNamespaces: [ns] }));
      const sub = await create(olm.subscription({ namespace: ns, name: pkg, package: pkg, source: 'operatorhubio-catalog', sourceNamespace: 'olm', channel: 'stable' }));
      const ip = await create(olm.installPlan({ namespace: ns, name: `install-${i.toString(36)}`, csvNames: [csvName], ownerSubs: [{ name: pkg, uid: sub.metadata.uid! }], labels: olm.componentLabels(pkg, ns) }));
      await status(sub, olm.subscriptionStatus({
        currentCSV: csvName,
        installedCSV: csvName,
        installPlan: { name: ip.metadata.name, namespace: ns, uid: ip.metadata.uid! },
        state: 'AtLatestKnown',
        installPlanGeneration: 1,
        at: hourAgo,
      }));
      const csv = await create(olm.csv({ namespace: ns, name: csvName, phase: 'Succeeded', finalizers: [olm.CSV_CLEANUP_FINALIZER], labels: olm.componentLabels(pkg, ns) }));
      await status(csv, olm.csvStatus({ phase: 'Succeeded', at: hourAgo }));
      if (i % 4 === 0) {
        const image = `quay.io/example/${pkg}-bundle:v1.${i % 7}.0`;
        const catalogImage = 'quay.io/operatorhubio/catalog:latest';
        const cs = await create(olm.catalogSource({ namespace: ns, name: 'catalog', image: catalogImage }));
        const cm = await create(olm.unpackConfigMap({ namespace: ns, image, catalogSourceName: 'catalog', catalogSourceUid: cs.metadata.uid! }));
        const job = await create(olm.unpackJob({ namespace: ns, image, configMapUid: cm.metadata.uid! }));
        await status(job, olm.jobStatusComplete({ at: hourAgo }));
        await create(olm.catalogPod({ namespace: ns, catalogSourceName: 'catalog', catalogSourceUid: cs.metadata.uid!, nodeName: READY_NODE, image: catalogImage }));
      }
    },
    (done) => {
      const pct = Math.floor((done / namespaces) * 10) * 10;
      if (pct > lastPct) {
        lastPct = pct;
        log(`seeded ${done}/${namespaces} namespaces (${stats.objects} objects)`);
      }
    },
  );
  return stats;
}

interface SweepRun {
  seconds: number;
  peakRssMB: number;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the shipped CLI; peak RSS from /proc/<pid>/status VmHWM (polled) and the process's own maxRSS at exit. */
async function runSweep(kubeconfig: string, timeoutMs: number): Promise<SweepRun> {
  const rssFile = join(tmpdir(), `olm-medic-bench-rss-${process.pid}-${Date.now()}`);
  const hook = `import{writeFileSync}from'node:fs';process.on('exit',()=>{try{writeFileSync(process.env.BENCH_RSS_FILE,String(process.resourceUsage().maxRSS))}catch{}});`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [`--import=data:text/javascript,${encodeURIComponent(hook)}`, join(root, 'bin', 'olm-medic.mjs'), 'sweep', '--dry-run', '-o', 'json'], {
    env: { PATH: process.env.PATH ?? '', KUBECONFIG: kubeconfig, LOG_LEVEL: 'silent', BENCH_RSS_FILE: rssFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => (stdout += d));
  proc.stderr!.on('data', (d) => (stderr += d));
  let hwmKB = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
      if (m) hwmKB = Math.max(hwmKB, Number(m[1]));
    } catch {
      /* exited */
    }
  }, 50);
  const killer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const exitCode = await new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(poll);
  clearTimeout(killer);
  if (existsSync(rssFile)) {
    hwmKB = Math.max(hwmKB, Number(readFileSync(rssFile, 'utf8')) || 0);
    rmSync(rssFile, { force: true });
  }
  return { seconds, peakRssMB: Math.round(hwmKB / 102.4) / 10, exitCode, stdout, stderr };
}

/** Baseline: only the paginated lists the sweeps walk (same selectors, same page size), no per-target work. */
async function listOnly(kube: Kube): Promise<{ seconds: number; items: number }> {
  const lists: [string, string, string?][] = [
    ['batch/v1', 'Job'],
    [V1A1, 'Subscription'],
    ['v1', 'Pod', 'olm.catalogSource'],
    [V1A1, 'ClusterServiceVersion'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'olm.owner.kind=ClusterServiceVersion'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'olm.owner.kind=ClusterServiceVersion'],
    ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'olm.owner.kind=ClusterServiceVersion'],
    ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'olm.owner.kind=ClusterServiceVersion'],
    ['apiregistration.k8s.io/v1', 'APIService', 'olm.owner.kind=ClusterServiceVersion'],
    [olm.OPERATORS_V1, 'Operator'],
  ];
  const t0 = performance.now();
  let items = 0;
  for (const [apiVersion, kind, labelSelector] of lists) {
    for await (const _ of kube.list(apiVersion, kind, labelSelector ? { labelSelector } : {})) items++;
  }
  return { seconds: (performance.now() - t0) / 1000, items };
}

export const bench: Benchmark = {
  name: 'sweep-scale',
  description: 'one full sweep (shipped CLI, shipped SA) over 10k namespaces / 50k OLM objects: time, peak RSS, paginated lists, per-target reads; vs a list-only pass',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const namespaces = ctx.smoke ? 200 : 10_000;
    const td = new Teardown();
    const metrics: BenchResult['metrics'] = {};
    const targets: Target[] = [];
    const notes: string[] = [];
    const load0 = loadavg()[0]!;
    try {
      if (!existsSync(join(root, 'dist', 'cli.mjs'))) throw new Error('dist/cli.mjs missing: run `npm run build` first (npm run bench does)');
      // No kube-controller-manager: nothing here needs GC, and its ServiceAccount controller would
      // add a write per namespace while seeding.
      const st = await startStack(td, ctx.log, { controllerManager: false });
      metrics.controlPlaneStartSeconds = Number(st.startSeconds.toFixed(1));

      const tSeed = performance.now();
      const s = await seed(st.admin, namespaces, ctx.log);
      const seedSeconds = (performance.now() - tSeed) / 1000;
      metrics.seedNamespaces = s.namespaces;
      metrics.seedObjects = s.objects;
      metrics.seedObjectsByKind = formatCounts(s.byKind);
      metrics.seedRequests = s.requests;
      metrics.seedSeconds = Number(seedSeconds.toFixed(1));
      metrics.seedRequestsPerSecond = Math.round(s.requests / seedSeconds);
      ctx.log(`seeded ${s.namespaces} namespaces, ${s.objects} objects (${s.requests} requests) in ${seedSeconds.toFixed(1)} s`);

      await sleep(500);
      const from = st.audit.size();
      ctx.log('running `bin/olm-medic.mjs sweep --dry-run -o json` as the shipped ServiceAccount');
      const run = await runSweep(st.fnKubeconfig, 15 * 60_000);
      await sleep(500);
      const entries = st.audit.read(from, SHIPPED_USER).entries;
      const afterSweep = st.audit.size();
      ctx.log(`sweep: ${run.seconds.toFixed(1)} s, peak RSS ${run.peakRssMB} MB, exit ${run.exitCode}, ${entries.length} requests`);

      let parsed: { dryRun?: boolean; outcomes?: { function?: string; status: string; target?: string; reason: string }[]; total?: number } = {};
      try {
        parsed = JSON.parse(run.stdout);
      } catch {
        // Never a silent zero: a sweep that printed no result measured nothing.
        throw new Error(`sweep output was not JSON (exit ${run.exitCode}): ${run.stdout.slice(0, 300)} ${run.stderr.slice(0, 500)}`);
      }
      metrics.sweepSeconds = Number(run.seconds.toFixed(2));
      metrics.sweepPeakRssMB = run.peakRssMB;
      metrics.sweepExitCode = run.exitCode ?? -1;
      metrics.sweepTargetsChecked = parsed.total ?? -1;
      const findings = parsed.outcomes ?? [];
      metrics.sweepFindings = findings.length;
      metrics.sweepOutcomes = `${parsed.total ?? '?'} checked; findings: ${formatCounts(countBy(findings, (o) => `${o.function ?? '-'} ${o.status}`))}`;
      if (findings.length) notes.push(`sweep findings (first 5): ${findings.slice(0, 5).map((o) => `${o.function} ${o.target} ${o.status}: ${o.reason}`).join(' | ')}`);

      // Requests, from the audit log.
      const lists = entries.filter((e) => e.verb === 'list');
      const clusterLists = lists.filter((e) => !e.objectRef?.namespace);
      const unpaginated = lists.filter((e) => limitOf(e.requestURI) === undefined);
      const limits = [...new Set(lists.map((e) => limitOf(e.requestURI) ?? 'none'))].join(', ');
      const gets = entries.filter((e) => e.verb === 'get');
      metrics.requestsTotal = entries.length;
      metrics.requestsByKind = formatCounts(countBy(entries, requestKey));
      metrics.listRequests = lists.length;
      metrics.listRequestsClusterWide = clusterLists.length;
      metrics.listRequestsPerTarget = lists.length - clusterLists.length;
      metrics.listRequestsWithoutLimit = unpaginated.length;
      metrics.listLimits = limits;
      metrics.clusterWideListPages = formatCounts(countBy(clusterLists, (e) => `${e.objectRef?.resource}${new URLSearchParams(e.requestURI.split('?')[1] ?? '').get('labelSelector') ? ' (label-selected)' : ''}`));
      metrics.getRequests = gets.length;
      const perFn = countBy(entries, functionOf);
      for (const [fn, n] of Object.entries(perFn)) metrics[`requests ${fn}`] = n;
      for (const [fn, n] of Object.entries(countBy(gets, functionOf))) metrics[`GETs ${fn}`] = n;
      const throttled = entries.filter((e) => (e.responseStatus?.code ?? 0) === 429 || (e.responseStatus?.code ?? 0) >= 500).length;
      if (throttled) metrics.requests429or5xx = throttled;
      const forbidden = entries.filter((e) => e.responseStatus?.code === 403);
      if (forbidden.length) notes.push(`${forbidden.length} requests were forbidden: ${[...new Set(forbidden.map(requestKey))].join(', ')}`);

      // Time spent per function: the sweeps run one function after another.
      const ts = (e: AuditRecord): number => Date.parse(e.requestReceivedTimestamp ?? '');
      const phases: string[] = [];
      for (const fn of Object.keys(perFn)) {
        const xs = entries.filter((e) => functionOf(e) === fn).map(ts).filter(Number.isFinite);
        if (xs.length) {
          const secs = (Math.max(...xs) - Math.min(...xs)) / 1000;
          metrics[`phase seconds ${fn}`] = Number(secs.toFixed(2));
          phases.push(`${fn} ${secs.toFixed(1)} s`);
        }
      }

      // Baseline: the same lists, nothing else, same identity, in-process.
      const fnKube = createKube(loadKubeConfig(st.fnKubeconfig), { timeoutMs: 60_000 });
      const base = await listOnly(fnKube);
      metrics.baselineListOnlySeconds = Number(base.seconds.toFixed(2));
      metrics.baselineListOnlyItems = base.items;
      metrics['sweep / list-only time ratio'] = Number((run.seconds / base.seconds).toFixed(1));
      const baseEntries = st.audit.read(afterSweep, SHIPPED_USER).entries;
      metrics.baselineListOnlyRequests = baseEntries.length;

      targets.push({ name: `sweep wall time, ${namespaces} namespaces`, value: Number(run.seconds.toFixed(1)), target: '< 60 s', pass: run.seconds < 60 && run.exitCode !== null && run.exitCode !== 1 });
      targets.push({ name: 'list requests without limit= (unpaginated)', value: unpaginated.length, target: '= 0', pass: unpaginated.length === 0 });
      targets.push({ name: 'findings on a healthy cluster', value: findings.length, target: '= 0', pass: findings.length === 0 });

      const ip = perFn['ownerref-repair'] ?? 0;
      const jc = perFn['job-conflict'] ?? 0;
      notes.push(
        `Seeding (reported apart): ${s.namespaces} namespaces, ${s.objects} objects (${formatCounts(s.byKind)}), ${s.requests} requests incl. status patches, ${CONCURRENCY} in flight as admin, ${seedSeconds.toFixed(0)} s; control plane without kube-controller-manager.`,
        `Sweep: shipped CLI (bin/olm-medic.mjs -> dist/cli.mjs, SWEEP_CONCURRENCY default 8, ${parsed.total ?? '?'} targets checked), exit ${run.exitCode}; ${entries.length} requests by ${SHIPPED_USER}: ${formatCounts(countBy(entries, requestKey))}. Per function: ${formatCounts(perFn)}. Phases: ${phases.join(', ')}.`,
        `Lists: ${lists.length} (${clusterLists.length} cluster-wide sweep pages, ${lists.length - clusterLists.length} per-target namespaced lists), limit= values: ${limits}; unpaginated: ${unpaginated.length}.`,
        `Per-target reads (N+1): ownerref-repair re-reads every InstallPlan a Subscription points at (GET) and lists its namespace's Subscriptions (${ip} requests for ${s.byKind.Subscription ?? 0} Subscriptions, although the sweep already listed every Subscription); ` +
          `job-conflict GETs every unpack Job it just listed and its ConfigMap (${jc} requests for ${s.byKind.Job ?? 0} Jobs); catalog-reschedule reads each distinct node once; finalizer-cleanup decides from the lists alone.`,
        'What would remove the N+1: let sweep() hand observe() what it already listed (the Subscriptions of a namespace grouped from the cluster-wide list; the listed Job object), and list InstallPlans and ConfigMaps cluster-wide once (paginated) and join in memory, ' +
          'reading per target only when the plan is about to act (the executor\'s uid+rv preconditions keep that safe). That turns ~2 requests per target into a few dozen pages in total; see the list-only baseline for the floor.',
      );
      notes.push(`Host load (1-min average) at start ${load0.toFixed(1)}, at end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores (other work on the machine shares them).`);
      return { name: 'sweep-scale', metrics, targets, notes };
    } finally {
      await td.run(ctx.log);
    }
  },
};
