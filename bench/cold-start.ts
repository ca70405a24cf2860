/**
 * Cold start: spawn → first CloudEvent answered 2xx, for
 *   (a) olm-medic's production start path (`npm start's command (node --max-semi-space-size=2 --max-old-space-size=96 scripts/start.mjs -> dist/server.mjs)`, Kubernetes client loaded and
 *       configured from a kubeconfig) answering an ApiServerSource event no function wants,
 *   (b) a faas-js-runtime hello-world CloudEvent function started as the func template's
 *       `npm start` does (`faas-js-runtime ./index.js`, via its CLI),
 *   (c) a bare express + cloudevents echo.
 * Same Node (the runner's process.execPath), same event, interleaved a,b,c,a,b,c,… after one
 * discarded warm-up round (page cache). The clock starts just before spawn() and stops when the
 * response to the first POST has been read; the POST itself polls the port every 5 ms.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/control-plane/control-plane.js';
import { median, type BenchContext, type BenchResult, type Benchmark } from './types.js';
import { apiServerEvent, dummyKubeconfig, postUntilAnswered, type HttpEvent } from './lib/events.js';
import { readyCatalogPodUpdate } from './lib/payloads.js';
import { fixturesDir, root, scratchDir, serverEntry, sleep, spawnNode, serverEnv } from './lib/proc.js';

type Subject = 'medic' | 'medicNoCache' | 'faas' | 'echo' | 'bare';

interface Spec {
  args: string[];
  cwd: string;
  env: (port: number) => Record<string, string>;
}

/** CPU time (user + system, all threads) a process has used so far, in ms (Linux /proc). */
function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

async function coldStart(spec: Spec, ev: HttpEvent, logFile: string, what: string): Promise<{ ms: number; cpu: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawnNode(spec.args, { cwd: spec.cwd, env: spec.env(port), logFile });
  try {
    const res = await postUntilAnswered(port, ev, { pollMs: 5, timeoutMs: 30_000, alive: child.running, what });
    const ms = performance.now() - t0;
    const cpu = cpuMs(child.pid);
    if (res.status < 200 || res.status > 299) throw new Error(`${what} answered ${res.status}: ${res.body.slice(0, 300)}\n${child.tail()}`);
    return { ms, cpu };
  } catch (e) {
    throw new Error(`${what}: ${e instanceof Error ? e.message : e}\n--- output ---\n${child.tail()}`);
  } finally {
    await child.stop('SIGKILL');
  }
}

