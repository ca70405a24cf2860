/**
 * Red team 42, O1: an automatic-uninstall record from before the C1 check (637df7b) carries the
 * uninstall into a namespace that holds no CSV under the key and deletes a Deployment there that
 * serves. Both checks that should stop it look at it only at the start (C1) or only while a CSV
 * under the key still stands (R1).
 *
 * Path: the red team 40 C1 scene (keys of two installs collide: A in platform-monitoring-eu, B in
 * platform-monitoring-us; B was taken off OLM with `--cascade=orphan`, its Deployment runs on with the
 * component label, no owner). olm-medic 8f97ca8 (autoUninstall on, no C1 check yet) recorded `auto`
 * on A's long-Failed CSV — or one <= b8082f5 recorded `true` (its field manager, olm-medic) — and
 * deleted A's CSV; garbage collection took A's Deployment. The rollout to the current olm-medic lands
 * while it waits for that (a CSV held by OLM's finalizer is polled for up to hours). Now no CSV under
 * the key stands, so uninstallGate()'s recorded branch skips the R1 look at serving Deployments
 * (`underKey.some(!deleting) ? runningDeployments(o) : undefined`) and the C1 look is only on the
 * start path: planOperator() deletes B's serving Deployment.
 *
 * Why it is wrong: README "How each function decides": an automatic uninstall is not done while a
 * namespace holding a part under the key holds no long-Failed CSV, nor while a Deployment of the
 * operator serves; 34515a3 (R1) took back records "from before it" because the start checks alone
 * left them open. The reason the record may skip a serving Deployment once every CSV is deleting
 * ("its Deployments go with it: garbage collection") does not hold for a Deployment no CSV owns:
 * nothing will take it, it is a running operator that nobody asked to remove.
 *
 * Should: nothing in platform-monitoring-us is deleted; the twin without B still finishes A's uninstall.
 *
 * Variant on the current code alone (no old record, one install): olm-medic records `auto` while the
 * operator's Deployment does not serve (pods rescheduling); the admin then takes the operator off OLM
 * the documented Kubernetes way, `kubectl delete csv --cascade=orphan` (GC drops the Deployment's owner
 * reference instead of deleting it), and it serves again. The record's next look sees no CSV under the
 * key and deletes the serving, ownerless Deployment. Its twin (the Deployment still owned by the deleted
 * CSV: garbage collection takes it anyway) may be deleted.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { componentLabelKey } from '../../shared/olm/olm.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';
import { COLLIDING, componentsSelecting, iso, NOW, recordedOperator, servingDeployment } from '../support/auto-uninstall-scene.js';

const MARKER = 'olm-medic.io/uninstall';
const { PKG, NS_A, NS_B, KEY, CSV, OP_NAME } = COLLIDING;

function scene(o: { withB: boolean; marker: 'auto' | 'true'; csvs?: string }): KubeObject[] {
  // A's leftover: a ClusterRole labelled as owned by A's CSV, which the old olm-medic already deleted.
  const crA: KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: 'telemetry-controller-a-abc12', uid: 'cr-a', resourceVersion: '40', creationTimestamp: iso(86400 * 30),
      labels: { [KEY]: '', 'olm.owner': CSV, 'olm.owner.namespace': NS_A, 'olm.owner.kind': 'ClusterServiceVersion' },
    },
  };
  // B: its CSV deleted with --cascade=orphan long ago: the Deployment runs on, no owner, label kept.
  const depB: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'telemetry-controller', namespace: NS_B, uid: 'dep-b', resourceVersion: '50', creationTimestamp: iso(86400 * 60), labels: { [KEY]: '' } },
    spec: { replicas: 1 },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
  };
  const parts = o.withB ? [crA, depB] : [crA];
  const operator: KubeObject = {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: {
      name: OP_NAME, uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60),
      annotations: { [MARKER]: o.marker, ...(o.csvs ? { 'olm-medic.io/uninstall-csvs': o.csvs } : {}) },
      // What the old AutoUninstallStarted merge patch (fieldManager olm-medic) left on record.
      managedFields: [
        { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1', subresource: 'status', time: iso(300), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:components': {} } } },
        { manager: 'olm-medic', operation: 'Update', apiVersion: 'operators.coreos.com/v1', time: iso(3600), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${MARKER}`]: {} } } } },
      ],
    } as KubeObject['metadata'],
    spec: {},
    status: { components: componentsSelecting(KEY, parts) },
  };
  return [...parts, operator];
}

/** One install (etcd in ns-a), `auto` recorded by the current olm-medic; its CSV is gone. */
function singleInstall(owned: boolean): KubeObject[] {
  const dep = servingDeployment(owned ? [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', name: 'etcdoperator.v0.9.4', uid: 'csv-1' }] : undefined);
  return [dep, recordedOperator([dep])];
}

async function update(objects: KubeObject[], name = OP_NAME): Promise<string[]> {
  const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
  const { kube, writes } = recordingKube(objects, { now: () => NOW, patchBody: true });
  await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name }));
  return writes;
}

describe('red team 42 O1: an old automatic record does not delete a serving Deployment in a namespace with no CSV under the key', () => {
  it('premise: the keys collide', () => {
    expect(componentLabelKey(PKG, NS_B)).toBe(KEY);
  });

  it('`auto` (8f97ca8, before C1), A\'s CSV already deleted: B\'s serving Deployment is not deleted', async () => {
    const writes = await update(scene({ withB: true, marker: 'auto' }));
    expect(writes.filter((w) => w.includes(` ${NS_B}/`)), "B's serving Deployment deleted on A's old automatic record").toEqual([]);
  });

  it('legacy `true` (olm-medic\'s own, <= b8082f5), the same: B\'s serving Deployment is not deleted', async () => {
    const writes = await update(scene({ withB: true, marker: 'true' }));
    expect(writes.filter((w) => w.includes(` ${NS_B}/`)), "B's serving Deployment deleted on A's legacy record").toEqual([]);
  });

  it('twin: without B, a record naming A\'s CSV (the current olm-medic\'s) removes A\'s leftover', async () => {
    const writes = await update(scene({ withB: false, marker: 'auto', csvs: `${NS_A}/${CSV}` }));
    expect(writes).toContain('delete ClusterRole /telemetry-controller-a-abc12');
  });

  it('variant, current code: `auto` recorded, the CSV then deleted with --cascade=orphan, its Deployment serving again: not deleted', async () => {
    const writes = await update(singleInstall(false), 'etcd.ns-a');
    expect(writes.filter((w) => w.startsWith('delete')), 'a serving Deployment no CSV owns deleted on an automatic record').toEqual([]);
  });

  it('twin: the Deployment still owned by the deleted CSV (GC takes it anyway) may be deleted', async () => {
    const writes = await update(singleInstall(true), 'etcd.ns-a');
    expect(writes).toContain('delete Deployment ns-a/etcd-operator');
  });
});
