/**
 * Heal latency with the real event path, as `npm run demo` wires it: a local control plane,
 * Knative's ApiServerSource receive adapter (configured from infra/, as the shipped source
 * ServiceAccount) delivering to dist/server.mjs (as the shipped function ServiceAccount).
 * For each of the five seed situations, repeatedly: create it through the API; "made observable"
 * is the moment the seed's last write returned (for a seed with a trigger, the moment
 * trigger.act() returned); "repaired" is the moment situation.healed() first returned true,
 * polled every 5 ms. Reported per situation: p50/p99 (and max) in ms; target p99 < 1000 ms.
 */
import { cpus, loadavg } from 'node:os';
import type { Benchmark, BenchContext, BenchResult, Target } from './types.js';
import { median, percentile } from './types.js';
import { randomId, sleep, startStack, Teardown } from './lib/stack.js';
import { renderInfra } from '../test/control-plane/shipped-identity.js';
import { startAdapter, waitForEveryKind } from '../test/support/adapter.js';
import { startServer } from '../test/support/server.js';
import { seeds, type Situation } from '../test/scenarios/seeds.js';

const POLL_MS = 5;
const TIMEOUT_MS = 30_000;

interface Sample {
  ms: number;
  /** healed() was already true at the first probe: the latency is at most one probe's duration. */
  atFirstProbe: boolean;
  timedOut: boolean;
  seedMs: number;
  probeMs: number[];
}

