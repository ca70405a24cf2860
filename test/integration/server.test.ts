/**
 * The production start path (`npm start` -> dist/server.mjs) against the real control plane:
 * it answers CloudEvents, rejects malformed ones with a 4xx naming the problem, and an event no
 * function wants costs zero requests at the apiserver (counted in the apiserver's audit log).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCluster } from '../support/cluster.js';
import { apiServerEvent, pingEvent, post } from '../support/events.js';
import { startServer, type RunningServer } from '../support/server.js';

const c = testCluster();
let srv: RunningServer;

beforeAll(async () => {
  srv = await startServer({ KUBECONFIG: c.kubeconfig.server });
});
afterAll(async () => srv?.stop());

describe('olm-medic server (dist/server.mjs)', () => {
  it('answers an unrelated ApiServerSource event with 2xx, an empty body, and zero apiserver requests', async () => {
    const ns = await c.namespace('unrelated');
    const pod = await c.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const before = c.audit('olm-medic-server').length;
    for (const mode of ['binary', 'structured'] as const) {
      const res = await post(srv.url, apiServerEvent('update', pod), mode);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
      expect(res.headers.get('olm-medic-outcome')).toMatch(/ignored=1/);
    }
    expect(c.audit('olm-medic-server').slice(before)).toEqual([]);
  });

  it('rejects a malformed CloudEvent with a 4xx that names the problem', async () => {
    const res = await fetch(srv.url, {
      method: 'POST',
      headers: { 'ce-specversion': '1.0', 'ce-type': 'dev.knative.apiserver.resource.update', 'ce-source': 'x', 'content-type': 'application/json' },
      body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/id/);
  });

  it('rejects Resource-mode data that is not a Kubernetes object', async () => {
    const ev = apiServerEvent('add', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'x' } });
    const res = await post(srv.url, ev.cloneWith({ data: { kind: 'Pod' } as never }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/missing apiVersion, metadata, metadata\.name/);
  });

  it('answers a PingSource sweep tick with 2xx', async () => {
    // Scoped to an empty namespace so the sweep cannot touch parallel tests' objects.
    const res = await post(srv.url, pingEvent({ namespace: await c.namespace('ping') }));
    expect(res.status).toBeLessThan(300);
  });

  it('serves health and Prometheus metrics', async () => {
    expect((await fetch(`${srv.url}/health/liveness`)).status).toBe(200);
    const metrics = await (await fetch(`${srv.url}/metrics`)).text();
    expect(metrics).toMatch(/olm_medic_cloudevents_total\{type="dev.knative.apiserver.resource.update",kind="Pod",outcome="ignored"\} 2/);
  });

  it('refuses to start on a bad configuration value, naming it', async () => {
    await expect(startServer({ KUBECONFIG: c.kubeconfig.server, DRY_RUN: 'maybe' })).rejects.toThrow(/DRY_RUN="maybe": expected true or false/);
  });
});
