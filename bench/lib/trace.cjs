/**
 * A timeline of one olm-medic server process, for exploring a benchmark (never loaded by npm start
 * or npm run bench). Load it into the server with the exploration knob:
 *
 *   OLM_MEDIC_BENCH_SERVER_NODE_OPTIONS="--require $PWD/bench/lib/trace.cjs" npx tsx bench/run.ts --only burst
 *
 * It appends to $OLM_MEDIC_TRACE_FILE (default /tmp/olm-medic-trace.<pid>.log), one line each:
 *   <epoch ms> TICK elu=<event-loop utilisation of the last 100 ms> delay=<max loop delay, ms>
 *                   served=<HTTP requests started in it> rss=<MB>
 *   <epoch ms> OUT  <method> <path>        a request to the apiserver leaves
 *   <epoch ms> IN   <status> <path>        its answer's headers arrive (the body may still follow)
 * Only node:diagnostics_channel and perf_hooks: nothing in the server is patched.
 * Example: `grep -E 'TICK|subscriptions\?' <file>` shows whether a burst's cluster-wide list pages
 * are slow at the apiserver (OUT → IN) or in the server (IN → next OUT) while events are served.
 */
'use strict';
const { performance, monitorEventLoopDelay } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
const dc = require('node:diagnostics_channel');

const file = process.env.OLM_MEDIC_TRACE_FILE || `/tmp/olm-medic-trace.${process.pid}.log`;
let lines = [];
let served = 0;
const flush = () => {
  if (lines.length === 0) return;
  appendFileSync(file, `${lines.join('\n')}\n`);
  lines = [];
};

dc.subscribe('http.server.request.start', () => void served++);
dc.subscribe('http.client.request.start', ({ request }) => void lines.push(`${Date.now()} OUT ${request.method} ${request.path}`));
dc.subscribe('http.client.response.finish', ({ request, response }) => void lines.push(`${Date.now()} IN ${response.statusCode} ${request.path}`));

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
let last = performance.eventLoopUtilization();
setInterval(() => {
  const now = performance.eventLoopUtilization();
  const d = performance.eventLoopUtilization(now, last);
  last = now;
  lines.push(`${Date.now()} TICK elu=${d.utilization.toFixed(2)} delay=${(delay.max / 1e6).toFixed(0)} served=${served} rss=${(process.memoryUsage.rss() / 1e6).toFixed(1)}`);
  delay.reset();
  served = 0;
  if (lines.length >= 64) flush();
}, 100).unref();
process.on('exit', flush);
