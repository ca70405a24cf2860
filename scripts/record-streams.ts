/**
 * Records the CloudEvents Knative's real ApiServerSource adapter sends while each seed situation is
 * created and healed, into test/fixtures/streams/<situation>.jsonl (structured JSON, one per line).
 * A recording proxy sits between the adapter and the olm-medic server. Object names carry the id
 * "r3c0rd", which the replay test rewrites to a fresh id per run.
 *   npx tsx scripts/record-streams.ts
 */
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { HTTP } from 'cloudevents';
import { startControlPlane, freePort } from '../test/control-plane/control-plane.js';
import { installCrds } from '../test/control-plane/crds.js';
import { renderInfra, shippedKubeconfig } from '../test/control-plane/shipped-identity.js';
import { createKube, loadKubeConfig } from '../shared/kube/client.js';
import { startAdapter } from '../test/support/adapter.js';
import { startServer } from '../test/support/server.js';
import { seeds } from '../test/scenarios/seeds.js';

export const RECORDED_ID = 'r3c0rd';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const cp = await startControlPlane();
await installCrds(cp.admin.kubeconfig);
const server = await startServer({ KUBECONFIG: await shippedKubeconfig(cp), LOG_LEVEL: 'warn' });
let recording: string[] | undefined;
const proxyPort = await freePort();
createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const ev = HTTP.toEvent({ headers: req.headers, body });
    if (recording && !Array.isArray(ev)) recording.push(JSON.stringify((ev as unknown as { toJSON(): unknown }).toJSON()));
    const fwd = await fetch(server.url, { method: 'POST', headers: req.headers as Record<string, string>, body });
    res.writeHead(fwd.status);
    res.end(await fwd.text());
  });
}).listen(proxyPort, '127.0.0.1');
const source = renderInfra(cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource')!;
const adapter = startAdapter(cp.binaries.adapter, { kubeconfig: await shippedKubeconfig(cp, 'olm-medic-source'), sink: `http://127.0.0.1:${proxyPort}`, source });
const admin = createKube(loadKubeConfig(cp.admin.kubeconfig));
await sleep(3000);

for (const seed of seeds) {
  recording = [];
  const s = await seed(admin, RECORDED_ID);
  if (s.trigger) {
    while (!(await s.trigger.ready())) await sleep(50);
    await s.trigger.act();
  }
  while (!(await s.healed())) await sleep(50);
  await sleep(1500); // let trailing events (deletions, status updates) arrive
  const file = `test/fixtures/streams/${seed.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.jsonl`;
  writeFileSync(file, `# ${s.name}: recorded from knative.dev/eventing apiserver_receive_adapter (Resource mode)\n${recording.join('\n')}\n`);
  console.log(`${file}: ${recording.length} events`);
}
recording = undefined;
await adapter.stop();
await server.stop();
await cp.stop();
process.exit(0);
