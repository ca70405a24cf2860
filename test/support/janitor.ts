/**
 * A test-only remediation used to exercise the core against the real apiserver: it deletes
 * ConfigMaps labelled test.olm-medic.io/state=stale, annotates state=patch, refuses state=refuse.
 * `observe` can be made to return a stale snapshot first, to force a precondition conflict.
 */
import type { Plan, RemediationFunction } from '../../shared/core/types.js';
import { target } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';

export const STATE = 'test.olm-medic.io/state';

export interface JanitorControls {
  /** Snapshots handed out instead of a fresh read, first in first out. */
  staleSnapshots: KubeObject[];
}

export function janitor(controls: JanitorControls = { staleSnapshots: [] }): RemediationFunction<KubeObject> {
  return {
    name: 'test-janitor',
    kinds: ['v1/ConfigMap'],
    summary: 'test-only: deletes or annotates labelled ConfigMaps',
    targets: (t) => (t.ref.kind === 'ConfigMap' && t.object?.metadata.labels?.[STATE] ? [t.ref] : []),
    async *sweep(read: Reader, scope) {
      for await (const cm of read.list('v1', 'ConfigMap', { labelSelector: STATE, ...(scope.namespace ? { namespace: scope.namespace } : {}) })) {
        yield { apiVersion: 'v1', kind: 'ConfigMap', name: cm.metadata.name, namespace: cm.metadata.namespace! };
      }
    },
    async observe(ref: Ref, read: Reader) {
      return controls.staleSnapshots.shift() ?? (await read.get(ref));
    },
    plan(cm: KubeObject): Plan {
      const state = cm.metadata.labels?.[STATE];
      const t = target(cm);
      if (cm.metadata.deletionTimestamp) return { kind: 'noop', reason: 'already deleting' };
      switch (state) {
        case 'stale':
          return { kind: 'act', summary: 'delete stale ConfigMap', actions: [{ verb: 'delete', target: t, propagationPolicy: 'Background', reason: 'TestConfigMapDeleted', note: `ConfigMap ${t.name} is labelled stale` }] };
        case 'patch':
          if (cm.metadata.annotations?.['test.olm-medic.io/done'] === 'true') return { kind: 'noop', reason: 'already annotated' };
          return { kind: 'act', summary: 'annotate', actions: [{ verb: 'patch', target: { ...t, resourceVersion: t.resourceVersion! }, patch: { metadata: { annotations: { 'test.olm-medic.io/done': 'true' } } }, reason: 'TestPatched', note: 'annotated done' }] };
        case 'refuse':
          return { kind: 'refuse', regarding: t, reason: 'TestRefused', note: 'refusing on purpose' };
        default:
          return { kind: 'noop', reason: 'not labelled' };
      }
    },
  };
}
