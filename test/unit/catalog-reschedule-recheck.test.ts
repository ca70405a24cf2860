/**
 * Red team 18 (each failed on 742adca), catalog-reschedule: an acting plan dropped the re-check of every other catalog pod on
 * the node (functions/catalog-reschedule/plan.ts plan(): `if (actions.length) return { kind: 'act',
 * actions, summary }` — no requeueAfterSeconds; the waits and the deferral are thrown away), and the
 * executor's "every action refused" outcome (shared/core/executor.ts act(): `status: 'refused'`)
 * carries no requeue either.
 *
 * Scene: one dead node, two catalogs on it. `opted-out-catalog` (olm-medic.io/ignore=true, or in a
 * protected namespace) tolerates the default 300 s; `operatorhubio-catalog` was configured (CatalogSource
 * spec.grpcPodConfig.tolerations) to tolerate 600 s. At 400 s the first is past its fence, the second
 * has 230 s left. Every look plans "delete the opted-out pod" (refused by policy, Warning Event) and
 * nothing else: the in-process re-check at operatorhubio's fence expiry is never queued, so its pod
 * stays until the next sweep, however long after its fence that is. README: "Nothing blocks the fix
 * for others" and "Inside the fence it re-checks when the fence expires".
 */
import { describe, expect, it } from 'vitest';
import { plan, type Observed, type PodFacts } from '../../functions/catalog-reschedule/plan.js';
import type { Plan } from '../../shared/core/types.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget, type Policy } from '../../shared/core/policy.js';
import type { EventRecord, Recorder } from '../../shared/core/recorder.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import pino from 'pino';
import { createEngine } from '../../shared/core/engine.js';
import { fakeFunction, configMapUpdate } from '../support/doors.js';
import { catalogPod, podConditionDisruptionTarget, rfc3339 } from '../fixtures/olm-objects.js';
import { IMAGE, NODE, NS, scene } from '../support/catalog-reschedule-scene.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const { ago, live, cs, deadNode, ctx } = scene(NOW);

function podOf(c: KubeObject, o: { tolerationSeconds?: number; disruptionAgo?: number } = {}): PodFacts {
  const b = catalogPod({ namespace: NS, catalogSourceName: c.metadata.name, catalogSourceUid: c.metadata.uid!, nodeName: NODE, image: IMAGE, ...(c.metadata.annotations ? { catalogSourceAnnotations: c.metadata.annotations } : {}) }) as {
    metadata: Record<string, unknown>;
    spec: { tolerations: { tolerationSeconds?: number }[] };
    status?: unknown;
  };
  if (o.tolerationSeconds !== undefined) for (const t of b.spec.tolerations) t.tolerationSeconds = o.tolerationSeconds;
  if (o.disruptionAgo !== undefined) b.status = { conditions: [podConditionDisruptionTarget('DeletionByTaintManager', ago(o.disruptionAgo))] };
  return { pod: live(b as never, { deletionTimestamp: rfc3339(ago(10)), deletionGracePeriodSeconds: 30 }), catalogSource: c };
}

