/** Prometheus metrics, in a registry owned by the app (no globals). */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'olm_medic_' });
  return {
    registry,
    events: new Counter({ name: 'olm_medic_cloudevents_total', help: 'CloudEvents received, by type, object kind and outcome', labelNames: ['type', 'kind', 'outcome'], registers: [registry] }),
    eventSeconds: new Histogram({ name: 'olm_medic_cloudevent_duration_seconds', help: 'Time to answer a CloudEvent', labelNames: ['kind'], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60], registers: [registry] }),
    plans: new Counter({ name: 'olm_medic_plans_total', help: 'Plans made, by function and decision', labelNames: ['function', 'decision'], registers: [registry] }),
    actions: new Counter({ name: 'olm_medic_actions_total', help: 'Writes attempted, by function, verb, kind and result', labelNames: ['function', 'verb', 'kind', 'result'], registers: [registry] }),
    kubeRequests: new Counter({ name: 'olm_medic_kube_requests_total', help: 'Kubernetes API requests, by verb, resource and HTTP code (0 = network error)', labelNames: ['verb', 'resource', 'code'], registers: [registry] }),
    kubeSeconds: new Histogram({ name: 'olm_medic_kube_request_duration_seconds', help: 'Kubernetes API request latency', labelNames: ['verb'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers: [registry] }),
    recorded: new Counter({ name: 'olm_medic_k8s_events_total', help: 'Kubernetes Events recorded, by result', labelNames: ['result'], registers: [registry] }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Label values must come from a fixed set, or any sender could grow the registry without bound
 * (one series per distinct value). CloudEvent types we know, else "other".
 */
const KNOWN_TYPES = new Set([
  ...['resource', 'ref'].flatMap((m) => ['add', 'update', 'delete'].map((v) => `dev.knative.apiserver.${m}.${v}`)),
  'dev.knative.sources.ping',
  'io.olm-medic.sweep',
]);

export function typeLabel(type: unknown): string {
  return typeof type === 'string' && KNOWN_TYPES.has(type) ? type : 'other';
}

/** Kinds the functions declare ("<apiVersion>/<kind>" known to `wants`), else "other"; "" for non-resource events. */
export function kindLabel(kind: unknown, apiVersion: unknown, wants: (apiVersion: string, kind: string) => boolean): string {
  if (kind === '' || kind === undefined) return '';
  return typeof kind === 'string' && typeof apiVersion === 'string' && wants(apiVersion, kind) ? kind : 'other';
}
