/**
 * Dispatch throughput of events no function wants: autocannon (same connections, same duration)
 * against olm-medic (dist/server.mjs, KUBECONFIG of a dedicated user on a real control plane
 * started here) and against the bare express + cloudevents echo (bench/fixtures/express-echo.mjs).
 * The event is a realistic binary-mode ApiServerSource Pod update without the olm.catalogSource
 * label (bench/fixtures/pod-update.json, ~4 KB incl. managedFields). Servers are loaded
 * alternately (echo, medic, echo, medic) and the better round of each counts. The apiserver's
 * audit log shows every request made as the olm-medic identity: there must be none.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, startControlPlane, type ControlPlane } from '../test/control-plane/control-plane.js';
import type { BenchContext, BenchResult, Benchmark } from './types.js';
import { apiServerEvent, postUntilAnswered, realisticPod, type HttpEvent } from './lib/events.js';
import { fixturesDir, scratchDir, serverEntry, sleep, spawnNode, type Child } from './lib/proc.js';

const USER = 'bench-medic';

interface Round {
  reqPerSec: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50Ms: number;
  p99Ms: number;
}

async function load(port: number, ev: HttpEvent, connections: number, durationS: number): Promise<Round> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/`,
    method: 'POST',
    headers: ev.headers,
    body: ev.body,
    connections,
    pipelining: 1,
    duration: durationS,
    timeout: 10,
  });
  return {
    reqPerSec: r.requests.average,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
  };
}

export const bench: Benchmark = {
  name: 'dispatch-throughput',
  description: 'req/s of unwanted ApiServerSource events (autocannon): olm-medic on a real control plane vs bare express+cloudevents echo',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const connections = 50;
    const durationS = ctx.smoke ? 3 : 10;
    const warmupS = ctx.smoke ? 1 : 2;
    const rounds = ctx.smoke ? 1 : 2;
    const scratch = scratchDir('dispatch');
    let cp: ControlPlane | undefined;
    const children: Child[] = [];
    try {
      cp = await startControlPlane({ users: { [USER]: ['system:masters'] }, log: ctx.log });
      const kubeconfig = cp.user(USER).kubeconfig;
      const ev = apiServerEvent('update', realisticPod());
      writeFileSync(join(scratch.dir, 'event.json'), JSON.stringify(ev, null, 2));

      const medicPort = await freePort();
      const medic = spawnNode(serverEntry(), { env: { PORT: String(medicPort), KUBECONFIG: kubeconfig, LOG_LEVEL: 'info' }, logFile: join(scratch.dir, 'medic.log') });
      children.push(medic);
      const echoPort = await freePort();
      const echo = spawnNode([join(fixturesDir, 'express-echo.mjs')], { env: { PORT: String(echoPort) }, logFile: join(scratch.dir, 'echo.log') });
      children.push(echo);
      for (const [what, port, child] of [['olm-medic', medicPort, medic], ['echo', echoPort, echo]] as const) {
        const res = await postUntilAnswered(port, ev, { pollMs: 20, alive: child.running, what });
        if (res.status < 200 || res.status > 299) throw new Error(`${what} answered ${res.status} to the benchmark event: ${res.body}\n${child.tail()}`);
      }
      const outcome = await fetch(`http://127.0.0.1:${medicPort}/`, { method: 'POST', headers: ev.headers, body: ev.body });
      const outcomeHeader = outcome.headers.get('olm-medic-outcome') ?? '';
      if (!/^ignored=1$/.test(outcomeHeader)) throw new Error(`olm-medic did not ignore the benchmark event: ${outcome.status} ${outcomeHeader}`);
      const requestsBefore = cp.requestsBy(USER).length;

      // Warm-up (JIT, connection pools) of both, not counted.
      for (const port of [echoPort, medicPort]) await load(port, ev, connections, warmupS);
      const best: Record<'medic' | 'echo', Round | undefined> = { medic: undefined, echo: undefined };
      let non2xx = 0;
      let errors = 0;
      for (let i = 1; i <= rounds; i++) {
        for (const [key, port] of [['echo', echoPort], ['medic', medicPort]] as const) {
          await sleep(500);
          const r = await load(port, ev, connections, durationS);
          non2xx += r.non2xx;
          errors += r.errors;
          ctx.log(`round ${i}/${rounds} ${key}: ${r.reqPerSec.toFixed(0)} req/s (${r.total} requests, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, non-2xx ${r.non2xx}, errors ${r.errors})`);
          if (!best[key] || r.reqPerSec > best[key].reqPerSec) best[key] = r;
        }
      }
      for (const c of children) if (!c.running()) throw new Error(`a server exited during the run:\n${c.tail()}`);
      await sleep(200);
      const medicRequests = cp.requestsBy(USER);
      const duringRun = medicRequests.length - requestsBefore;
      const adminRequests = cp.requestsBy('admin').length;
      const m = best.medic!;
      const e = best.echo!;
      const ratio = m.reqPerSec / e.reqPerSec;
      const r2 = (x: number): number => Math.round(x * 100) / 100;
      return {
        name: 'dispatch-throughput',
        metrics: {
          connections,
          durationSeconds: durationS,
          rounds,
          eventBytes: ev.body.length,
          medicReqPerSec: Math.round(m.reqPerSec),
          echoReqPerSec: Math.round(e.reqPerSec),
          medicP50Ms: m.p50Ms,
          medicP99Ms: m.p99Ms,
          echoP50Ms: e.p50Ms,
          echoP99Ms: e.p99Ms,
          connectionErrors: errors,
          apiserverRequestsByMedicSinceStart: medicRequests.length,
        },
        targets: [
          { name: 'throughput ratio olm-medic / echo', value: r2(ratio), target: '>= 1.0', pass: ratio >= 1.0 },
          { name: 'non-2xx answers (all rounds, both servers)', value: non2xx, target: '== 0', pass: non2xx === 0 },
          { name: `apiserver requests by ${USER} during the run (audit log)`, value: duringRun, target: '== 0', pass: duringRun === 0 },
        ],
        notes: [
          `autocannon ${connections} connections, pipelining 1, ${durationS} s per round, ${rounds} round(s) alternating echo → olm-medic after a ${warmupS} s warm-up of each; best round of each counts. autocannon runs inside the runner process, on the same 2-core machine as the server and the control plane.`,
          `olm-medic: npm start's command (node --max-semi-space-size=2 --max-old-space-size=96 scripts/start.mjs -> dist/server.mjs), LOG_LEVEL=info (ignored events are not logged), KUBECONFIG of user ${USER} (system:masters) on a real control plane started for this benchmark; answers 200 with an empty body and olm-medic-outcome "${outcomeHeader}". Echo: express + cloudevents, decodes the event and echoes it back in binary mode (a ${ev.body.length} B body).`,
          `Audit log of the control plane: ${duringRun} request(s) by ${USER} during the load, ${medicRequests.length} since the server started (the audit log works: ${adminRequests} entries by admin).`,
        ],
      };
    } finally {
      for (const c of children) await c.stop();
      await cp?.stop();
      scratch.cleanup();
    }
  },
};