export const bench: Benchmark = {
  name: 'heal-latency',
  description: 'fault made observable -> repaired, real Knative adapter + server on a local control plane, p50/p99 per seed situation',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const reps = ctx.smoke ? 5 : 50;
    const td = new Teardown();
    const metrics: BenchResult['metrics'] = {};
    const targets: Target[] = [];
    const notes: string[] = [];
    const load0 = loadavg()[0]!;
    try {
      const st = await startStack(td, ctx.log);
      const admin = st.admin;
      // The action budget (30/min by default) is a safety cap for real clusters; this bench repairs
      // ~2 situations per second on purpose, so it is lifted (otherwise it measures the budget).
      const server = await startServer({ KUBECONFIG: st.fnKubeconfig, LOG_LEVEL: 'info', MAX_ACTIONS_PER_WINDOW: '100000' });
      td.add('server', () => server.stop());
      const source = renderInfra(st.cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource');
      if (!source) throw new Error('no ApiServerSource in infra/');
      const adapter = startAdapter(st.cp.binaries.adapter, { kubeconfig: st.sourceKubeconfig, sink: server.url, source });
      td.add('adapter', () => adapter.stop());

      // The adapter runs one informer per kind and sends nothing for objects created before that
      // kind's watch is up: wait for a canary event of EVERY watched kind (one kind alone let the first
      // repetition of another kind's situation go unseen: a 30 s timeout that measured the adapter).
      const tAdapter = performance.now();
      await waitForEveryKind(admin, server.url, source);
      metrics.adapterFirstEventSeconds = Number(((performance.now() - tAdapter) / 1000).toFixed(1));
      ctx.log(`adapter delivering; ${reps} repetitions x ${seeds.length} situations`);

      const samples = new Map<string, Sample[]>();
      const raced = new Map<string, string[]>();
      const timeoutEvidence: string[] = [];
      const names: string[] = [];
      const tRun = performance.now();
      for (let rep = 0; rep < reps; rep++) {
        for (const seed of seeds) {
          let situation: Situation | undefined;
          let tSeed = 0;
          let id = '';
          for (let attempt = 1; !situation; attempt++) {
            tSeed = performance.now();
            try {
              id = randomId(6);
              situation = await seed(admin, id);
            } catch (e) {
              // A seed's own later write can find its object already removed by olm-medic acting on
              // an earlier event of the same seed: not measurable (it was "repaired" before it was
              // made observable). Counted and reported; the repetition is redone with a fresh id.
              if ((e as { notFound?: boolean }).notFound !== true || attempt >= 3) throw e;
              raced.set(seed.name, [...(raced.get(seed.name) ?? []), e instanceof Error ? e.message : String(e)]);
            }
          }
          let t0 = performance.now();
          const seedMs = t0 - tSeed;
          if (situation.trigger) {
            const deadline = Date.now() + TIMEOUT_MS;
            while (!(await situation.trigger.ready())) {
              if (Date.now() > deadline) throw new Error(`${situation.name}: olm-medic did not prepare within ${TIMEOUT_MS} ms\n${server.output().slice(-2000)}`);
              await sleep(POLL_MS);
            }
            await situation.trigger.act();
            t0 = performance.now();
          }
          const probeMs: number[] = [];
          let sample: Sample | undefined;
          for (let probe = 0; !sample; probe++) {
            const p0 = performance.now();
            const ok = await situation.healed();
            const t = performance.now();
            probeMs.push(t - p0);
            if (ok) sample = { ms: t - t0, atFirstProbe: probe === 0, timedOut: false, seedMs, probeMs };
            else if (t - t0 > TIMEOUT_MS) {
              sample = { ms: t - t0, atFirstProbe: false, timedOut: true, seedMs, probeMs };
              // Evidence for the report: what the server logged about this situation's objects, and adapter errors.
              const mine = server.output().split('\n').filter((l) => l.includes(id)).map((l) => l.slice(0, 400));
              const adapterErrors = adapter.output().split('\n').filter((l) => /error|fail/i.test(l)).slice(-5).map((l) => l.slice(0, 300));
              timeoutEvidence.push(`${situation.name} (id ${id}) not healed after ${TIMEOUT_MS / 1000} s. Server log lines for it (${mine.length}): ${mine.slice(-8).join(' | ') || '(none: no event about it was handled)'}. Recent adapter errors: ${adapterErrors.join(' | ') || '(none)'}`);
              ctx.log(timeoutEvidence[timeoutEvidence.length - 1]!);
            } else await sleep(POLL_MS);
          }
          if (!samples.has(situation.name)) {
            samples.set(situation.name, []);
            names.push(situation.name);
          }
          samples.get(situation.name)!.push(sample);
        }
        if ((rep + 1) % 10 === 0 || rep === reps - 1) ctx.log(`${rep + 1}/${reps} repetitions (${((performance.now() - tRun) / 1000).toFixed(0)} s)`);
      }
      metrics.repetitionsPerSituation = reps;
      metrics.measuredRunSeconds = Number(((performance.now() - tRun) / 1000).toFixed(1));

      let worst = { name: '', p99: 0 };
      let timeouts = 0;
      for (const name of names) {
        const xs = samples.get(name)!;
        const ms = xs.map((s) => s.ms);
        const p50 = percentile(ms, 50);
        const p99 = percentile(ms, 99);
        const first = xs.filter((s) => s.atFirstProbe).length;
        const out = xs.filter((s) => s.timedOut).length;
        timeouts += out;
        const probes = xs.flatMap((s) => s.probeMs);
        metrics[`${name}: p50 ms`] = round(p50);
        metrics[`${name}: p99 ms`] = round(p99);
        metrics[`${name}: max ms`] = round(Math.max(...ms));
        metrics[`${name}: seed p50 ms`] = round(median(xs.map((s) => s.seedMs)));
        metrics[`${name}: probe p50 ms`] = round(median(probes));
        if (first) metrics[`${name}: healed at first probe`] = first;
        if (out) metrics[`${name}: timeouts`] = out;
        if (p99 > worst.p99) worst = { name, p99 };
        ctx.log(`${name}: p50 ${round(p50)} ms, p99 ${round(p99)} ms, max ${round(Math.max(...ms))} ms (n=${ms.length}${first ? `, ${first} healed at the first probe` : ''}${out ? `, ${out} TIMEOUTS` : ''})`);
      }
      metrics.worstP99Ms = round(worst.p99);
      metrics.worstP99Situation = worst.name;
      targets.push({ name: `worst p99 heal latency (${worst.name})`, value: round(worst.p99), target: '< 1000 ms', pass: worst.p99 < 1000 && timeouts === 0 });
      const early = names.filter((n) => samples.get(n)!.some((x) => x.atFirstProbe));
      if (early.length) {
        notes.push(`Already healed at the first probe (the repair finished within the first probe's reads, so the latency is bounded by one probe, a few ms): ${early.map((n) => `${n} ${samples.get(n)!.filter((x) => x.atFirstProbe).length}/${reps}`).join(', ')}.`);
      }
      for (const [seedName, errs] of raced) {
        metrics[`seeds raced by the repair (${seedName})`] = errs.length;
        notes.push(
          `${errs.length} ${seedName} seed(s) failed on their own last write because olm-medic had already removed the object (${errs[0]}) and were redone. ` +
            (seedName === 'uninstallLeftovers'
              ? 'Cause: the seed creates the Operator with olm-medic.io/uninstall=true before writing its status; on that add event finalizer-cleanup sees no Subscription and an empty status.components, so it deletes the Operator object at once (nothing listed to remove) and the leftovers stay. Worth a guard in finalizer-cleanup (wait while status.components.refs is empty) or a seed that writes the annotation last.'
              : ''),
        );
      }
      if (timeouts) notes.push(`${timeouts} repetition(s) did not heal within ${TIMEOUT_MS / 1000} s (counted at the timeout)`, ...timeoutEvidence);
      notes.push(
        `Method: ${reps} repetitions x ${names.length} situations, seeded one at a time (seed, measure, next) with the real adapter watching; healed() polled every ${POLL_MS} ms, ` +
          'the latency is taken when the first successful probe returned (so it includes up to one probe of reads: see "probe p50 ms"). ' +
          `With ${reps} samples per situation, p99 is the ${reps <= 100 ? 'maximum' : '99th percentile'} (nearest-rank).`,
        'MAX_ACTIONS_PER_WINDOW is lifted for the run (the default budget, 30 actions/60 s, would defer repairs by design at this rate).',
        `Machine: 2 cores shared by etcd, kube-apiserver, kube-controller-manager, the adapter, the server and this process; figures include event delivery through the adapter.`,
      );
      notes.push(`Host load (1-min average) at start ${load0.toFixed(1)}, at end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores (other work on the machine shares them).`);
      return { name: 'heal-latency', metrics, targets, notes };
    } finally {
      await td.run(ctx.log);
    }
  },
};

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
