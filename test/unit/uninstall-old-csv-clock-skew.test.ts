/**
 * Red team 37 (U1) (fixed): the automatic uninstall (finalizer-cleanup, autoUninstall) starts ~2 h early for
 * a CSV that was installed long ago and failed recently, when olm-operator's clock runs behind.
 *
 * functions/finalizer-cleanup/plan.ts uninstallGate() (~line 250):
 *   failedAt = max(status.lastTransitionTime (OLM's clock), metadata.creationTimestamp)
 * The red-team-31 bound (creationTimestamp) only helps a CSV CREATED recently. A CSV that has existed
 * for a day and went Failed 10 minutes ago, stamped by an olm-operator 2 h behind, reads "Failed for
 * 2 h 10 min": past failedCsvGraceSeconds (3600). The apiserver's own stamp of that status write
 * (metadata.managedFields, subresource status, 10 min ago) — which managedWriteTime() in
 * shared/olm/olm.ts exists to read, and job-conflict/catalog-reschedule now use — is ignored.
 * README, Safety principles: "Time is the apiserver's … so a skewed host cannot act early".
 * SAFE: no write (the CSV has been Failed for 10 minutes on the apiserver's clock).
 */
import { describe, expect, it } from 'vitest';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

describe('red team 37 U1: an automatic uninstall of a long-installed CSV waits failedCsvGraceSeconds on the apiserver clock', () => {
  it('a CSV whose Failed status the apiserver stamped 10 minutes ago is not "Failed for over 3600s"', async () => {
    const scene = failedCsvScene({
      createdAgo: 86400,
      // Failed 10 minutes ago, as olm-operator's clock (2 h behind the apiserver's) dates it.
      failedAgo: 7800,
      // The apiserver stamped olm-operator's status write (the Failed transition) 10 minutes ago.
      managedFields: [
        { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', time: iso(86400), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
        { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(600), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {}, 'f:lastTransitionTime': {} } } },
      ],
    });
    const config = autoUninstallConfig();
    expect(config.functionOptions['finalizer-cleanup']?.autoUninstall, 'premise: opted in').toBe(true);
    const writes = await operatorUpdate(scene, config);
    // Today: the uninstall starts (AutoUninstallStarted patch, then deletes) 50 minutes early.
    expect(writes, 'the uninstall started 50 minutes early').toEqual([]);
  });
});