export const bench: Benchmark = {
  name: 'cold-start',
  description: 'spawn → first CloudEvent answered 2xx: olm-medic (npm start) vs express+cloudevents echo, bare node:http echo, faas-js-runtime hello world',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const runs = ctx.smoke ? 3 : 15;
    const scratch = scratchDir('cold-start');
    try {
      const kubeconfig = join(scratch.dir, 'dummy.kubeconfig');
      writeFileSync(kubeconfig, dummyKubeconfig());
      const specs: Record<Subject, Spec> = {
        medic: {
          args: serverEntry(),
          cwd: root,
          env: (port) => ({ ...serverEnv(), PORT: String(port), KUBECONFIG: kubeconfig, LOG_LEVEL: 'info' }),
        },
        // The same without the compile cache (information: what the cache is worth).
        medicNoCache: {
          args: serverEntry(),
          cwd: root,
          env: (port) => ({ ...serverEnv(), PORT: String(port), KUBECONFIG: kubeconfig, LOG_LEVEL: 'info', OLM_MEDIC_COMPILE_CACHE: 'off' }),
        },
        faas: {
          args: [join(root, 'node_modules', 'faas-js-runtime', 'bin', 'cli.js'), './index.js'],
          cwd: join(fixturesDir, 'faas-hello'),
          env: (port) => ({ FUNC_PORT: String(port), FUNC_LOG_LEVEL: 'info' }),
        },
        echo: {
          args: [join(fixturesDir, 'express-echo.mjs')],
          cwd: root,
          env: (port) => ({ PORT: String(port) }),
        },
        bare: {
          args: [join(fixturesDir, 'node-echo.mjs')],
          cwd: root,
          env: (port) => ({ PORT: String(port) }),
        },
      };
      // A declared kind (catalog-reschedule watches catalog Pods) that needs no action: judged by the functions' targets().
      const ev = apiServerEvent('update', readyCatalogPodUpdate());
      const order: Subject[] = ['medic', 'echo', 'bare', 'faas', 'medicNoCache'];
      const times: Record<Subject, number[]> = { medic: [], medicNoCache: [], faas: [], echo: [], bare: [] };
      const cpu: Record<Subject, number[]> = { medic: [], medicNoCache: [], faas: [], echo: [], bare: [] };
      for (let round = 0; round <= runs; round++) {
        const line: string[] = [];
        for (const s of order) {
          const { ms, cpu: c } = await coldStart(specs[s], ev, join(scratch.dir, `${s}.log`), s);
          if (round > 0) {
            times[s].push(ms);
            cpu[s].push(c);
          }
          line.push(`${s} ${ms.toFixed(1)} ms`);
          await sleep(100);
        }
        ctx.log(`${round === 0 ? 'warm-up' : `round ${round}/${runs}`}: ${line.join(', ')}`);
      }
      const med = Object.fromEntries(order.map((k) => [k, median(times[k])])) as Record<Subject, number>;
      // Rounds are interleaved, so each round's pair shares that moment's machine load: the
      // median of those paired ratios is less sensitive to load from other processes.
      const paired = (b: Subject): number => median(times.medic.map((m, i) => m / times[b][i]!));
      const r = (x: number): number => Math.round(x * 10) / 10;
      const r2 = (x: number): number => Math.round(x * 100) / 100;
      const metrics: Record<string, number | string> = { runsEach: runs, eventBytes: ev.body.length };
      for (const k of order) {
        metrics[`${k}MedianMs`] = r(med[k]);
        metrics[`${k}MinMs`] = r(Math.min(...times[k]));
        metrics[`${k}MaxMs`] = r(Math.max(...times[k]));
        metrics[`${k}MedianCpuMs`] = r(median(cpu[k]));
      }
      // CPU time used until the answer (all threads) moves far less with other load than the wall clock.
      metrics['CPU-time ratio medic/express echo (info)'] = r2(median(cpu.medic) / median(cpu.echo));
      metrics['CPU-time ratio medic/bare (info)'] = r2(median(cpu.medic) / median(cpu.bare));
      const ratioEcho = med.medic / med.echo;
      metrics['ratio medic/bare node:http echo (info)'] = r2(med.medic / med.bare);
      metrics['ratio medic/faas-js-runtime (info)'] = r2(med.medic / med.faas);
      metrics['ratio medic/medic without compile cache (info)'] = r2(med.medic / med.medicNoCache);
      metrics['median of per-round ratios medic/express echo (info)'] = r2(paired('echo'));
      metrics['median of per-round ratios medic/bare (info)'] = r2(paired('bare'));
      metrics.node = process.version;
      return {
        name: 'cold-start',
        metrics,
        targets: [
          { name: 'cold start ratio olm-medic / express+cloudevents echo (medians)', value: r2(ratioEcho), target: '<= 1.0', pass: ratioEcho <= 1.0 },
          { name: 'cold start ratio olm-medic / faas-js-runtime (medians)', value: r2(med.medic / med.faas), target: '<= 1.0', pass: med.medic / med.faas <= 1.0 },
        ],
        notes: [
          `medic: npm start's command (scripts/start.mjs -> dist/server.mjs, with the compile cache \`npm run build\` filled) with KUBECONFIG = a valid dummy kubeconfig (server https://127.0.0.1:9, token auth): the Kubernetes client is loaded and configured and the engine built before listening; the event (a Ready catalog registry pod's update, a kind catalog-reschedule declares) is judged by the functions' targets() and needs no API call, so no control plane is needed; LOG_LEVEL=info. medicNoCache: the same with OLM_MEDIC_COMPILE_CACHE=off.`,
          `faas: faas-js-runtime ${fjrVersion()} CLI (node_modules/faas-js-runtime/bin/cli.js ./index.js, cwd bench/fixtures/faas-hello, FUNC_LOG_LEVEL=info) — the template's \`npm start\` without the npm wrapper; the function is the template's handler as tsc emits it (CommonJS), replying with a CloudEvent.`,
          'echo: node bench/fixtures/express-echo.mjs: express + cloudevents, decodes the event and echoes it in binary mode. bare: node bench/fixtures/node-echo.mjs, node:http reading, JSON-parsing and echoing the body (the floor).',
          `Load from other processes moves single runs by ±100 ms on this 2-core machine: compare the min figures and the median of per-round (paired) ratios too; the runner prints the load average. *MedianCpuMs is the CPU time (user + system, all threads, /proc/<pid>/stat) each server had used when its answer was read: far less sensitive to other load than the wall clock.`,
          `All on ${process.version} (${process.execPath}); event: binary-mode ApiServerSource Ready catalog pod update (bench/lib/payloads.ts, ${ev.body.length} B); ${runs} interleaved runs each after one discarded warm-up round; each clock runs from spawn() to the first 2xx answer read, polling every 5 ms with that POST.`,
        ],
      };
    } finally {
      scratch.cleanup();
    }
  },
};

function fjrVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', 'faas-js-runtime', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}
