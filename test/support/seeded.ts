/**
 * Helpers around the seed situations (test/scenarios/seeds.ts) for suites that deliver events
 * themselves: which recorded stream and namespaces belong to a seed, CloudEvents for the live
 * objects a seed created (what an ApiServerSource would send), and snapshots of those objects.
 */
import type { CloudEvent } from 'cloudevents';
import type { Kube, KubeObject } from '../../shared/kube/types.js';
import { seeds } from '../scenarios/seeds.js';
import { apiServerEvent, pingEvent } from './events.js';
import { keyOf } from './invariants.js';

export type Seed = (typeof seeds)[number];

/** test/fixtures/streams/<file> recorded for a seed. */
export function streamFile(seed: Seed): string {
  return `${seed.name.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)}.jsonl`;
}

const NAMESPACES: Record<string, (id: string) => string[]> = {
  staleUnpackJob: (id) => [`olm-${id}`, `team-a-${id}`, `team-b-${id}`],
  missingOwner: (id) => [`apps-${id}`],
  stuckCatalogPod: (id) => [`olm-cat-${id}`],
  csvDeletedWhileDown: (id) => [`ops-${id}`],
  uninstallLeftovers: (id) => [`legacy-${id}`],
};

/** The namespaces a seed creates for `id`. */
export function seedNamespaces(seed: Seed, id: string): string[] {
  const f = NAMESPACES[seed.name];
  if (!f) throw new Error(`unknown seed ${seed.name}`);
  return f(id);
}

/** [apiVersion, kind, resource, namespaced] of everything the seeds create. */
const KINDS: [string, string, string, boolean][] = [
  ['batch/v1', 'Job', 'jobs', true],
  ['v1', 'ConfigMap', 'configmaps', true],
  ['v1', 'Pod', 'pods', true],
  ['v1', 'ServiceAccount', 'serviceaccounts', true],
  ['apps/v1', 'Deployment', 'deployments', true],
  ['operators.coreos.com/v1alpha1', 'Subscription', 'subscriptions', true],
  ['operators.coreos.com/v1alpha1', 'InstallPlan', 'installplans', true],
  ['operators.coreos.com/v1alpha1', 'ClusterServiceVersion', 'clusterserviceversions', true],
  ['operators.coreos.com/v1alpha1', 'CatalogSource', 'catalogsources', true],
  ['operators.coreos.com/v1', 'OperatorGroup', 'operatorgroups', true],
  ['v1', 'Node', 'nodes', false],
  ['operators.coreos.com/v1', 'Operator', 'operators', false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false],
];

/** Kinds the shipped ApiServerSource watches (infra/base/apiserversource.yaml). */
const WATCHED = new Set(['Job', 'Pod', 'Subscription', 'InstallPlan', 'ClusterServiceVersion', 'Operator']);

export interface Snapshot {
  /** key (resource/namespace/name) -> the object as listed. */
  objects: Map<string, KubeObject>;
}

/** Every object of the seed kinds in `namespaces`, plus cluster-scoped ones whose name contains `id`. */
export async function snapshot(admin: Kube, namespaces: string[], id: string): Promise<Snapshot> {
  const objects = new Map<string, KubeObject>();
  await Promise.all(
    KINDS.map(async ([apiVersion, kind, resource, namespaced]) => {
      const scopes = namespaced ? namespaces : [undefined];
      for (const ns of scopes) {
        for await (const o of admin.list(apiVersion, kind, ns ? { namespace: ns } : {})) {
          if (!namespaced && !o.metadata.name.includes(id)) continue;
          objects.set(keyOf(resource, o.metadata.namespace, o.metadata.name), o);
        }
      }
    }),
  );
  return { objects };
}

/** `add` events (Resource mode) for the watched objects in `snap`, in a stable order. */
export function addEvents(snap: Snapshot): CloudEvent<unknown>[] {
  return [...snap.objects.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .filter(([, o]) => WATCHED.has(o.kind) && (o.kind !== 'Pod' || o.metadata.labels?.['olm.catalogSource']))
    .map(([, o]) => apiServerEvent('add', o) as CloudEvent<unknown>);
}

/** A PingSource tick asking for a full sweep. */
export const sweepEvent = (): CloudEvent<unknown> => pingEvent();
