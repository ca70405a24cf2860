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
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const iso = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const KEY = 'operators.coreos.com/etcd.ns-a';

const csv: KubeObject = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns-a', uid: 'csv-1', resourceVersion: '10', creationTimestamp: iso(600), labels: { [KEY]: '' } },
  spec: {},
  // Failed as olm-operator's clock (2 h behind the apiserver's) dates it.
  status: { phase: 'Failed', reason: 'InstallComponentFailed', lastTransitionTime: iso(7200), lastUpdateTime: iso(7200) },
};
const operator: KubeObject = {
  apiVersion: 'operators.coreos.com/v1',
  kind: 'Operator',
  metadata: { name: 'etcd.ns-a', uid: 'op-1', resourceVersion: '11', creationTimestamp: iso(600) },
  spec: {},
  status: {
    components: {
      labelSelector: { matchExpressions: [{ key: KEY, operator: 'Exists' }] },
      refs: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: 'ns-a', name: 'etcdoperator.v0.9.4' }],
    },
  },
};

describe('red team 31 C1: an automatic uninstall waits failedCsvGraceSeconds on the apiserver clock', () => {
  it('a CSV that exists for 10 minutes is not "Failed for over 3600s", whatever its lastTransitionTime says', async () => {
    const { kube, writes } = recordingKube([csv, operator], { now: () => NOW, patchBody: true });
    const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
    expect(config.functionOptions['finalizer-cleanup']?.autoUninstall, 'premise: opted in').toBe(true);
    await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd.ns-a' }));
    expect(writes, 'the uninstall started 50 minutes early').toEqual([]);
  });
});
