/**
 * Red team 20 (failed on d71ee7a and before), P1: a requested uninstall whose CSV is held Terminating by OLM's own finalizer
 * (operators.coreos.com/csv-cleanup, OLM v0.27+) while olm-operator is down — the situation
 * finalizer-cleanup exists for — was looked at again every 2 s for as long as OLM stayed down
 * (functions/finalizer-cleanup/plan.ts stage(): `if (all.length) return { kind: 'requeue',
 * afterSeconds: after, ... }` with after = 2; the engine re-queues a 'requeued' outcome at the same
 * interval forever, no backoff). Each look is the whole uninstall observation: the Operator, a
 * cluster-wide list of every Subscription, every component, the namespace's InstallPlans (README
 * benchmark: 29 apiserver calls): ~15 requests/s per stuck uninstall, for hours.
 */
import { describe, expect, it } from 'vitest';
import { defaults, plan, type Component, type OperatorObserved } from '../../functions/finalizer-cleanup/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { componentLabels, csv, operatorObject, rfc3339 } from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const NS = 'operators';
const PKG = 'etcd';
const KEY = `operators.coreos.com/${PKG}.${NS}`;
const labels = componentLabels(PKG, NS);

let seq = 0;
function live(o: { apiVersion: string; kind: string; metadata: Record<string, unknown> } & Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  seq++;
  return { ...o, metadata: { uid: `uid-${seq}`, resourceVersion: String(100 + seq), creationTimestamp: rfc3339(new Date(NOW.getTime() - 86_400_000)), ...o.metadata, ...extra } } as unknown as KubeObject;
}
const comp = (x: KubeObject): Component => ({ ref: { apiVersion: x.apiVersion, kind: x.kind, name: x.metadata.name, ...(x.metadata.namespace ? { namespace: x.metadata.namespace } : {}) }, live: x });

describe('an uninstall waiting on a CSV OLM cannot finalize backs off', () => {
  it('a CSV held Terminating by OLM\'s finalizer (olm-operator down): re-checked every 2 s at first, then less often, every 60 s after 4 minutes', () => {
    const op = live(operatorObject({ pkg: PKG, namespace: NS, refs: [] }) as never);
    op.metadata.annotations = { 'olm-medic.io/uninstall': 'true' };
    const waitAfter = (deletingFor: number): unknown => {
      const c = live(csv({ namespace: NS, name: 'etcdoperator.v0.9.4', labels, finalizers: ['operators.coreos.com/csv-cleanup'] }) as never, { deletionTimestamp: rfc3339(new Date(NOW.getTime() - deletingFor * 1000)), finalizers: ['operators.coreos.com/csv-cleanup'] });
      const d = live({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'etcd-operator', namespace: NS, labels } });
      const o: OperatorObserved = { kind: 'operator', operator: op, labelKey: KEY, claimants: [], csvs: [c], components: [comp(c), comp(d)] };
      const p = plan(o, { now: NOW, options: { ...defaults }, policy: { dryRun: false, protectedNamespaces: new Set() } });
      return p.kind === 'requeue' ? p.afterSeconds : p.kind;
    };
    // Before the fix: 2 s whatever the age (one full uninstall look, ~29 apiserver calls, every 2 s for hours).
    expect([0, 20, 60, 120, 240, 7200].map(waitAfter)).toEqual([2, 2, 15, 30, 60, 60]);
  });
});
