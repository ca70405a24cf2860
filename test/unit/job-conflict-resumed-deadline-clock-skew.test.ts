/**
 * Red team 37 (D1) (fixed): job-conflict deletes a RUNNING bundle-unpack Job inside its deadline when the
 * Job was suspended (e.g. queued by Kueue), resumed, and kube-controller-manager's clock runs behind.
 *
 * functions/job-conflict/plan.ts jobState() (~line 126):
 *   started = latestOf(seconds(status.startTime), created)
 * bounds the KCM-clock startTime only by metadata.creationTimestamp. The Job controller RESETS
 * status.startTime when a suspended Job resumes (the plan's own comment says so), so for a resumed
 * Job creationTimestamp is far earlier than the real start and bounds nothing. The apiserver's stamp
 * of the status write that set startTime (managedFields, manager kube-controller-manager,
 * subresource status) — the bound jobState already uses for finishedAt (managedWriteTime) — is
 * ignored for `started`.
 *
 * Scene: Job created 30 min ago suspended; resumed 4 min ago (apiserver stamps: Kueue's spec write and
 * KCM's status write, both 4 min ago). KCM runs 10 min behind, so status.startTime reads 14 min ago.
 * activeDeadlineSeconds 600: the Job controller fails it 6 min from now. olm-medic (margin 60 s):
 * "past its deadline and still not finished" → DELETE of a healthy running unpack Job ~5 min early.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';
import { CAT, HASH, IMAGE, scene, shortName } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { k, ago, catsrc, configMap, og } = scene(NOW);

function resumedJob(): KubeObject {
  const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', olmVersion: 'v0.28' });
  (j.spec as { suspend?: boolean }).suspend = false;
  // startTime as a KCM 10 minutes behind stamps a resume 4 minutes ago.
  j.status = olm.jobStatusActive({ startedAt: ago(240 + 600) });
  return k(j, 'job-1', {
    creationTimestamp: olm.rfc3339(ago(1800)),
    managedFields: [
      { manager: 'catalog', operation: 'Update', apiVersion: 'batch/v1', time: olm.rfc3339(ago(1800)), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
      { manager: 'kueue', operation: 'Update', apiVersion: 'batch/v1', time: olm.rfc3339(ago(240)), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:suspend': {} } } },
      { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'batch/v1', subresource: 'status', time: olm.rfc3339(ago(240)), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:startTime': {}, 'f:active': {} } } },
    ],
  } as Partial<KubeObject['metadata']>);
}

function unpackingSub(): KubeObject {
  const s = olm.subscription({ namespace: 'ns-b', name: 'etcd', package: 'etcd', source: 'operatorhubio-catalog', sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: ago(240), conditions: [olm.bundleUnpackingCondition(ago(240), { olmVersion: 'v0.28' })] });
  return k(s, 'sub-ns-b');
}

describe('red team 37 D1: a resumed unpack Job is not deleted inside its deadline because the Job controller clock is behind', () => {
  it('a Job whose startTime the apiserver stamped 4 minutes ago is not "past its 600 s deadline"', async () => {
    const job = resumedJob();
    expect(job.metadata.name).toBe(HASH);
    const { kube, writes } = recordingKube([catsrc(), configMap(), job, unpackingSub(), og('ns-b', 'og')], { now: () => NOW, name: shortName });
    const outcomes = await handleOnce(kube, { now: () => NOW }, refUpdate({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }));
    // Today: the Job is deleted ("it is past its deadline and still not finished").
    expect(writes, JSON.stringify(outcomes)).toEqual([]);
  });
});
