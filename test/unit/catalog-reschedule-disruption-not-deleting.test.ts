/**
 * Red team 37 (T1) (fixed): catalog-reschedule force-deletes (gracePeriodSeconds 0) a catalog pod that is NOT
 * being deleted, seconds after its node went not-Ready, because it carries DisruptionTarget=True.
 *
 * functions/catalog-reschedule/plan.ts decidePod() (~lines 141-150): in the DisruptionTarget branch
 * the hand-off to OLM (olmGraceSeconds) applies only `if (pod.metadata.deletionTimestamp && ...)`;
 * without a deletionTimestamp the branch falls through to `why = ...` and ACTS at once — skipping
 * both OLM's grace and the node-loss fence (toleration seconds + fenceMarginSeconds) that the `else`
 * branch would have applied.
 * A DisruptionTarget without a delete is real: taint eviction / the scheduler's preemption / the
 * eviction API write the condition BEFORE the delete, and when that delete fails (apiserver hiccup,
 * webhook) the condition stays until the disruption controller clears it (2 min); the kubelet's
 * node-pressure eviction (TerminationByKubelet) never deletes the pod at all.
 * README (catalog-reschedule): "or the pod has DisruptionTarget=True (left to OLM v0.29+ for
 * olmGraceSeconds first)"; otherwise only past "toleration seconds plus fenceMarginSeconds".
 *
 * Scene: node Ready=Unknown and tainted unreachable 10 s ago; the pod (toleration 300 s) carries
 * DisruptionTarget=True (DeletionByTaintManager) 5 s old, no deletionTimestamp. Today: force-deleted
 * now. SAFE: not before OLM's 60 s grace (and the fence) — no delete in this plan.
 */
import { describe, expect, it } from 'vitest';
import { plan, type PodFacts } from '../../functions/catalog-reschedule/plan.js';
import { catalogPod, podConditionDisruptionTarget } from '../fixtures/olm-objects.js';
import { IMAGE, NODE, NS, scene } from '../support/catalog-reschedule-scene.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const { ago, live, cs, deadNode, ctx } = scene(NOW);

describe('red team 37 T1: DisruptionTarget without a delete does not skip OLM grace and the fence', () => {
  it('a catalog pod marked DisruptionTarget 5 s ago, not Terminating, on a node lost 10 s ago, is not force-deleted', () => {
    const c = cs('operatorhubio-catalog');
    const b = catalogPod({ namespace: NS, catalogSourceName: c.metadata.name, catalogSourceUid: c.metadata.uid!, nodeName: NODE, image: IMAGE }) as { metadata: Record<string, unknown>; status?: unknown };
    b.status = { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', ago(5))] };
    const f: PodFacts = { pod: live(b as never), catalogSource: c };
    const p = plan({ nodeName: NODE, node: deadNode(10), pods: [f] }, ctx);
    // Today: { kind: 'act', actions: [{ verb: 'delete', gracePeriodSeconds: 0, reason: 'CatalogPodForceDeleted' }] }.
    expect(p.kind, JSON.stringify(p)).not.toBe('act');
  });
});
