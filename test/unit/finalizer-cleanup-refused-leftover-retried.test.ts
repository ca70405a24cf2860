/**
 * Red team 30 (R1): a CSV-owned ClusterRole whose delete the apiserver refused once is never tried
 * again by this process, although the CSV's finalizer was released on the promise that it would be.
 *
 * 6d37069/17074fe: planCsv leaves an owned object whose delete was refused (RefusedWrites, by uid +
 * resourceVersion) and releases olm-medic.io/csv-cleanup with CsvCleanupIncomplete, whose note says
 * "not deleted, the apiserver refused (the leftovers sweep tries again once the CSV is gone)"
 * (functions/finalizer-cleanup/plan.ts planCsv). The leftovers sweep does plan the delete again
 * (planCsv's `!csv` branch: CsvLeftoverDeleted, optional) — but the executor drops every optional
 * write whose target uid/resourceVersion is in RefusedWrites before sending it, whatever the
 * action, the function or the time passed (shared/core/executor.ts act(): "Refused for good
 * already, in this very state: not sent again"), with no Event for it. A ClusterRole nothing else
 * changes keeps its resourceVersion, so the retry never happens while the process lives (the map
 * holds 1,000 entries; no expiry).
 *
 * The commit's own example of a refusal is narrowed RBAC. A cluster admin sees the WriteRefused
 * Warning, restores `delete clusterroles`, and the orphaned ClusterRole of the uninstalled operator
 * (cluster-wide permissions nobody owns any more) stays until olm-medic restarts: every sweep
 * "refuses" it silently.
 */
import { describe, expect, it } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import { recordingKube, withRuntime } from '../support/fake-runtime.js';
import { csv as csvFixture, csvClusterRole, rfc3339 } from '../fixtures/olm-objects.js';

const NS = 'operators';
const NAME = 'etcdoperator.v0.9.4';
const NOW = new Date('2025-03-01T12:05:00Z');
const CSV_REF: Ref = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: NS, name: NAME };

describe('red team 30 R1: a refused leftover is tried again by the leftovers sweep, as CsvCleanupIncomplete promises', () => {
  it('after the RBAC is restored, the sweep deletes the orphaned ClusterRole', async () => {
    const csv = csvFixture({ namespace: NS, name: NAME, finalizers: ['olm-medic.io/csv-cleanup'] }) as unknown as KubeObject;
    csv.metadata = { ...csv.metadata, uid: 'csv-uid', resourceVersion: '10', creationTimestamp: '2025-02-01T00:00:00Z', deletionTimestamp: rfc3339(new Date('2025-03-01T12:00:00Z')) };
    const cr = csvClusterRole({ csvName: NAME, csvNamespace: NS }) as unknown as KubeObject;
    cr.metadata = { ...cr.metadata, uid: 'cr-uid', resourceVersion: '11', creationTimestamp: '2025-02-01T00:00:00Z' };
    const store: KubeObject[] = [csv, cr];
    let rbacNarrowed = true;
    const deletes: string[] = [];
    const notes: string[] = [];
    const { kube } = recordingKube(store, {
      now: () => NOW,
      async delete(ref) {
        deletes.push(`${ref.kind}/${ref.name}`);
        if (rbacNarrowed) {
          throw new KubeError(403, 'Forbidden', `clusterroles.rbac.authorization.k8s.io "${ref.name}" is forbidden: User "system:serviceaccount:olm-medic:olm-medic" cannot delete resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`);
        }
        store.splice(store.findIndex((o) => o.kind === ref.kind && o.metadata.name === ref.name), 1);
        return 'deleted';
      },
      async mergePatch(ref, patch) {
        // Our finalizer released on a deleting CSV with no other finalizer: the apiserver removes it.
        const fins = (patch as { metadata?: { finalizers?: string[] } }).metadata?.finalizers;
        if (ref.kind === 'ClusterServiceVersion' && Array.isArray(fins) && fins.length === 0) store.splice(store.findIndex((o) => o.kind === 'ClusterServiceVersion'), 1);
        return {} as KubeObject;
      },
      async create(o) {
        notes.push(String((o as { note?: string }).note));
        return o;
      },
    });
    await withRuntime(kube, { now: () => NOW }, async (rt) => {
      const fn = finalizerCleanup as AnyFunction;
      const first = await rt.engine.reconcile(fn, CSV_REF);
      expect(first.status, 'premise: the delete is refused (403) and skipped').toBe('refused');
      const second = await rt.engine.reconcile(fn, CSV_REF);
      expect(second.status, 'premise: the CSV is released with CsvCleanupIncomplete').toBe('acted');
      expect(store.some((o) => o.kind === 'ClusterServiceVersion'), 'premise: the CSV is gone').toBe(false);
      expect(notes.some((n) => n.includes('the leftovers sweep tries again once the CSV is gone')), 'premise: the promise, in an Event').toBe(true);

      // The admin restores `delete clusterroles`. The ClusterRole is unchanged (same resourceVersion).
      rbacNarrowed = false;
      const before = deletes.length;
      const swept = await rt.engine.handle({ kind: 'sweep', functions: ['finalizer-cleanup'], meta: { id: 'p1', source: '/ping', type: 'dev.knative.sources.ping' } });
      const look = swept.find((o) => o.target === `ClusterServiceVersion/${NS}/${NAME}`);
      expect(look?.reason ?? '', 'premise: the leftovers sweep planned the delete of the orphan').toContain('deleted 1 leftover(s) of deleted CSV');
      expect(deletes.slice(before), 'the leftovers sweep sent the delete again').toContain(`ClusterRole/${cr.metadata.name}`);
      expect(store.some((o) => o.kind === 'ClusterRole')).toBe(false);
    });
  });
});
