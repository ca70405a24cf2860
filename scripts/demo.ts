/**
 * `npm run demo` — the main job on a fresh machine. Builds (first run) and starts a real control
 * plane, the olm-medic server and Knative's real ApiServerSource adapter (both as the ServiceAccounts
 * and RBAC shipped in infra/), creates the five seed situations, watches each heal through real
 * events, and prints a table. Exits 0 only when every situation healed.
 *   --keep   leave everything running afterwards (prints the kubeconfig); Ctrl-C stops it
 */
import { startControlPlane } from '../test/control-plane/control-plane.js';
import { installCrds } from '../test/control-plane/crds.js';
import { renderInfra, shippedKubeconfig } from '../test/control-plane/shipped-identity.js';
import { createKube, loadKubeConfig } from '../shared/kube/client.js';
import { startAdapter, waitForEveryKind } from '../test/support/adapter.js';
import { startServer } from '../test/support/server.js';
import { seeds } from '../test/scenarios/seeds.js';

const keep = process.argv.includes('--keep');
const step = (s: string): void => console.log(`\x1b[36m==>\x1b[0m ${s}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

step('starting the control plane (first run builds etcd, kube-apiserver, kube-controller-manager and the Knative adapter from the Go module proxy; this takes several minutes once)');
const cp = await startControlPlane({ log: (l) => console.log(l) });
await installCrds(cp.admin.kubeconfig);
step('OLM CRDs installed; applying the RBAC shipped in infra/ and minting ServiceAccount tokens');
const fnKubeconfig = await shippedKubeconfig(cp);
const sourceKubeconfig = await shippedKubeconfig(cp, 'olm-medic-source');
const server = await startServer({ KUBECONFIG: fnKubeconfig, LOG_LEVEL: 'info' });
step(`olm-medic serving on ${server.url} as system:serviceaccount:olm-medic:olm-medic`);
const source = renderInfra(cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource')!;
const adapter = startAdapter(cp.binaries.adapter, { kubeconfig: sourceKubeconfig, sink: server.url, source });
const admin = createKube(loadKubeConfig(cp.admin.kubeconfig));

const shutdown = async (code: number): Promise<never> => {
  await adapter.stop();
  await server.stop();
  await cp.stop();
  process.exit(code);
};
process.on('SIGINT', () => void shutdown(130));

const handled = (): { type: string; subject: string; outcome: string; actions?: string[]; time: number }[] =>
  server.output().split('\n').filter((l) => l.includes('"handled event"')).map((l) => JSON.parse(l));
// One informer per watched kind, each emitting nothing until its watch is up: wait for every kind.
try {
  await waitForEveryKind(admin, server.url, source);
} catch (e) {
  console.error(`${e instanceof Error ? e.message : e}\n${adapter.output().slice(-3000)}`);
  await shutdown(1);
}
step('Knative ApiServerSource adapter is delivering events for every watched kind; creating the seed situations');

interface Row { situation: string; detectedBy: string; action: string; seconds: string; healed: boolean }
const rows: Row[] = [];
for (const [i, seed] of seeds.entries()) {
  const id = `d${i}${Math.random().toString(36).slice(2, 5)}`;
  const situation = await seed(admin, id);
  if (situation.trigger) {
    for (let t = 0; t < 300 && !(await situation.trigger.ready()); t++) await sleep(100);
    await situation.trigger.act();
  }
  const before = handled().length;
  console.log(`    broken: ${situation.symptom}`);
  const t0 = performance.now();
  let healed = false;
  while (performance.now() - t0 < 30_000) {
    if ((healed = await situation.healed())) break;
    await sleep(20);
  }
  const secs = ((performance.now() - t0) / 1000).toFixed(2);
  const fixing = () => handled().slice(before).filter((h) => h.actions?.some((a) => situation.fixedBy.includes(a.split(':')[1]!)));
  for (let t = 0; healed && t < 50 && !fixing().length; t++) await sleep(20); // the log line may trail the fix
  const acted = fixing();
  const first = acted[0];
  rows.push({
    situation: situation.name,
    detectedBy: first ? `${first.type.replace('dev.knative.apiserver.resource.', '')} ${first.subject.split('/').slice(-2, -1)[0]}` : '-',
    action: [...new Set(acted.flatMap((h) => h.actions ?? []).map((a) => a.split(':')[1]))].join(', ') || '-',
    seconds: healed ? secs : 'not healed',
    healed,
  });
  console.log(`    ${healed ? '\x1b[32mhealed\x1b[0m' : '\x1b[31mNOT healed\x1b[0m'} in ${secs}s`);
}

const head: Row = { situation: 'SITUATION', detectedBy: 'DETECTED BY', action: 'ACTION', seconds: 'TIME TO HEAL (s)', healed: true };
const cols = ['situation', 'detectedBy', 'action', 'seconds'] as const;
const w = cols.map((c) => Math.max(...[head, ...rows].map((r) => String(r[c]).length)));
console.log('');
for (const r of [head, ...rows]) console.log(cols.map((c, i) => String(r[c]).padEnd(w[i]!)).join('  '));
const ok = rows.every((r) => r.healed);
console.log(`\n${ok ? 'all situations healed' : 'some situations did NOT heal'}`);
if (keep) {
  console.log(`\nstill running (Ctrl-C to stop):\n  export KUBECONFIG=${cp.admin.kubeconfig}\n  olm-medic: ${server.url}`);
  await new Promise(() => undefined);
}
await shutdown(ok ? 0 : 1);
