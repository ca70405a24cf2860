/**
 * Red team 40, L1 (legacy record) (fixed): an automatic-uninstall record written as `true` by olm-medic before
 * 8f97ca8 is still read as the user's request after the upgrade, and deletes a recovered operator.
 *
 * Impact: a healthy (Succeeded) CSV, and after it the operator's Deployments, ServiceAccounts and RBAC,
 * are deleted although no user asked for an uninstall and autoUninstall is off (or its evidence is
 * gone). It is exactly red team 39 A1's path, left open for every Operator object a pre-8f97ca8
 * olm-medic (or an old Knative revision still taking traffic during the rollout) marked.
 *
 * Path: olm-medic <= b8082f5 with autoUninstall recorded an automatic uninstall as
 * `olm-medic.io/uninstall: "true"` (Event AutoUninstallStarted, "Annotated olm-medic.io/uninstall=true")
 * and it stopped short of deleting the Operator object (an opted-out CSV, a labelled Secret:
 * UninstallSecretsKept, a protected namespace) — the record stays. olm-medic is upgraded to 8f97ca8.
 * The operator is reinstalled (a Subscription: kept while subscribed), later the Subscription is
 * deleted to pin the version, or — red team 39's own case — the user fixes the CSV and lifts the opt-out.
 * uninstallGate() returns `go` on marker === 'true' before looking at anything else. The annotation's
 * writer is on record in metadata.managedFields (fieldManager "olm-medic", shared/kube/client.ts), so
 * olm-medic can tell its own old record from a user's request; it does not look.
 *
 * Should: a `true` that olm-medic's field manager wrote (and nobody since) is olm-medic's automatic
 * record, judged like `auto`: the Succeeded CSV is not deleted.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/core/config.js';
import { allFunctions } from '../../functions/index.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

const MARKER = 'olm-medic.io/uninstall';
const statusWrite = (secondsAgo: number) => [
  { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(secondsAgo), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } } },
];

/** The CSV recovered 10 min ago (Succeeded); the Operator carries `true`, written by olm-medic's own field manager 2 h ago. */
function scene(): KubeObject[] {
  const [csv, operator] = failedCsvScene({ createdAgo: 86400, failedAgo: 7200, managedFields: statusWrite(600) });
  csv!.status = { phase: 'Succeeded', reason: 'InstallSucceeded', lastTransitionTime: iso(600), lastUpdateTime: iso(600) };
  operator!.metadata.annotations = { [MARKER]: 'true' };
  (operator!.metadata as unknown as Record<string, unknown>).managedFields = [
    { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1', subresource: 'status', time: iso(86000), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:components': {} } } },
    // What the pre-8f97ca8 AutoUninstallStarted merge patch (fieldManager olm-medic) left on record.
    { manager: 'olm-medic', operation: 'Update', apiVersion: 'operators.coreos.com/v1', time: iso(7000), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${MARKER}`]: {} } } } },
  ];
  return [csv!, operator!];
}
const csvDeletes = (writes: string[]) => [...new Set(writes.filter((w) => w.startsWith('delete ClusterServiceVersion')))];

describe('red team 40 L1: a pre-8f97ca8 automatic record (`true` written by olm-medic) is not a user request', () => {
  it('autoUninstall still on: the recovered, Succeeded CSV is not deleted', async () => {
    const writes = await operatorUpdate(scene(), autoUninstallConfig());
    expect(csvDeletes(writes), 'a Succeeded CSV deleted on olm-medic\'s own old record').toEqual([]);
  });

  it('autoUninstall turned off since: the Succeeded CSV is not deleted', async () => {
    const writes = await operatorUpdate(scene(), loadConfig({}, allFunctions));
    expect(csvDeletes(writes), 'a Succeeded CSV deleted on olm-medic\'s own old record, autoUninstall off').toEqual([]);
  });
});
