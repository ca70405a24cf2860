/**
 * Red team 20 (failed on d71ee7a), D1: in a server running DRY_RUN=true (the base Service's default and the "recommended
 * first install": every decision recorded as an Event), an acting catalog-reschedule look drops the
 * re-check of the node's other catalog pods. f60e23f/d71ee7a gave the acting plan
 * othersRecheckAfterSeconds ("looked at again then whatever becomes of the actions") and the executor
 * folds it into the outcome, but the outcome is 'dry-run', which the engine never re-checks
 * (engine.ts RECHECKED: 'requeued', 'acted', 'deferred', 'refused', 'rate-limited'). So the pod
 * whose fence expires next gets no "[dry-run] would have force-deleted" Event until a sweep or an
 * unrelated pod event — while the same cluster under enforce is looked at again when its fence ends.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { defaults, plan, type Observed, type PodFacts } from '../../functions/catalog-reschedule/plan.js';
import { createExecutor } from '../../shared/core/executor.js';
import { createEngine } from '../../shared/core/engine.js';
import { ActionBudget, type Policy } from '../../shared/core/policy.js';
import type { EventRecord, Recorder } from '../../shared/core/recorder.js';
import type { AnyFunction } from '../../shared/core/types.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import { catalogPod } from '../fixtures/olm-objects.js';
import { IMAGE, NODE, NS, scene } from '../support/catalog-reschedule-scene.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const { live, cs, deadNode } = scene(NOW);
function podOf(c: KubeObject, tolerationSeconds?: number): PodFacts {
  const b = catalogPod({ namespace: NS, catalogSourceName: c.metadata.name, catalogSourceUid: c.metadata.uid!, nodeName: NODE, image: IMAGE }) as { spec: { tolerations: { tolerationSeconds?: number }[] } };
  if (tolerationSeconds !== undefined) for (const t of b.spec.tolerations) t.tolerationSeconds = tolerationSeconds;
  return { pod: live(b as never), catalogSource: c };
}

async function looksWithin(dryRun: boolean, ms: number): Promise<number> {
  // One catalog past its (300 s) fence, another whose fence (371 s + 30 s margin) ends in 1 s.
  const o: Observed = { nodeName: NODE, node: deadNode(400), pods: [podOf(cs('community-operators')), podOf(cs('operatorhubio-catalog'), 371)] };
  let looks = 0;
  const fn = {
    name: 'catalog-reschedule',
    summary: 's',
    kinds: ['v1/Pod'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      yield { apiVersion: 'v1', kind: 'Node', name: NODE };
    },
    observe: async () => (looks++, o),
    plan,
  } as unknown as AnyFunction;
  const events: EventRecord[] = [];
  const writer: Writer = { delete: async () => 'deleted', mergePatch: async () => "patched", create: async (x: KubeObject) => x } as unknown as Writer;
  const recorder: Recorder = { record: async (e) => void events.push(e) };
  const policy: Policy = { dryRun, protectedNamespaces: new Set(), maxActionsPerWindow: 100, windowSeconds: 60 };
  const execute = createExecutor({ writer, recorder, policy, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
  const engine = createEngine({
    functions: [fn],
    options: { 'catalog-reschedule': { ...defaults } },
    reader: {} as never,
    execute,
    now: () => NOW,
    policy: { dryRun, protectedNamespaces: new Set() },
    log: pino({ level: 'silent' }),
    maxReplans: 1,
    sweepConcurrency: 1,
    followUps: 0,
  });
  engine.trackLooks();
  await engine.handle({ kind: 'sweep', meta: { id: 'ping', source: 'pingsource', type: 'dev.knative.sources.ping' } } as never);
  await engine.drain(Date.now() + ms);
  engine.close();
  return looks;
}

describe('redteam20 D1: a dry-run server drops the re-check of the other catalog pods on the node', () => {
  it('enforce: the node is looked at again when the second fence ends (control)', async () => {
    expect(await looksWithin(false, 3_000)).toBeGreaterThan(1);
  }, 20_000);

  it('DRY_RUN=true: the node is looked at again when the second fence ends, so its "would have" Event is recorded then', async () => {
    expect(await looksWithin(true, 3_000)).toBeGreaterThan(1);
  }, 20_000);
});
