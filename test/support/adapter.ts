/**
 * Runs Knative's own ApiServerSource receive adapter (built from knative.dev/eventing) outside a
 * cluster, configured from the ApiServerSource shipped in infra/, with K_SINK pointing at a
 * function server. This is the real event source: same informers, same CloudEvent encoding.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resourceFor } from '../../shared/kube/resources.js';
import type { KubeObject } from '../../shared/kube/types.js';

interface SourceSpec {
  mode: string;
  resources: { apiVersion: string; kind: string; selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } }[];
}

/** ApiServerSource spec -> the adapter's K_SOURCE_CONFIG (what the Knative reconciler builds). */
export function sourceConfig(source: KubeObject): string {
  const spec = source.spec as SourceSpec;
  return JSON.stringify({
    namespaces: [],
    allNamespaces: true,
    mode: spec.mode,
    failFast: false,
    resources: spec.resources.map((r) => {
      const info = resourceFor(r.apiVersion, r.kind);
      const sel = [
        ...Object.entries(r.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
        ...(r.selector?.matchExpressions ?? []).map((e) => (e.operator === 'Exists' ? e.key : e.operator === 'DoesNotExist' ? `!${e.key}` : `${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`)),
      ].join(',');
      return { gvr: { Group: info.group, Version: info.version, Resource: info.plural }, ...(sel ? { selector: sel } : {}) };
    }),
  });
}

export interface RunningAdapter {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export function startAdapter(bin: string, opts: { kubeconfig: string; sink: string; source: KubeObject }): RunningAdapter {
  let out = '';
  const proc = spawn(bin, [`--kubeconfig=${opts.kubeconfig}`], {
    env: {
      PATH: process.env.PATH ?? '',
      K_SINK: opts.sink,
      K_SOURCE_CONFIG: sourceConfig(opts.source),
      NAME: opts.source.metadata.name,
      NAMESPACE: opts.source.metadata.namespace ?? 'olm-medic',
      SYSTEM_NAMESPACE: 'knative-eventing',
      METRICS_DOMAIN: 'knative.dev/eventing',
      K_LOGGING_CONFIG: '{}',
      K_OBSERVABILITY_CONFIG: '{}',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  return {
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await Promise.race([new Promise((r) => proc.once('exit', r)), new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    },
  };
}

/**
 * The adapter runs one informer per watched kind and emits nothing for objects created before that
 * informer's watch is up. Waits until the server has received an event for every kind in the
 * source, re-creating harmless canary objects (ignored by every function) until each one arrives.
 */
export async function waitForEveryKind(
  kube: import('../../shared/kube/types.js').Kube,
  serverUrl: string,
  source: KubeObject,
  timeoutMs = 60_000,
): Promise<void> {
  const kinds = (source.spec as SourceSpec).resources.map((r) => r.kind);
  const ns = `adapter-canary-${Math.random().toString(36).slice(2, 7)}`;
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { dryRun: false });
  const seen = async (): Promise<Set<string>> => {
    const text = await (await fetch(`${serverUrl}/metrics`)).text();
    return new Set([...text.matchAll(/^olm_medic_cloudevents_total\{[^}]*kind="([A-Za-z]+)"[^}]*\} [1-9]/gm)].map((m) => m[1]!));
  };
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    const have = await seen();
    const missing = kinds.filter((k) => !have.has(k));
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`the adapter delivered no event for ${missing.join(', ')} within ${timeoutMs / 1000}s`);
    for (const kind of missing) await kube.create(canary(kind, ns, `canary-${i}`) as KubeObject, { dryRun: false }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function canary(kind: string, namespace: string, name: string): Record<string, unknown> {
  const pod = { containers: [{ name: 'c', image: 'registry.invalid/canary' }], restartPolicy: 'Never' };
  switch (kind) {
    case 'Job':
      return { apiVersion: 'batch/v1', kind, metadata: { name, namespace }, spec: { template: { spec: pod } } };
    case 'Pod': // catalog-labelled but unscheduled: catalog-reschedule has no node to check
      return { apiVersion: 'v1', kind, metadata: { name, namespace, labels: { 'olm.catalogSource': 'canary' } }, spec: pod };
    case 'Node':
      return { apiVersion: 'v1', kind, metadata: { name: `${namespace}-${name}` }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    case 'Subscription': // has a CSV already: not stuck on an unpack
      return { apiVersion: 'operators.coreos.com/v1alpha1', kind, metadata: { name, namespace }, spec: { name: 'canary', source: 'canary', sourceNamespace: namespace } };
    case 'InstallPlan':
      return { apiVersion: 'operators.coreos.com/v1alpha1', kind, metadata: { name, namespace }, spec: { approval: 'Automatic', approved: true, clusterServiceVersionNames: [] } };
    case 'ClusterServiceVersion': // a copy by its operatorNamespace annotation (finalizer-cleanup leaves copies alone); not
      // labelled olm.copiedFrom, which the shipped source excludes, so the adapter does send it
      return { apiVersion: 'operators.coreos.com/v1alpha1', kind, metadata: { name, namespace, annotations: { 'olm.operatorNamespace': 'elsewhere' } }, spec: { displayName: 'canary', install: { strategy: 'deployment' } } };
    case 'Operator':
      return { apiVersion: 'operators.coreos.com/v1', kind, metadata: { name: `${name}.${namespace}` } };
    default:
      throw new Error(`no canary for ${kind}`);
  }
}
