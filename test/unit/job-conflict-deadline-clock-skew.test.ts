/**
 * Red team 32 (S1): job-conflict deletes a RUNNING bundle-unpack Job inside its deadline when
 * kube-controller-manager's clock runs behind the apiserver's.
 *
 * plan.ts jobState(): `deadlineAt = seconds(status.startTime) + activeDeadlineSeconds`, compared with
 * `ctx.now` (the apiserver's clock). status.startTime is written by the Job controller with ITS OWN
 * clock (k8s v1.36.3 pkg/controller/job/job_controller.go:1052 `now := metav1.NewTime(jm.clock.Now())`),
 * and the Job controller judges the deadline against that same clock (:1721 `jm.clock.Since(StartTime)`),
 * so a skewed KCM never fails a Job early itself — but olm-medic, mixing the two clocks, does.
 * README "Time is the apiserver's … a skewed host cannot act early"; "never while it runs within
 * its deadline, counted from status.startTime only".
 *
 * Scene (OLM v0.28, default --bundle-unpack-timeout 10m → activeDeadlineSeconds 600): the unpack Job
 * was created 4 minutes ago (metadata.creationTimestamp, apiserver clock) and is running. KCM runs
 * 10 minutes behind, so status.startTime reads "14 minutes ago" — before the Job existed.
 * olm-medic: "past its deadline and still not finished" → DELETE of a healthy running unpack Job
 * 6 minutes before the Job controller's deadline.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';
import { CAT, HASH, IMAGE, scene, shortName } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { k, ago, catsrc, configMap, og } = scene(NOW);

function runningJob(): KubeObject {
  const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', olmVersion: 'v0.28' });
  // startTime as a KCM 10 minutes behind stamps a start 4 minutes ago.
  j.status = olm.jobStatusActive({ startedAt: ago(240 + 600) });
  return k(j, 'job-1', { creationTimestamp: olm.rfc3339(ago(240)) });
}

/** A Subscription waiting on the unpack (BundleUnpacking, no plan yet). */
function unpackingSub(): KubeObject {
  const s = olm.subscription({ namespace: 'ns-b', name: 'etcd', package: 'etcd', source: 'operatorhubio-catalog', sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: ago(240), conditions: [olm.bundleUnpackingCondition(ago(240), { olmVersion: 'v0.28' })] });
  return k(s, 'sub-ns-b');
}

describe('red team 32 S1: a running unpack Job is not deleted inside its deadline because the Job controller clock is behind', () => {
  it('a Job created 4 minutes ago is not "past its 600 s deadline", whatever status.startTime says', async () => {
    const job = runningJob();
    expect(job.metadata.name).toBe(HASH);
    const { kube, writes } = recordingKube([catsrc(), configMap(), job, unpackingSub(), og('ns-b', 'og')], { now: () => NOW, name: shortName });
    const outcomes = await handleOnce(kube, { now: () => NOW }, refUpdate({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }));
    // Today: ["delete Job olm/hash", "patch Subscription ns-b/etcd"] ("it is past its deadline and still not finished").
    expect(writes, JSON.stringify(outcomes)).toEqual([]);
  });
});
