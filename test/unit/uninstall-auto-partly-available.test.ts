/**
 * Red team 41, R2 (fixed): the 0266bca "operator runs" check counts a Deployment as running only when BOTH
 * status.availableReplicas > 0 AND its Available condition is True. A Deployment with pods serving
 * (availableReplicas 2 of 3) but Available=False (MinimumReplicasUnavailable: fewer than
 * replicas - maxUnavailable) is judged "not running", and the automatic uninstall of a running
 * operator starts.
 *
 * Impact: the CSV of an operator whose pods are up and serving is deleted (GC takes the Deployment,
 * the uninstall its ServiceAccounts and RBAC), on the very evidence 0266bca says is stale — "an
 * operator whose Deployment is available is running, whatever its CSV still says".
 *
 * Path (realistic-ish): an HA operator deployed with replicas: 3 and required pod anti-affinity on a
 * 2-node cluster (or one pod Pending for lack of resources): 2 pods run, the Deployment's Available
 * condition is False (maxUnavailable 25% of 3 rounds down to 0), and OLM keeps the CSV Failed
 * (ComponentUnhealthy / "waiting for rollout: 2 of 3 updated replicas are available") for hours.
 * The Subscription was deleted to pin the version; autoUninstall is on. The leader pod runs the
 * operator throughout.
 *
 * Should: a Deployment of the operator with available pods stops the automatic uninstall's start
 * (a refusal): nothing recorded on the Operator, nothing deleted.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

function scene(): KubeObject[] {
  const [csv, operator] = failedCsvScene({
    createdAgo: 86400,
    failedAgo: 7200,
    reason: 'ComponentUnhealthy',
    managedFields: [{ manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(7200), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } } }],
  });
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'etcd-operator', namespace: 'ns-a', uid: 'dep-1', resourceVersion: '30', creationTimestamp: iso(86400),
      labels: { 'operators.coreos.com/etcd.ns-a': '' },
      ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', uid: 'csv-1' }],
    },
    spec: { replicas: 3 },
    status: {
      replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1,
      conditions: [
        { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' },
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
      ],
    },
  };
  const components = (operator!.status as { components: { refs: unknown[] } }).components;
  components.refs = [...components.refs, { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns-a', name: 'etcd-operator' }];
  return [csv!, operator!, deployment];
}

describe('red team 41 R2: a Deployment with pods serving but Available=False counts as a running operator', () => {
  it('2 of 3 replicas available: no automatic uninstall recorded, nothing deleted', async () => {
    const writes = await operatorUpdate(scene(), autoUninstallConfig());
    expect([...new Set(writes.filter((w) => w.startsWith('patch Operator') || w.startsWith('delete')))], 'automatic uninstall of a running operator started').toEqual([]);
  });
});
