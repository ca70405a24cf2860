/**
 * Red team 43 (on 79d441e, O1): goesWithItsCsv() takes any owner reference whose KIND is
 * ClusterServiceVersion for one garbage collection resolves to the CSV, whatever its apiVersion.
 * Garbage collection resolves an owner by apiVersion + kind (REST mapping) before anything else
 * (garbagecollector.go isDangling: gc.apiResource(reference.APIVersion, reference.Kind)); an
 * apiVersion with no ClusterServiceVersion kind (`operators.coreos.com/v1`, the version of Operator
 * and OperatorGroup, a common slip in a hand-written reference) is a restMappingError: the dependent is
 * requeued for ever and never deleted. Such a Deployment serves on whatever the uninstall does.
 *
 * Scene (the O1 variant): `auto` recorded by the current olm-medic while the operator's Deployment did
 * not serve; its CSV is gone. The Deployment serves again and its one owner reference says
 * `apiVersion: operators.coreos.com/v1, kind: ClusterServiceVersion` (uid and name of the deleted CSV):
 * garbage collection will not take it. README ("How each function decides", finalizer-cleanup): once
 * every CSV is being deleted, "only a Deployment those CSVs alone own goes with them by garbage
 * collection and no longer counts" — this one does not go, so it counts: the record is taken back and
 * nothing is deleted. Today planOperator() deletes the serving Deployment.
 *
 * Twin: the same reference with OLM's apiVersion (operators.coreos.com/v1alpha1): GC takes it, the
 * uninstall deletes it.
 *
 * Second hole (its suspicion, proved here): the owner CSV is being deleted with
 * propagationPolicy=Orphan (`kubectl delete csv --cascade=orphan`: the `orphan` finalizer). Garbage
 * collection then strips the Deployment's owner reference and leaves it running; until it has, the
 * reference still names the deleting CSV, which usersOf() counted as no user. Whoever deleted the CSV
 * that way kept its Deployment: olm-medic keeps it too (the recorded uninstall is taken back).
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { KEY, autoUninstallConfig, iso, operatorUpdate, recordedOperator, servingDeployment } from '../support/auto-uninstall-scene.js';

const MARKER = 'olm-medic.io/uninstall';

function scene(ownerApiVersion: string, csv?: { finalizers: string[] }): KubeObject[] {
  const dep = servingDeployment([{ apiVersion: ownerApiVersion, kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', uid: 'csv-1' }]);
  if (!csv) return [dep, recordedOperator([dep])];
  // Long Failed, then deleted by someone else with its dependents orphaned (the orphan finalizer holds it).
  const csvObj: KubeObject = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns-a', uid: 'csv-1', resourceVersion: '40', creationTimestamp: iso(86400), deletionTimestamp: iso(5), finalizers: csv.finalizers, labels: { [KEY]: '' } } as KubeObject['metadata'],
    spec: {},
    status: { phase: 'Failed', reason: 'ComponentUnhealthy', lastTransitionTime: iso(7200), lastUpdateTime: iso(7200) },
  };
  return [dep, recordedOperator([dep, csvObj]), csvObj];
}

const update = (objects: KubeObject[]): Promise<string[]> => operatorUpdate(objects, autoUninstallConfig());

describe('red team 43: an owner reference GC cannot resolve (kind ClusterServiceVersion, wrong apiVersion) does not make a serving Deployment "go with its CSV"', () => {
  it('owner reference apiVersion operators.coreos.com/v1: the serving Deployment is not deleted, the record is taken back', async () => {
    const writes = await update(scene('operators.coreos.com/v1'));
    expect(writes.filter((w) => w.startsWith('delete')), 'a serving Deployment garbage collection never removes, deleted on an automatic record').toEqual([]);
    expect(writes.some((w) => w.startsWith('patch Operator /etcd.ns-a') && w.includes(`"${MARKER}":null`))).toBe(true);
  });

  it('twin: owner reference with OLM\'s apiVersion (GC takes it anyway): the uninstall deletes it', async () => {
    const writes = await update(scene('operators.coreos.com/v1alpha1'));
    expect(writes).toContain('delete Deployment ns-a/etcd-operator');
  });
});

describe('red team 43: a Deployment whose CSV is being deleted with its dependents orphaned is kept', () => {
  it('recorded `auto`, the CSV deleting with the orphan finalizer, its Deployment serving: not deleted, the record is taken back', async () => {
    const writes = await update(scene('operators.coreos.com/v1alpha1', { finalizers: ['orphan'] }));
    expect(writes.filter((w) => w.startsWith('delete')), 'a Deployment garbage collection is about to orphan, deleted').toEqual([]);
    expect(writes.some((w) => w.startsWith('patch Operator /etcd.ns-a') && w.includes(`"${MARKER}":null`))).toBe(true);
  });

  it('twin: the CSV deleting in the background (another finalizer holds it): its Deployment goes with it, the record stands (the uninstall waits for the CSV)', async () => {
    const writes = await update(scene('operators.coreos.com/v1alpha1', { finalizers: ['example.com/hold'] }));
    expect(writes.filter((w) => w.startsWith('delete'))).toEqual([]);
    expect(writes.some((w) => w.startsWith('patch Operator /etcd.ns-a') && w.includes(`"${MARKER}":null`)), 'record taken back').toBe(false);
  });
});
