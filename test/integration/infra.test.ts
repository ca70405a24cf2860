/**
 * infra/ renders with kustomize, every object validates against its schema (kubernetes-models and
 * @kubernetes-models/knative), and the core and RBAC objects are accepted by the real apiserver
 * (server-side dry-run). The RBAC itself is proven by the scenario suites, which run as the
 * shipped ServiceAccount (see rbac.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { parseAllDocuments } from 'yaml';
import * as core from 'kubernetes-models/v1';
import * as rbac from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as serving from '@kubernetes-models/knative/serving.knative.dev/v1';
import * as eventing from '@kubernetes-models/knative/eventing.knative.dev/v1';
import * as sources from '@kubernetes-models/knative/sources.knative.dev/v1';
import type { KubeObject } from '../../shared/kube/types.js';
import { testCluster } from '../support/cluster.js';
import { allFunctions } from '../../functions/index.js';

const cp = inject('controlPlane');
const c = testCluster();

export function render(overlay: string): KubeObject[] {
  const out = execFileSync(cp.binaries.kustomize, ['build', `infra/overlays/${overlay}`], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJSON() as KubeObject);
}

type Model = new (data: never) => { validate(): void };
const models: Record<string, Model> = {
  'v1/Namespace': core.Namespace as Model,
  'v1/ServiceAccount': core.ServiceAccount as Model,
  'rbac.authorization.k8s.io/v1/ClusterRole': rbac.ClusterRole as Model,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': rbac.ClusterRoleBinding as Model,
  'serving.knative.dev/v1/Service': serving.Service as Model,
  'eventing.knative.dev/v1/Broker': eventing.Broker as Model,
  'eventing.knative.dev/v1/Trigger': eventing.Trigger as Model,
  'sources.knative.dev/v1/ApiServerSource': sources.ApiServerSource as Model,
  'sources.knative.dev/v1/PingSource': sources.PingSource as Model,
  'networking.k8s.io/v1/NetworkPolicy': networking.NetworkPolicy as Model,
  // JobSink has no kubernetes-models schema: Knative's own validation covers it (infra-knative.test.ts).
};

describe.each(['dry-run', 'enforce'])('infra/overlays/%s', (overlay) => {
  const objects = render(overlay);

  it('renders the whole deployment', () => {
    const kinds = objects.map((o) => o.kind).sort();
    expect(new Set(kinds)).toEqual(new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Service', 'Broker', 'ApiServerSource', 'PingSource', 'Trigger', 'JobSink', 'NetworkPolicy']));
    expect(objects.filter((o) => o.kind === 'Trigger')).toHaveLength(7);
  });

  it('validates every object against its schema', () => {
    for (const o of objects.filter((x) => x.kind !== 'JobSink')) {
      const Model = models[`${o.apiVersion}/${o.kind}`];
      expect(Model, `${o.apiVersion} ${o.kind} has a validator`).toBeDefined();
      expect(() => new Model!(o as never).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
    }
  });

  it('sets DRY_RUN for the overlay', () => {
    const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'olm-medic') as KubeObject & { spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } };
    const env = Object.fromEntries(svc.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    expect(env.DRY_RUN).toBe(overlay === 'dry-run' ? 'true' : 'false');
  });

  it('routes each kind through exactly one Trigger (no duplicate deliveries) and uses Trigger filters with delivery + dead-letter sink', () => {
    const triggers = objects.filter((o) => o.kind === 'Trigger') as (KubeObject & { spec: { filters: Record<string, Record<string, string>>[]; delivery: { retry: number; deadLetterSink: unknown } } })[];
    const keys = triggers.map((t) => JSON.stringify(t.spec.filters.map((f) => f.exact ?? {})));
    expect(new Set(keys).size).toBe(triggers.length);
    for (const t of triggers) {
      expect(t.spec.delivery.retry).toBeGreaterThan(0);
      expect(t.spec.delivery.deadLetterSink).toBeDefined();
    }
  });

  it('watches in Resource mode exactly the kinds the functions handle', () => {
    const src = objects.find((o) => o.kind === 'ApiServerSource') as KubeObject & { spec: { mode: string; resources: { kind: string; selector?: unknown }[] } };
    expect(src.spec.mode).toBe('Resource');
    expect(src.spec.resources.map((r) => r.kind).sort()).toEqual(['ClusterServiceVersion', 'InstallPlan', 'Job', 'Operator', 'Pod', 'Subscription']);
    // exactly the kinds the functions declare: nothing they need is missing, nothing else is watched
    const watched = new Set((src.spec.resources as unknown as { apiVersion: string; kind: string }[]).map((r) => `${r.apiVersion}/${r.kind}`));
    expect(watched).toEqual(new Set(allFunctions.flatMap((f) => f.kinds)));
    // invisible unpack Jobs lack OLM's labels, so Jobs must not be label-filtered
    expect(src.spec.resources.find((r) => r.kind === 'Job')!.selector).toBeUndefined();
    // copied CSVs are never acted on: excluded at the source (the adapter honours it: infra-source.test.ts)
    expect(src.spec.resources.find((r) => r.kind === 'ClusterServiceVersion')!.selector).toEqual({ matchExpressions: [{ key: 'olm.copiedFrom', operator: 'DoesNotExist' }] });
  });

  it('the Knative Service is cluster-local (no route from outside the cluster); dead letters go to a JobSink', () => {
    const services = objects.filter((o) => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1');
    expect(services.map((s) => s.metadata.name).sort()).toEqual(['olm-medic']);
    const sinks = objects.filter((o) => (o.spec as { delivery?: { deadLetterSink?: { ref: { kind: string; name: string } } } } | undefined)?.delivery?.deadLetterSink);
    expect(sinks).toHaveLength(8); // the Broker and the 7 Triggers
    for (const o of sinks) expect((o.spec as { delivery: { deadLetterSink: { ref: unknown } } }).delivery.deadLetterSink.ref).toEqual({ apiVersion: 'sinks.knative.dev/v1alpha1', kind: 'JobSink', name: 'olm-medic-dead-letters' });
    for (const s of services) expect(s.metadata.labels?.['networking.knative.dev/visibility'], s.metadata.name).toBe('cluster-local');
  });

  it('has no wildcard in any RBAC rule', () => {
    for (const role of objects.filter((o) => o.kind === 'ClusterRole') as (KubeObject & { rules: Record<string, string[]>[] })[]) {
      for (const rule of role.rules) for (const v of Object.values(rule)) expect(v).not.toContain('*');
    }
  });

  it('core and RBAC objects pass server-side dry-run on the real apiserver', async () => {
    const ns = objects.find((o) => o.kind === 'Namespace')!;
    await c.admin.create(ns, { dryRun: true }).catch((e: { alreadyExists?: boolean }) => {
      if (!e.alreadyExists) throw e;
    });
    if (!(await c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name }))) {
      await c.admin.create(ns, { dryRun: false }).catch((e: { alreadyExists?: boolean }) => {
        if (!e.alreadyExists) throw e;
      });
    }
    for (const o of objects.filter((x) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind))) {
      await expect(c.admin.create(o, { dryRun: true }).catch((e: { alreadyExists?: boolean }) => (e.alreadyExists ? o : Promise.reject(e)))).resolves.toBeDefined();
    }
  });
});
