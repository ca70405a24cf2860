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
