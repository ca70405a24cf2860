/**
 * The deployment passes a security review on the real apiserver: Pod Security "restricted" admits a
 * Pod built from each shipped pod template (the Knative Service and the dead-letter JobSink's Job) in
 * a namespace that enforces it, and rejects a copy without the security context; the shipped
 * namespace enforces it; the NetworkPolicy admits only Knative's data-plane namespaces.
 */
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { api, render } from '../control-plane/knative.js';

const cp = inject('controlPlane');
type PodSpec = { containers: Record<string, unknown>[] } & Record<string, unknown>;

/** The pod templates the deployment runs in its namespace, by name. */
function templates(objects: KubeObject[]): Record<string, PodSpec> {
  const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'olm-medic') as KubeObject & { spec: { template: { spec: PodSpec } } };
  const sink = objects.find((o) => o.kind === 'JobSink') as KubeObject & { spec: { job: { spec: { template: { spec: PodSpec } } } } };
  // Knative Serving's revision fields that are not Pod fields
  const { containerConcurrency: _cc, timeoutSeconds: _t, ...pod } = svc.spec.template.spec;
  return { 'service olm-medic': pod as PodSpec, 'jobsink olm-medic-dead-letters': sink.spec.job.spec.template.spec };
}

async function restrictedNamespace(): Promise<string> {
  const a = api(cp.adminKubeconfig);
  const name = `psa-${Math.random().toString(36).slice(2, 8)}`;
  const r = await a.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } });
  expect(r.status).toBe(201);
  return name;
}

describe.each(['dry-run', 'enforce'])('infra/overlays/%s security', (overlay) => {
  const objects = render(overlay);

  it('the shipped namespace enforces Pod Security "restricted"', () => {
    const ns = objects.find((o) => o.kind === 'Namespace')!;
    expect(ns.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it.each(Object.keys(templates(objects)))('Pod Security "restricted" admits a Pod from the %s template and rejects it without its security context', async (which) => {
    const a = api(cp.adminKubeconfig);
    const ns = await restrictedNamespace();
    const spec = templates(objects)[which]!;
    const pod = (s: PodSpec): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'from-template', namespace: ns }, spec: s });
    const ok = await a.request('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod(spec));
    expect(ok.status, JSON.stringify(ok.body.message)).toBe(201);
    const bare = structuredClone(spec);
    for (const c of bare.containers) delete c.securityContext;
    const denied = await a.request('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod(bare));
    expect(denied.status).toBe(403);
    expect(String(denied.body.message)).toMatch(/violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false.*unrestricted capabilities.*runAsNonRoot != true.*seccompProfile/);
    await a.request('DELETE', `/api/v1/namespaces/${ns}`);
  });

  it('the NetworkPolicy admits ingress only from the Knative data-plane namespaces, to every pod', async () => {
    const np = objects.find((o) => o.kind === 'NetworkPolicy') as KubeObject & { spec: { podSelector: unknown; policyTypes: string[]; ingress: { from: { namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] } }[] }[] } };
    expect(np.spec.podSelector).toEqual({});
    expect(np.spec.policyTypes).toEqual(['Ingress']);
    expect(np.spec.ingress).toHaveLength(1);
    expect(np.spec.ingress[0]!.from).toEqual([{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['knative-eventing', 'knative-serving', 'kourier-system'] }] } }]);
    // validated by the real apiserver (and a broken copy is rejected, so the validation is real)
    const a = api(cp.adminKubeconfig);
    const ns = await restrictedNamespace();
    const put = (o: unknown): Promise<{ status: number }> => a.request('POST', `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies?dryRun=All`, o);
    expect((await put({ ...np, metadata: { ...np.metadata, namespace: ns } })).status).toBe(201);
    const broken = structuredClone(np);
    broken.spec.ingress[0]!.from[0]!.namespaceSelector.matchExpressions[0]!.operator = 'Equals';
    expect((await put({ ...broken, metadata: { ...np.metadata, namespace: ns } })).status).toBe(422);
    await a.request('DELETE', `/api/v1/namespaces/${ns}`);
  });
});
