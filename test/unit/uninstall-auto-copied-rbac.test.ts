/**
 * Red team 45, S2 (fixed): a plain single install whose OperatorGroup targets another namespace is refused an
 * automatic uninstall because of OLM's own target-namespace RBAC copies.
 *
 * Scene: package `cluster-observability-and-telemetry-operator` installed in
 * `platform-monitoring-eu` (key truncated to `…-operator.platform-monitoring`, olm-facts §2.2), its
 * OperatorGroup targeting `platform-monitoring-apps`. OLM copies the CSV there and copies its Role
 * (ensureTenantRBAC: `ownedRole.DeepCopy()`, so the component label comes along) with
 * `olm.owner=<csv>`, `olm.owner.namespace=platform-monitoring-apps`, `olm.copiedFrom=platform-monitoring-eu`
 * and an owner reference to the copied CSV (olm-facts §4.1 table, §4.4). The only CSV is long Failed,
 * no Subscription, autoUninstall on.
 *
 * Why it is wrong: README (B) refuses a start only for parts another install could own — "keys of two
 * installs can collide, and an install whose CSV was deleted with its parts orphaned adds no CSV to the
 * evidence" — and plan.ts itself says "OLM's copies in target namespaces name the copied CSVs there".
 * This Role is OLM-marked as a copy of the very long-Failed CSV (same name, olm.copiedFrom its
 * namespace): no other install's. The truncated key happens to name the target namespace, and the
 * start refuses ("the parts of it in platform-monitoring-apps have no long-Failed CSV") — a false
 * refusal that real OLM objects of one install produce. (It is the namespace check, C1, that refuses; the
 * new owner-mark check lets the copy through, as its owner — the copied CSV — is live and uses it.)
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { namespaceFitsKey } from '../../shared/olm/olm.js';
import { COLLIDING, componentsSelecting, iso, NOW } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const { NS_A: NS, KEY, CSV, OP_NAME: NAME } = COLLIDING;
const TARGET = 'platform-monitoring-apps';

const csv: KubeObject = {
  apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion',
  metadata: { name: CSV, namespace: NS, uid: 'csv-1', resourceVersion: '10', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' }, annotations: { 'olm.operatorNamespace': NS, 'olm.targetNamespaces': TARGET } },
  spec: {},
  status: { phase: 'Failed', reason: 'InstallComponentFailed', lastTransitionTime: iso(7200), lastUpdateTime: iso(7200) },
};
const copied: KubeObject = {
  apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion',
  metadata: { name: CSV, namespace: TARGET, uid: 'csv-copy', resourceVersion: '12', creationTimestamp: iso(86400 * 30), labels: { 'olm.copiedFrom': NS }, annotations: { 'olm.operatorNamespace': NS } },
  spec: {},
  status: { phase: 'Failed', reason: 'Copied', message: `The operator is running in ${NS} but is managing this namespace` },
};
const roleLabels = { 'olm.permissions.hash': 'abc', 'olm.managed': 'true', 'olm.owner.kind': 'ClusterServiceVersion' };
const role: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
  metadata: {
    name: `${CSV}-telemetry-x7k2`, namespace: NS, uid: 'role-1', resourceVersion: '20', creationTimestamp: iso(86400 * 30),
    labels: { [KEY]: '', ...roleLabels, 'olm.owner': CSV, 'olm.owner.namespace': NS },
    ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: CSV, uid: 'csv-1', controller: false, blockOwnerDeletion: false }],
  },
};
// ensureTenantRBAC: a deep copy of the Role (its labels, the component key too), owner labels and reference rewritten to the copy.
const roleCopy: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
  metadata: {
    name: `${CSV}-telemetry-x7k2`, namespace: TARGET, uid: 'role-2', resourceVersion: '21', creationTimestamp: iso(86400 * 30),
    labels: { [KEY]: '', ...roleLabels, 'olm.owner': CSV, 'olm.owner.namespace': TARGET, 'olm.copiedFrom': NS },
    ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: CSV, uid: 'csv-copy', controller: false, blockOwnerDeletion: false }],
  },
};
const operator: KubeObject = {
  apiVersion: 'operators.coreos.com/v1', kind: 'Operator',
  metadata: { name: NAME, uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 30) },
  spec: {},
  status: { components: componentsSelecting(KEY, [csv, role, roleCopy]) },
};

describe('red team 45 S2: OLM\'s RBAC copy in a target namespace the truncated key names', () => {
  it('premise: the truncated key names the target namespace too', () => {
    expect(namespaceFitsKey(KEY, TARGET)).toBe(true);
  });

  it('one install, its only CSV long Failed: the automatic uninstall is started (recorded)', async () => {
    const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
    const { kube, writes } = recordingKube([csv, copied, role, roleCopy, operator], { now: () => NOW, patchBody: true });
    await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: NAME }));
    expect(writes.some((w) => w.startsWith(`patch Operator /${NAME}`) && w.includes('"olm-medic.io/uninstall":"auto"')), 'refused because of OLM\'s own copy of the install\'s Role').toBe(true);
  });
});