function harness(protectedNamespaces: string[] = []) {
  const events: EventRecord[] = [];
  const deletes: string[] = [];
  const writer: Writer = {
    async delete(ref) {
      deletes.push(`${ref.namespace}/${ref.name}`);
      return 'deleted';
    },
    async mergePatch() {
      throw new Error('no patch expected');
    },
    async create(o) {
      return o;
    },
  };
  const recorder: Recorder = { record: async (e) => void events.push(e) };
  const policy: Policy = { dryRun: false, protectedNamespaces: new Set(protectedNamespaces), maxActionsPerWindow: 100, windowSeconds: 60 };
  const execute = createExecutor({ writer, recorder, policy, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
  return { execute, events, deletes };
}

describe('red team 18a: catalog-reschedule loses the re-check of the other catalog pods on a node when one pod acts', () => {
  const optedOut = cs('opted-out-catalog', { 'olm-medic.io/ignore': 'true' });
  const hub = cs('operatorhubio-catalog');

  it('R18a-C1 an opted-out catalog past its fence next to another catalog 230 s inside its (600 s) fence: the look must still re-check when that fence expires', async () => {
    const o: Observed = { nodeName: NODE, node: deadNode(400), pods: [podOf(optedOut), podOf(hub, { tolerationSeconds: 600 })] };
    const p = plan(o, ctx);
    // Before the fix: act with ONE delete (the opted-out pod) and no requeueAfterSeconds: the 230 s wait is dropped.
    expect(p.kind).toBe('act');
    const { execute, events, deletes } = harness();
    const outcome = await execute('catalog-reschedule', p, `Node/${NODE}`);
    expect(deletes).toEqual([]); // the opted-out pod is refused by policy...
    expect(events.map((e) => e.reason)).toEqual(['OptedOut']); // ...with a Warning Event
    // SAFE: the engine is told to look again when operatorhubio's fence expires (230 s), as it is
    // when the opted-out catalog is not on the node at all.
    const alone = plan({ ...o, pods: [o.pods[1]!] }, ctx);
    expect(alone).toMatchObject({ kind: 'requeue', afterSeconds: 230 });
    expect(outcome.status === 'replan' ? undefined : outcome.requeueAfterSeconds, `outcome ${JSON.stringify(outcome)}`).toBe(230);
  });

  it('R18a-C2 the same with the first catalog in a PROTECTED namespace (PROTECTED_NAMESPACES): refused, and operatorhubio is not re-checked at its fence', async () => {
    const o: Observed = { nodeName: NODE, node: deadNode(400), pods: [podOf(cs('legacy-catalog')), podOf(hub, { tolerationSeconds: 600 })] };
    o.pods[0]!.pod.metadata.namespace = 'kube-system';
    o.pods[0]!.catalogSource!.metadata.namespace = 'kube-system';
    const { execute } = harness(['kube-system']);
    const outcome = await execute('catalog-reschedule', plan(o, ctx), `Node/${NODE}`);
    expect(outcome.status).toBe('refused');
    expect(outcome.status === 'replan' ? undefined : outcome.requeueAfterSeconds, `outcome ${JSON.stringify(outcome)}`).toBe(230);
  });

  it('R18a-C3 a pod OLM v0.29+ is given olmGraceSeconds for (DisruptionTarget 10 s ago) next to an opted-out overdue pod: the deferral (and its re-check in 50 s) is dropped', async () => {
    const o: Observed = { nodeName: NODE, node: deadNode(600), pods: [podOf(optedOut), podOf(hub, { disruptionAgo: 10 })] };
    const alone = plan({ ...o, pods: [o.pods[1]!] }, ctx);
    expect(alone).toMatchObject({ kind: 'defer', requeueAfterSeconds: 50 });
    const { execute } = harness();
    const outcome = await execute('catalog-reschedule', plan(o, ctx), `Node/${NODE}`);
    expect(outcome.status === 'replan' ? undefined : outcome.requeueAfterSeconds, `outcome ${JSON.stringify(outcome)}`).toBe(50);
  });

  it('R18a-C4 (not policy): one pod force-deleted, another 230 s inside its fence: the acting plan carries the re-check for it', () => {
    const p: Plan = plan({ nodeName: NODE, node: deadNode(400), pods: [podOf(hub), podOf(cs('certified-operators'), { tolerationSeconds: 600 })] }, ctx);
    expect(p).toMatchObject({ kind: 'act' });
    expect((p as Extract<Plan, { kind: 'act' }>).othersRecheckAfterSeconds, 'the 600 s pod is re-checked when its fence expires').toBe(230);
  });
});

describe('an acted outcome asking for a late re-check (a fence) is not followed up at once', () => {
  it('engine: act + requeueAfterSeconds 230 is looked at once, its re-check queued for later; act + 2 s is followed up at once (staged cleanups)', async () => {
    for (const [after, looks] of [[230, 1], [2, 4]] as const) {
      let n = 0;
      const fn = fakeFunction({
        observe: async () => ({ n: ++n }),
        plan: () => ({ kind: 'act', summary: 'did one', requeueAfterSeconds: after, actions: [] }),
      });
      const execute = (async (f: string, p: { summary: string; requeueAfterSeconds: number }, target: string) => ({ function: f, target, status: 'acted', reason: p.summary, actions: [], requeueAfterSeconds: p.requeueAfterSeconds })) as never;
      const engine = createEngine({
        functions: [fn],
        options: {},
        reader: {} as never,
        execute,
        now: () => NOW,
        policy: { dryRun: false, protectedNamespaces: new Set() },
        log: pino({ level: 'silent' }),
        maxReplans: 1,
        sweepConcurrency: 1,
        followUps: 3,
      });
      const [o] = await engine.handle(configMapUpdate('a', `e${after}`));
      engine.close();
      expect({ after, looks: n, requeue: o!.requeueAfterSeconds }).toEqual({ after, looks, requeue: after });
    }
  });
});
