/**
 * Replays event streams recorded from Knative's real adapter against freshly seeded stuck
 * situations on the real control plane — in order, duplicated, reversed, shuffled, and with half
 * the events dropped (plus a sweep) — as the shipped ServiceAccount. Every variant must converge to
 * the healed state, with the fixing actions recorded as Events.
 */
import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../../shared/events/decode.js';
import { allFunctions } from '../../functions/index.js';
import { seeds } from '../scenarios/seeds.js';
import { eventually, testCluster } from '../support/cluster.js';
import { loadStream, variants } from '../support/streams.js';
import type { KubeObject } from '../../shared/kube/types.js';

const c = testCluster();
const fileOf = (name: string): string => `${name.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)}.jsonl`;

async function medicEventsEverywhere(): Promise<(KubeObject & { reason: string; reportingController: string })[]> {
  const out: (KubeObject & { reason: string; reportingController: string })[] = [];
  for await (const e of c.admin.list<KubeObject & { reason: string; reportingController: string }>('events.k8s.io/v1', 'Event', { labelSelector: 'app.kubernetes.io/managed-by=olm-medic' })) out.push(e);
  return out;
}

describe.each(seeds.map((s) => [s.name, s] as const))('replaying %s', (seedName, seed) => {
  it.each(variants.map((v) => [v.name, v] as const))('%s converges to the healed state', async (_v, variant) => {
    const id = `rp${Math.random().toString(36).slice(2, 6)}`;
    const situation = await seed(c.admin, id);
    const events = variant.make(loadStream(fileOf(seedName), id));
    const env = { KUBECONFIG: c.kubeconfig.shipped, OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' };
    let rt = c.runtime(allFunctions, env);
    const replay = async (): Promise<void> => {
      for (const ev of events) {
        const outcomes = await rt.engine.handle(decodeEvent(ev));
        for (const o of outcomes) expect(['failed', 'transient'], `${o.function} ${o.target}: ${o.reason}`).not.toContain(o.status);
      }
      // Scoped to the situation's namespaces, so parallel tests' objects are never swept here.
      if (variant.sweep) for (const namespace of situation.namespaces) await rt.engine.handle({ kind: 'sweep', namespace, meta: { id: 'sweep', source: 'test', type: 'io.olm-medic.sweep' } });
    };
    await replay();
    if (situation.trigger) {
      expect(await situation.trigger.ready()).toBe(true);
      await situation.trigger.act();
      // Events after the change carry new resourceVersions; the same recorded events would be
      // (correctly) suppressed as duplicates by the receiver that already handled them.
      rt.engine.close();
      rt = c.runtime(allFunctions, env);
      await replay();
    }
    // Multi-step fixes (wait for a finalizer, then delete the Operator) finish on the engine's re-check timer.
    await eventually(() => situation.healed(), `${situation.name} healed`, 10_000);
    const reasons = new Set((await medicEventsEverywhere()).filter((e) => JSON.stringify(e).includes(id)).map((e) => e.reason));
    expect([...reasons].some((r) => situation.fixedBy.includes(r)), `Events: ${[...reasons].join(', ')}`).toBe(true);
    rt.engine.close();
  });
});
