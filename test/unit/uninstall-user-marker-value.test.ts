/**
 * Red team 40, V1 (low) (fixed): the automatic uninstall overwrites any value of olm-medic.io/uninstall that is
 * not exactly "true" — a value a user wrote — with its own record `auto`, and a later
 * AutoUninstallCancelled then removes the annotation altogether.
 *
 * Impact: a user's explicit word on the Operator object is replaced and then erased by olm-medic; a
 * user who wrote `olm-medic.io/uninstall: "false"` ("do not uninstall this one") gets an automatic
 * uninstall started on top of it (its CSV, Deployments, RBAC deleted), and one who wrote "True"/"yes"
 * (meaning a request) sees it turned into olm-medic's own cancellable record. uninstallGate() reads only
 * `=== 'true'` and `=== 'auto'`; the AutoUninstallStarted patch (rv precondition on the object as read,
 * which already holds the user's value) replaces whatever else is there. 8f97ca8's premise is that
 * olm-medic only takes back what it wrote itself.
 *
 * Path: autoUninstall on; an operator with no Subscription whose CSV has been Failed for 2 h; its owner
 * had annotated the Operator `olm-medic.io/uninstall: "false"`.
 *
 * Should: olm-medic does not write its record over a value of the annotation it did not write (it
 * leaves the Operator as the user marked it and, at most, refuses with a Warning Event).
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

const MARKER = 'olm-medic.io/uninstall';
const statusWrite = [
  { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(7200), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } } },
];

function scene(value: string): KubeObject[] {
  const [csv, operator] = failedCsvScene({ createdAgo: 86400, failedAgo: 7200, managedFields: statusWrite });
  operator!.metadata.annotations = { [MARKER]: value };
  return [csv!, operator!];
}

describe('red team 40 V1: a value of olm-medic.io/uninstall a user wrote is not overwritten by the automatic record', () => {
  for (const value of ['false', 'True']) {
    it(`"${value}" on the Operator: no AutoUninstallStarted patch over it, no CSV deleted`, async () => {
      const writes = await operatorUpdate(scene(value), autoUninstallConfig());
      const overwrites = [...new Set(writes.filter((w) => w.startsWith('patch Operator') && w.includes(`"${MARKER}"`)))];
      expect(overwrites, `the user's "${value}" replaced by olm-medic's record`).toEqual([]);
    });
  }
});
