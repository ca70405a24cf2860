/**
 * Red team 17 (F1; failed on 3546a89): the orphan sweep of finalizer-cleanup path A decided "the CSV
 * is gone" from a GET made BEFORE it listed the labelled objects. A CSV re-created with the same name in between (a reinstall
 * after the old one was deleted while OLM was down) re-adopts its identically named, unchanged
 * ClusterRole (same labels, same resourceVersion): the sweep then deletes the live install's RBAC.
 */
import { describe, expect, it } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { plan } from '../../functions/finalizer-cleanup/plan.js';
import { NO_POLICY, type ObserveContext } from '../../shared/core/types.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const octx: ObserveContext = { now: NOW, options: {}, policy: NO_POLICY, clock: () => NOW };
const CSV_REF = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: 'ns-a', name: 'etcd.v1' };

const role: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'etcd.v1-abc', uid: 'cr-1', resourceVersion: '10', creationTimestamp: '2029-12-31T00:00:00Z', labels: { 'olm.owner': 'etcd.v1', 'olm.owner.namespace': 'ns-a', 'olm.owner.kind': 'ClusterServiceVersion' } },
};
const csv: KubeObject = { apiVersion: CSV_REF.apiVersion, kind: CSV_REF.kind, metadata: { name: 'etcd.v1', namespace: 'ns-a', uid: 'csv-2', resourceVersion: '20', creationTimestamp: '2030-01-01T00:00:00Z' }, status: { phase: 'Pending' } };

describe('redteam17 orphan sweep ordering', () => {
  it('RT17-F1 does not delete a labelled ClusterRole whose CSV exists by the time the labelled objects are listed', async () => {
    let csvLive = false;
    const reader: Reader = {
      get: (async (ref: Ref) => (ref.kind === 'ClusterServiceVersion' && csvLive ? csv : undefined)) as Reader['get'],
      list: ((apiVersion: string, kind: string, _opts: ListOptions = {}) =>
        (async function* () {
          // The reinstall lands after the CSV GET and before the labelled lists.
          csvLive = true;
          if (kind === 'ClusterRole') yield role;
        })()) as Reader['list'],
    };
    const observed = await finalizerCleanup.observe(CSV_REF, reader, octx);
    const p = plan(observed!, { now: NOW, options: {}, policy: NO_POLICY });
    const deletes = p.kind === 'act' ? p.actions.filter((a) => a.verb === 'delete').map((a) => a.target.name) : [];
    expect(deletes).not.toContain('etcd.v1-abc');
  });

  it('control: a CSV still gone after the lists leaves its labelled ClusterRole an orphan, deleted', async () => {
    const reader: Reader = {
      get: (async () => undefined) as Reader['get'],
      list: ((_a: string, kind: string) => (async function* () { if (kind === 'ClusterRole') yield role; })()) as Reader['list'],
    };
    const p = plan((await finalizerCleanup.observe(CSV_REF, reader, octx))!, { now: NOW, options: {}, policy: NO_POLICY });
    expect(p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.name}`) : p).toEqual(['delete etcd.v1-abc']);
  });
});
