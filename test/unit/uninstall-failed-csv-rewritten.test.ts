/**
 * The automatic uninstall's clock-skew bound must not stop it for a CSV whose status OLM keeps
 * rewriting while it stays Failed. olm-operator calls SetPhaseWithEvent(Failed, CSVReasonInvalidStrategy = "InvalidInstallStrategy", …)
 * on every sync of a CSV whose install strategy it cannot parse (operator.go,
 * parseStrategiesAndUpdateStatus): a new status.lastUpdateTime each time, the same
 * lastTransitionTime, and a status write the apiserver stamps. The bound of e7ec2b8 (red team 37:
 * "never earlier than the last status write") read each such write as the moment it failed, so a CSV
 * Failed for two hours never became "Failed for over 3600s": no automatic uninstall, ever.
 * The bound is the skew of OLM's clock (apiserver stamp − lastUpdateTime of the same write) applied
 * to lastTransitionTime; red team 37's case (a clock 2 h behind) stays held back, below.
 */
import { describe, expect, it } from 'vitest';
import { autoUninstallConfig, failedCsvScene, iso, operatorUpdate } from '../support/auto-uninstall-scene.js';

/** A CSV created a day ago, Failed since `failed` s ago, its status last written `written` s ago (apiserver) with lastUpdateTime `updated` s ago (OLM's clock). */
async function writesFor(o: { failed: number; updated: number; written: number }): Promise<string[]> {
  const managedFields = [
    { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', time: iso(86400), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
    { manager: 'olm', operation: 'Update', apiVersion: 'operators.coreos.com/v1alpha1', subresource: 'status', time: iso(o.written), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {}, 'f:lastUpdateTime': {} } } },
  ];
  return operatorUpdate(failedCsvScene({ createdAgo: 86400, failedAgo: o.failed, updatedAgo: o.updated, reason: 'InvalidInstallStrategy', managedFields }), autoUninstallConfig());
}

describe('the automatic uninstall of a CSV that OLM keeps rewriting while Failed', () => {
  it('Failed 2 h ago (clocks agree), status rewritten by the last sync 1 min ago: the uninstall starts', async () => {
    const writes = await writesFor({ failed: 7200, updated: 60, written: 60 });
    expect(writes.length, 'no write: the rewrite was read as the failure').toBeGreaterThan(0);
    expect(writes[0]).toMatch(/Operator/);
  });

  it('twin (red team 37): Failed 10 min ago by the apiserver, dated 2 h 10 min ago by a clock 2 h behind: nothing yet', async () => {
    expect(await writesFor({ failed: 7800, updated: 7800, written: 600 })).toEqual([]);
  });

  it('twin: the same clock 2 h behind, its status rewritten 1 min ago (its lastUpdateTime reads 2 h 1 min ago): still nothing', async () => {
    expect(await writesFor({ failed: 7800, updated: 7260, written: 60 })).toEqual([]);
  });
});
