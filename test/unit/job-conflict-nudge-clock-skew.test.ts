/**
 * Red team 31 (L1): the re-sent nudge (job-conflict plan.ts nudgeOwed / mayBeOwedNudge) compares
 * olm-medic's own nudge stamp (the APISERVER's clock, `ctx.now`) with the BundleUnpackFailed
 * condition's lastTransitionTime, which catalog-operator writes with ITS OWN host clock
 * (metav1.Now() in the OLM pod). When that clock is ahead of the apiserver's (a skewed node — the
 * README's "Time is the apiserver's … a skewed host cannot act early"), every nudge olm-medic
 * stamps is "before the failure", so the Subscription update its own nudge causes makes it nudge
 * again, and again: a write loop (one Subscription patch + one Event per round) that lasts as long
 * as the skew, and eats the cluster-wide action budget every other remediation shares.
 * README: "A nudge that was lost … is sent ONCE later"; plan.ts: "Bounded: once nudged, never again
 * until the condition changes." The condition never changes here.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { recordingKube, refUpdate, withRuntime } from '../support/fake-runtime.js';
import { scene } from '../support/job-conflict-scene.js';

const T0 = new Date('2026-06-01T12:00:00Z');
const { catsrc, og, waitingSub } = scene(T0);

describe('red team 31 L1: a re-sent nudge is sent once, whatever clock OLM stamped its condition with', () => {
  it("the Subscription update caused by olm-medic's own nudge does not make it nudge again", async () => {
    // BundleUnpackFailed stamped by an OLM pod whose clock runs 10 minutes ahead of the apiserver's;
    // the failed Job is gone already (deleted by olm-medic before a restart, or by its TTL).
    const sub = waitingSub('ns-b', 'etcd', -600);
    const objects: KubeObject[] = [catsrc(), sub, og('ns-b', 'og')];
    let now = T0.getTime();
    let rv = 1000;
    const patches: string[] = [];
    const { kube } = recordingKube(objects, {
      now: () => new Date(now),
      async mergePatch(ref: Ref, patch: { metadata?: { annotations?: Record<string, string> } }) {
        patches.push(`patch ${ref.kind} ${ref.namespace}/${ref.name} ${JSON.stringify(patch.metadata?.annotations ?? {})}`);
        const o = objects.find((x) => x.kind === ref.kind && x.metadata.name === ref.name && x.metadata.namespace === ref.namespace)!;
        o.metadata = { ...o.metadata, annotations: { ...(o.metadata.annotations ?? {}), ...(patch.metadata?.annotations ?? {}) }, resourceVersion: String(++rv) };
        return o;
      },
    });
    await withRuntime(kube, { now: () => new Date(now) }, async (rt) => {
      // Each round: the (reference-mode) event of the Subscription's latest update, 2 s later.
      for (let i = 0; i < 5; i++) {
        await rt.engine.handle(refUpdate({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: 'ns-b', name: 'etcd' }, `e${i}`));
        now += 2_000;
      }
    });
    expect(patches.length, 'premise: the lost nudge is re-sent').toBeGreaterThanOrEqual(1);
    expect(patches[0]).toContain(MEDIC.nudge);
    // Safe: once nudged (the condition unchanged since), never again.
    expect(patches, 'olm-medic re-nudges on every update its own nudge causes').toHaveLength(1);
  });
});
