/**
 * `npm run local`: everything on this machine, no cluster needed. Builds (first run) and starts a
 * real control plane with OLM's CRDs, then serves olm-medic against it on $PORT (default 8080)
 * until Ctrl-C. Prints the kubeconfig so you can create OLM objects and send CloudEvents.
 *   --check   start, answer one CloudEvent, stop (used to verify a fresh machine)
 */
import { spawn } from 'node:child_process';
import { startControlPlane } from '../test/control-plane/control-plane.js';
import { installCrds } from '../test/control-plane/crds.js';

const check = process.argv.includes('--check');
const port = Number(process.env.PORT ?? 8080);
const cp = await startControlPlane();
await installCrds(cp.admin.kubeconfig);
console.log(`[local] OLM CRDs installed`);
const server = spawn(process.execPath, ['dist/server.mjs'], {
  env: { ...process.env, KUBECONFIG: cp.medic.kubeconfig, PORT: String(port) },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const stop = async (code: number): Promise<never> => {
  server.kill('SIGTERM');
  await cp.stop();
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${port}/health/readiness`)).ok) break;
  } catch {
    /* starting */
  }
  if (i > 100) await stop(1);
  await new Promise((r) => setTimeout(r, 100));
}
console.log(`[local] olm-medic serving on http://127.0.0.1:${port}
[local] export KUBECONFIG=${cp.admin.kubeconfig}
[local] send a sweep:  curl -si -X POST http://127.0.0.1:${port}/ -H 'ce-specversion: 1.0' -H 'ce-id: 1' \\
          -H 'ce-source: local' -H 'ce-type: dev.knative.sources.ping' -H 'olm-medic-report: json'`);
if (check) {
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'ce-specversion': '1.0', 'ce-id': 'check', 'ce-source': 'local', 'ce-type': 'dev.knative.sources.ping', 'olm-medic-report': 'json' },
  });
  console.log(`[local] sweep answered ${res.status}: ${await res.text()}`);
  await stop(res.ok ? 0 : 1);
}
