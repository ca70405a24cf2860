/**
 * End to end: Knative's real ApiServerSource adapter (configured from infra/, running as the shipped
 * source ServiceAccount) -> the production server (dist/server.mjs, running as the shipped function
 * ServiceAccount) -> the real apiserver. Each seed situation is created through the API and must be
 * healed by real events alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import { renderInfra } from '../control-plane/shipped-identity.js';
import { startAdapter, waitForEveryKind, type RunningAdapter } from '../support/adapter.js';
import { eventually } from '../support/cluster.js';
import { startServer, type RunningServer } from '../support/server.js';
import { seeds } from '../scenarios/seeds.js';

const cp = inject('controlPlane');
const admin = createKube(loadKubeConfig(cp.adminKubeconfig));
let server: RunningServer;
let adapter: RunningAdapter;

async function eventsReceived(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return [...text.matchAll(/^olm_medic_cloudevents_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

beforeAll(async () => {
  server = await startServer({ KUBECONFIG: cp.shippedKubeconfig, LOG_LEVEL: 'warn', OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
  const source = renderInfra(cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource')!;
  adapter = startAdapter(cp.binaries.adapter, { kubeconfig: cp.sourceKubeconfig, sink: server.url, source });
  // One informer per kind, each emitting nothing until its watch is up: wait for every kind.
  await waitForEveryKind(admin, server.url, source);
}, 60_000);

afterAll(async () => {
  await adapter?.stop();
  await server?.stop();
});

describe('real adapter -> olm-medic -> apiserver', () => {
  it.each(seeds.map((s) => [s.name, s] as const))('heals: %s', async (_name, seed) => {
    const id = Math.random().toString(36).slice(2, 7);
    const situation = await seed(admin, id);
    if (situation.trigger) {
      await eventually(() => situation.trigger!.ready(), `${situation.name}: olm-medic to prepare\n${server.output().slice(-3000)}\n${adapter.output().slice(-1500)}`, 30_000);
      await situation.trigger.act();
    }
    // (No "still broken" check here: real events may heal it before the seed returns. The scenario
    // suites show each stuck state; this test shows real events alone heal it.)
    await eventually(() => situation.healed(), `${situation.name} to heal\n${server.output().slice(-3000)}`, 30_000);
  });

  it('the adapter ran the whole time and delivered real CloudEvents', async () => {
    expect(adapter.proc.exitCode).toBeNull();
    expect(await eventsReceived()).toBeGreaterThan(5);
  });
});
