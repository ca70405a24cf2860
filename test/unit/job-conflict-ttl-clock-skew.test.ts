/**
 * Red team 32 (S2): job-conflict does not defer to a failed unpack Job's ttlSecondsAfterFinished
 * (OLM v0.43+) when kube-controller-manager's clock runs behind the apiserver's: it deletes the Job
 * (and its empty ConfigMap) minutes before the TTL controller would.
 *
 * plan.ts decideJob(): `now < state.finishedAt + ttl + margin` with finishedAt =
 * seconds(Failed.lastTransitionTime), a time the Job controller stamps with ITS OWN clock
 * (k8s v1.36.3 pkg/controller/job/job_controller.go newCondition(..., jm.clock.Now())); the TTL
 * controller (pkg/controller/ttlafterfinished, same process) counts the TTL on that same clock.
 * README: "Defers to the Job's ttlSecondsAfterFinished (OLM ≥ v0.43)"; "Time is the apiserver's …
 * a skewed host cannot act early".
 *
 * Scene (OLM v0.43, TTL 300): the unpack Job was created 5 minutes ago (creationTimestamp, apiserver
 * clock) and failed 60 s ago. KCM runs 10 minutes behind: Failed reads "11 minutes ago" — before the
 * Job existed. olm-medic: TTL "passed" → DELETE Job + DELETE ConfigMap + nudge, ~5 minutes early.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';
import { CAT, HASH, IMAGE, scene, shortName } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const SKEW = 600; // KCM behind the apiserver, seconds
const { k, ago, catsrc, configMap, og, waitingSub } = scene(NOW);

function failedJob(skew: number): KubeObject {
  const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', olmVersion: 'v0.43' });
  j.status = olm.jobStatusFailed({ reason: 'BackoffLimitExceeded', at: ago(60 + skew), startedAt: ago(240 + skew) });
  return k(j, 'job-1', { creationTimestamp: olm.rfc3339(ago(300)) });
}

async function run(skew: number): Promise<{ writes: string[]; outcomes: unknown }> {
  const job = failedJob(skew);
  expect((job.spec as { ttlSecondsAfterFinished?: number }).ttlSecondsAfterFinished, 'premise: OLM v0.43 sets a TTL').toBe(300);
  const { kube, writes } = recordingKube([catsrc(), configMap(), job, waitingSub('ns-b', 'etcd', 55), og('ns-b', 'og')], { now: () => NOW, name: shortName });
  const outcomes = await handleOnce(kube, { now: () => NOW }, refUpdate({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }));
  return { writes, outcomes };
}

describe('red team 32 S2: the TTL deferral holds whatever clock the Job controller stamps Failed with', () => {
  it('control: no skew — deferred to the TTL', async () => {
    const { writes } = await run(0);
    expect(writes).toEqual([]);
  });
  it('KCM 10 min behind: a Job created 5 minutes ago cannot have failed 11 minutes ago; still deferred', async () => {
    const { writes, outcomes } = await run(SKEW);
    // Today: delete Job olm/hash, delete ConfigMap olm/<hash>, patch Subscription ns-b/etcd.
    expect(writes, JSON.stringify(outcomes)).toEqual([]);
  });
});
