/**
 * Red team 34, L2 (fixed): a force-delete of a catalog pod stuck Terminating whose answer was lost is
 * "confirmed" by the pod's OLD deletionTimestamp.
 *
 * catalog-reschedule force-deletes (gracePeriodSeconds 0, uid + resourceVersion preconditions) a
 * catalog pod that is usually ALREADY Terminating (taint eviction asked for a graceful delete the
 * dead kubelet never finishes: deletionTimestamp set, deletionGracePeriodSeconds 30).
 * If the force-delete's first attempt got no answer and did NOT land (an etcd timeout that never
 * committed, a reset before the apiserver read the body), and meanwhile the pod's resourceVersion
 * moved (the node controller marks it Ready=False, taint eviction adds DisruptionTarget), the retry
 * gets 409 -> WriteOutcomeUnknown. landed() (shared/core/executor.ts, `return
 * live.metadata.deletionTimestamp ? 'held' : undefined`) takes ANY deletionTimestamp as proof the
 * delete was made — here the one taint eviction set long before. Had the force-delete landed the pod
 * would be gone (grace 0, no finalizers: the retry would have got 404), or at least carry
 * deletionGracePeriodSeconds 0.
 * Impact: the pod stays stuck on the dead node (the catalog stays down), yet olm-medic reports
 * 'acted' with a CatalogPodForceDeleted Event "(a re-read shows it made)", and skips the re-plan
 * the 409 asked for (before d54b3e5: replan/conflict, re-read, delete again).
 * SAFE: a 409 retry whose live object carries a deletionTimestamp the plan already saw (or a grace
 * other than the one asked) is someone else's change: re-plan, no Event.
 */
import { describe, expect, it } from 'vitest';
import { plan, type PodFacts } from '../../functions/catalog-reschedule/plan.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import { KubeError, WriteOutcomeUnknown } from '../../shared/kube/errors.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import { catalogPod, podConditionDisruptionTarget, rfc3339 } from '../fixtures/olm-objects.js';
import { IMAGE, NODE, NS, scene } from '../support/catalog-reschedule-scene.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const { ago, live, cs, deadNode, ctx } = scene(NOW);

/** Evicted by taint eviction `agoS` seconds ago: DisruptionTarget=True, Terminating (grace 30), stuck on the dead node. */
function evicted(c: KubeObject, agoS: number): PodFacts {
  const b = catalogPod({ namespace: NS, catalogSourceName: c.metadata.name, catalogSourceUid: c.metadata.uid!, nodeName: NODE, image: IMAGE }) as { metadata: Record<string, unknown>; status?: unknown };
  b.status = { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', ago(agoS))] };
  return { pod: live(b as never, { deletionTimestamp: rfc3339(ago(agoS - 30)), deletionGracePeriodSeconds: 30 }), catalogSource: c };
}

describe('(red team 34) L2: a lost force-delete answer is not confirmed by a deletionTimestamp that was already there', () => {
  it('catalog pod stuck Terminating: force-delete 409 after a lost answer, live pod unchanged but for its resourceVersion -> re-plan, no CatalogPodForceDeleted Event', async () => {
    const f = evicted(cs('operatorhubio-catalog'), 600);
    const p = plan({ nodeName: NODE, node: deadNode(900), pods: [f] }, ctx);
    expect(p).toMatchObject({ kind: 'act', actions: [{ verb: 'delete', gracePeriodSeconds: 0, reason: 'CatalogPodForceDeleted' }] });
    // The pod as it is now: the same one, still Terminating since taint eviction's graceful delete
    // (deletionGracePeriodSeconds 30), its status written again (resourceVersion moved).
    const now = { ...f.pod, metadata: { ...f.pod.metadata, resourceVersion: String(Number(f.pod.metadata.resourceVersion) + 1) } } as KubeObject;
    const events: EventRecord[] = [];
    const writer: Writer = {
      delete: async () => Promise.reject(new WriteOutcomeUnknown(new KubeError(409, 'Conflict', 'Operation cannot be fulfilled on pods "x": the ResourceVersion in the precondition (1001) does not match the ResourceVersion in record (1002). The object might have been modified'))),
      mergePatch: async () => Promise.reject(new Error('no patch expected')),
      create: async (x) => x,
    };
    const execute = createExecutor({
      writer,
      reader: { get: (async () => now) as never },
      recorder: { record: async (e) => void events.push(e) },
      policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 },
      budget: new ActionBudget(10, 60_000, () => 0),
    });
    const out = await execute('catalog-reschedule', p, `Node//${NODE}`);
    // Current code: { status: 'acted', actions: [{ result: 'done', held: Pod/... }] } and a
    // CatalogPodForceDeleted Event "(The apiserver's answer to this write was lost; a re-read shows it made.)".
    expect(out).toMatchObject({ status: 'replan', cause: 'conflict' });
    expect(events.map((e) => e.reason)).toEqual([]);
  });
});
