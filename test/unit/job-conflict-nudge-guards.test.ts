/**
 * Red team 29b (G1): the opt-out and protection of the objects a job-conflict finding hangs on
 * guard its delete (the Job, its ConfigMap, the CatalogSource owning them, the catalog namespace:
 * plan.ts decideJob "The opt-out (and protection) of the owners this finding hangs on applies too";
 * README "A CatalogSource's opt-out guards the Jobs it owns through the ConfigMap"). When the plan
 * acts (no retry interval) a refused Job delete refuses the whole plan, nudges included. But when
 * every waiting namespace sets bundle-unpack-min-retry-interval and it has passed, the plan is
 * nudges only, and they carry NO guard: the same failed Job of an opted-out CatalogSource (or an
 * opted-out Job, or one in a PROTECTED catalog namespace such as openshift-marketplace) makes
 * olm-medic patch the Subscriptions (olm-medic.io/nudged-at) to drive OLM into re-creating the
 * unpack Job (bundle_unpacker.go v0.28.0 ensureJob: a failed Job past the interval -> a new retry
 * Job) in the namespace policy forbids it to act on.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan } from '../../functions/job-conflict/plan.js';
import { policyRefusal } from '../../shared/core/policy.js';
import type { Plan, PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { CAT, HASH, memReader, scene } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { catsrc, configMap, og, failedJob: failed, waitingSub, octx } = scene(NOW);

/** OLM v0.28 (no TTL): failed 10 min ago; ns-b's 1m retry interval has passed. */
const failedJob = (): KubeObject => failed(600, { olmVersion: 'v0.28.0' });

async function look(objects: KubeObject[], ctx: PlanContext): Promise<Plan> {
  const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader(objects), { ...octx, ...ctx });
  return plan(observed!, ctx);
}

/** The writes the executor would let through (policyRefusal is what it applies to every action). */
const allowedWrites = (p: Plan, ctx: PlanContext): string[] =>
  p.kind === 'act' ? p.actions.filter((a) => !policyRefusal(ctx.policy, a)).map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace}/${a.target.name}`) : [];

const world = (cat: KubeObject): KubeObject[] => [cat, configMap(), failedJob(), waitingSub('ns-b', 'etcd', 600), og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-min-retry-interval': '1m' })];

describe('job-conflict (red team 29b G1): a nudge is guarded like the finding it acts on', () => {
  it('control: no opt-out, no protection: ns-b is nudged once its interval has passed', async () => {
    const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set() } };
    expect(allowedWrites(await look(world(catsrc()), ctx), ctx)).toEqual(['patch Subscription/ns-b/etcd']);
  });

  it('the CatalogSource that owns the failed Job (through its ConfigMap) is opted out: nothing is written for its Job', async () => {
    const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set() } };
    expect(allowedWrites(await look(world(catsrc({ [MEDIC.optOut]: 'true' })), ctx), ctx)).toEqual([]);
  });

  it('the catalog namespace is protected (PROTECTED_NAMESPACES): nothing is written for a Job there', async () => {
    const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set([CAT]) } };
    expect(allowedWrites(await look(world(catsrc()), ctx), ctx)).toEqual([]);
  });

  it('control: without the interval the same opted-out catalog refuses the whole plan (delete and nudge): nothing passes policy, and the Job delete is planned (its Warning Event)', async () => {
    const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set() } };
    const objs = [catsrc({ [MEDIC.optOut]: 'true' }), configMap(), failedJob(), waitingSub('ns-b', 'etcd', 600), og('ns-b', 'og')];
    const p = await look(objs, ctx);
    expect(p.kind).toBe('act');
    expect(allowedWrites(p, ctx)).toEqual([]);
    const deletes = p.kind === 'act' ? p.actions.filter((a) => a.reason === 'UnpackJobDeleted') : [];
    expect(deletes.length).toBe(1);
    expect(policyRefusal(ctx.policy, deletes[0]!)).toBeDefined();
  });

  describe('the re-sent nudge (no failed Job left, the Subscription still BundleUnpackFailed)', () => {
    const SUB = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: 'ns-b', name: 'etcd' };
    async function lookAtSub(cat: KubeObject, ctx: PlanContext): Promise<Plan> {
      const objects = [cat, waitingSub('ns-b', 'etcd', 600), og('ns-b', 'og')];
      const observed = await jobConflict.observe(SUB, memReader(objects), { ...octx, ...ctx });
      return plan(observed!, ctx);
    }
    it('control: re-sent to a Subscription of a catalog that is neither opted out nor protected', async () => {
      const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set() } };
      expect(allowedWrites(await lookAtSub(catsrc(), ctx), ctx)).toEqual(['patch Subscription/ns-b/etcd']);
    });
    it('not re-sent for an opted-out catalog', async () => {
      const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set() } };
      const p = await lookAtSub(catsrc({ [MEDIC.optOut]: 'true' }), ctx);
      expect(p.kind).toBe('act'); // planned, and refused by policy (a Warning Event), not silently dropped
      expect(allowedWrites(p, ctx)).toEqual([]);
    });
    it('not re-sent for a catalog in a protected namespace', async () => {
      const ctx: PlanContext = { ...octx, policy: { dryRun: false, protectedNamespaces: new Set([CAT]) } };
      expect(allowedWrites(await lookAtSub(catsrc(), ctx), ctx)).toEqual([]);
    });
  });
});
