/**
 * Red team 31 (C1): the automatic uninstall (finalizer-cleanup, opted in with autoUninstall) judges
 * "the CSV has been Failed longer than failedCsvGraceSeconds" from status.lastTransitionTime alone
 * (plan.ts uninstallGate), a time olm-operator writes with ITS OWN host clock. README, Safety
 * principles: "Time is the apiserver's. Fences, deadlines, TTLs and graces are judged on the
 * apiserver's clock … so a skewed host cannot act early". An OLM pod whose clock runs 2 h behind
 * stamps a CSV created 10 minutes ago (metadata.creationTimestamp: the apiserver's clock) as
 * Failed "2 hours ago": a CSV cannot have failed before it existed, yet olm-medic starts the
 * uninstall (AutoUninstallStarted, then deletes the CSV and the rest) 50 minutes early.
 */
import { describe, expect, it } from 'vitest';
import { autoUninstallConfig, failedCsvScene, operatorUpdate } from '../support/auto-uninstall-scene.js';

describe('red team 31 C1: an automatic uninstall waits failedCsvGraceSeconds on the apiserver clock', () => {
  it('a CSV that exists for 10 minutes is not "Failed for over 3600s", whatever its lastTransitionTime says', async () => {
    // Failed as olm-operator's clock (2 h behind the apiserver's) dates it.
    const scene = failedCsvScene({ createdAgo: 600, failedAgo: 7200 });
    const config = autoUninstallConfig();
    expect(config.functionOptions['finalizer-cleanup']?.autoUninstall, 'premise: opted in').toBe(true);
    const writes = await operatorUpdate(scene, config);
    expect(writes, 'the uninstall started 50 minutes early').toEqual([]);
  });
});
