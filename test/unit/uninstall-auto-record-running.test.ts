/**
 * Red team 41, R1 (fixed): a recorded automatic uninstall (`auto`, or a legacy `true` only olm-medic's field
 * manager set) never looks at the operator's Deployment: the 0266bca refusal ("not started while a
 * Deployment of the operator is available") guards only the START, so a record written before the
 * Deployment was available — or written by an olm-medic from before 0266bca (8f97ca8, 637df7b) or
 * before 8f97ca8 (legacy `true`) — deletes the CSV of an operator that runs.
 *
 * Impact: the running operator's CSV is deleted (GC then takes its Deployment through the owner
 * reference; the uninstall goes on to its ServiceAccounts and RBAC) on evidence 0266bca itself calls
 * stale: "an operator whose Deployment is available is running, whatever its CSV still says (a CSV OLM
 * cannot parse any more stays Failed with its operator running)". Nobody asked for an uninstall.
 *
 * Path (realistic-ish): autoUninstall on; a CSV whose install strategy no longer parses
 * (InvalidInstallStrategy) stays Failed for > 1 h, its Subscription deleted (pinned). (a) olm-medic at
 * 8f97ca8/637df7b records `auto` and is rolled to 0266bca before the CSV stage runs (it waits on an
 * InstallPlan still Installing, or the rollout lands in between); or the current olm-medic records
 * `auto` while the Deployment's pods are crash-looping / rescheduling after a node drain, and they come
 * back Available during the InstallPlan stage / unfinished-plan wait. (b) the same with the legacy
 * `true` of a pre-8f97ca8 olm-medic, which 637df7b now carries on as a record. In every case
 * uninstallGate()'s `recorded` branch returns go as soon as no CSV under the key is healthy, and the
 * Deployment-available check (inside `if (ctx.options.autoUninstall === true)` after it) is never reached.
 *
 * Should: while a CSV under the key is not yet being deleted, an available Deployment of the operator
 * stops a recorded automatic uninstall as it stops its start: the CSV is not deleted.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

const MARKER = 'olm-medic.io/uninstall';

function scene(marker: 'auto' | 'legacy-true'): KubeObject[] {
  const [csv, operator] = failedCsvScene({
    createdAgo: 86400,
    failedAgo: 7200,
    reason: 'InvalidInstallStrategy',
    // OLM rewrites the status of such a CSV on every sync (lastUpdateTime moves, lastTransitionTime stays).
    updatedAgo: 30,
    managedFields: [{ manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(30), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } } }],
  });
  operator!.metadata.annotations = { [MARKER]: marker === 'auto' ? 'auto' : 'true' };
  (operator!.metadata as unknown as Record<string, unknown>).managedFields = [
    { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1', subresource: 'status', time: iso(86000), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:components': {} } } },
    { manager: 'olm-medic', operation: 'Update', apiVersion: 'operators.coreos.com/v1', time: iso(600), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${MARKER}`]: {} } } } },
  ];
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'etcd-operator', namespace: 'ns-a', uid: 'dep-1', resourceVersion: '30', creationTimestamp: iso(86400),
      labels: { 'operators.coreos.com/etcd.ns-a': '' },
      ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', uid: 'csv-1' }],
    },
    spec: { replicas: 1 },
    status: { replicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
  };
  const components = (operator!.status as { components: { refs: unknown[] } }).components;
  components.refs = [...components.refs, { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns-a', name: 'etcd-operator' }];
  return [csv!, operator!, deployment];
}
const deletes = (writes: string[]) => [...new Set(writes.filter((w) => w.startsWith('delete')))];

describe('red team 41 R1: a recorded automatic uninstall stops while the operator\'s Deployment is available', () => {
  it('`auto` record, CSV still Failed (InvalidInstallStrategy), Deployment available: nothing deleted', async () => {
    const writes = await operatorUpdate(scene('auto'), autoUninstallConfig());
    expect(deletes(writes), "a running operator's CSV deleted on an automatic record").toEqual([]);
  });

  it('legacy `true` (only olm-medic\'s field manager set it), the same: nothing deleted', async () => {
    const writes = await operatorUpdate(scene('legacy-true'), autoUninstallConfig());
    expect(deletes(writes), "a running operator's CSV deleted on a pre-8f97ca8 record").toEqual([]);
  });
});
