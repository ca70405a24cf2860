/**
 * Red team 19 (failed on 0fe76ca and before): catalog-reschedule plan() keeps the FIRST deferred pod's wait (`defer ??= ...`), not the
 * soonest: a second catalog pod on the same dead node whose OLM grace ends sooner is looked at only
 * when the first one's does (up to olmGraceSeconds late), with no event in between.
 */
import { describe, expect, it } from 'vitest';
import { plan, type Observed, type PodFacts } from '../../functions/catalog-reschedule/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { catalogPod, podConditionDisruptionTarget, rfc3339 } from '../fixtures/olm-objects.js';
import { IMAGE, NODE, NS, scene } from '../support/catalog-reschedule-scene.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const { ago, live, cs, deadNode, ctx } = scene(NOW);

/** Evicted by taint eviction `disruptionAgo` seconds ago: DisruptionTarget=True and Terminating. */
function evicted(c: KubeObject, disruptionAgo: number): PodFacts {
  const b = catalogPod({ namespace: NS, catalogSourceName: c.metadata.name, catalogSourceUid: c.metadata.uid!, nodeName: NODE, image: IMAGE }) as { metadata: Record<string, unknown>; status?: unknown };
  b.status = { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', ago(disruptionAgo))] };
  return { pod: live(b as never, { deletionTimestamp: rfc3339(ago(disruptionAgo)), deletionGracePeriodSeconds: 30 }), catalogSource: c };
}

describe('redteam19 catalog-reschedule: two catalog pods handed to OLM, their graces ending at different times', () => {
  it('D1 the look re-checks when the SOONER grace ends (10 s), not the first-listed pod\'s (50 s)', () => {
    // certified-operators tolerates 320 s (grpcPodConfig), operatorhubio the default 300 s: evicted 40 s apart.
    const o: Observed = { nodeName: NODE, node: deadNode(400), pods: [evicted(cs('certified-operators'), 10), evicted(cs('operatorhubio-catalog'), 50)] };
    // Either pod alone: re-checked when its grace ends.
    expect(plan({ ...o, pods: [o.pods[1]!] }, ctx)).toMatchObject({ kind: 'defer', requeueAfterSeconds: 10 });
    expect(plan(o, ctx)).toMatchObject({ kind: 'defer', requeueAfterSeconds: 10 });
  });
});
