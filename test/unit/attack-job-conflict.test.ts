/**
 * Red team 13 (a helper given only the code): job-conflict writing to objects that are not provably
 * stale OLM unpack objects, or to Subscriptions that are not blocked. Each test states what SHOULD
 * hold; each failed on 95d441c and passes since the fix after it:
 *   J1/J1b the ConfigMap delete (GC cascade) took a Job it owns that olm-medic itself would never touch;
 *   J2     a Subscription past resolution (UpgradePending) with a lingering BundleUnpacking was nudged;
 *   J3     once the ConfigMap was gone, the CatalogSource opt-out no longer guarded the Job;
 *   J5     (red team 14, failed on 0d3eb71) J3's fix let ANY opted-out catalog of the namespace refuse it forever.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan, type Observed } from '../../functions/job-conflict/plan.js';
import { policyRefusal } from '../../shared/core/policy.js';
import { NO_POLICY, type Action } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, HASH, IMAGE, memReader, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { ago, k, catsrc, configMap, failedJob: failed, waitingSub, ctx, octx } = scene(NOW);

const failedJob = (): KubeObject => failed(3600);
/** BundleUnpackFailed written at NOW. */
const stuckSub = (ns: string): KubeObject => waitingSub(ns, 'etcd', 0);

describe('holes: job-conflict', () => {
  it('RT13-J1 the ConfigMap delete cascades (GC, Background) to a RUNNING Job the ConfigMap owns that olm-medic itself does not recognise as an unpack Job (the defect-10 look-alike): the ConfigMap must be kept while any non-terminal Job it owns stays', async () => {
    // A Job owned by the same ConfigMap (same uid: GC will collect it with the ConfigMap), running,
    // named like a retry Job but with a suffix outside OLM's alphabet: job-conflict refuses to
    // touch it directly (identityProblem: 'name is not an unpack hash') ...
    const other = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', name: `${HASH.slice(0, 58)}aeiou` });
    other.status = olm.jobStatusActive({ startedAt: ago(30) });
    const running = k(other, 'job-running');
    const reader = memReader([catsrc(), configMap(), failedJob(), running, stuckSub('ns-b')]);
    const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
    const p = plan(observed!, ctx);
    // ... yet deleting the ConfigMap (propagationPolicy Background) makes the garbage collector
    // delete that running Job with it.
    expect(writes(p)).toContain('delete Job/olm/hash');
    expect(writes(p)).not.toContain('delete ConfigMap/olm/hash');
  });

  it('RT13-J1b same through a Subscription event (the Subscription path lists every Job of the catalog namespace but only keeps the ConfigMap for the ones passing identityProblem)', async () => {
    const other = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', name: 'extract-debug' });
    other.status = olm.jobStatusActive({ startedAt: ago(30) });
    const running = k(other, 'job-running');
    const reader = memReader([catsrc(), configMap(), failedJob(), running, stuckSub('ns-b')]);
    const observed = await jobConflict.observe({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: 'ns-b', name: 'etcd' }, reader, octx);
    const p = plan(observed!, ctx);
    expect(writes(p)).toContain('delete Job/olm/hash');
    expect(writes(p)).not.toContain('delete ConfigMap/olm/hash');
  });

  it('RT13-J2 a Subscription waiting for manual approval of its next InstallPlan (state UpgradePending, installPlanRef + currentCSV set) that still carries a lingering BundleUnpacking=True (real OLM leaves it, real-olm.md) is not blocked on an unpack: it must not be nudged', () => {
    const pending = olm.subscription({ namespace: 'ns-c', name: 'prometheus', package: 'prometheus', source: CATALOG, sourceNamespace: CAT, approval: 'Manual' });
    pending.status = olm.subscriptionStatus({
      at: NOW,
      currentCSV: 'prometheusoperator.0.47.0',
      installedCSV: 'prometheusoperator.0.37.0',
      installPlan: { name: 'install-x7k2p', namespace: 'ns-c', uid: 'ip-c' },
      state: 'UpgradePending',
      conditions: [olm.bundleUnpackingCondition(ago(7200)), olm.installPlanPendingCondition({ phase: 'RequiresApproval', at: ago(7000) })],
    });
    const o: Observed = {
      namespace: CAT,
      catalogSources: [CATALOG],
      catalogSourceObjects: [catsrc()],
      olmLabelsObjects: true,
      jobs: [{ job: failedJob(), configMap: configMap(), configMapInUse: false }],
      subscribers: [stuckSub('ns-b'), k(pending, 'sub-ns-c')],
      retryIntervals: {},
    };
    const p = plan(o, ctx);
    expect(writes(p)).toContain('patch Subscription/ns-b/etcd');
    expect(writes(p)).not.toContain('patch Subscription/ns-c/prometheus');
  });

  it('RT13-J3 the CatalogSource opt-out protects the unpack Job it owns through the ConfigMap; once that ConfigMap is gone (the 3a case) the same opt-out no longer protects it: the only CatalogSource of the namespace is opted out, yet the Job is deleted', async () => {
    const optedOut = catsrc({ 'olm-medic.io/ignore': 'true' });
    const reader = memReader([optedOut, failedJob(), stuckSub('ns-b')]);
    const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
    const p = plan(observed!, ctx);
    const del = p.kind === 'act' ? p.actions.find((a: Action) => a.verb === 'delete' && a.target.kind === 'Job') : undefined;
    // Control: with its ConfigMap present the same Job is refused by policy (the CatalogSource guard).
    const withCm = plan((await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader([optedOut, configMap(), failedJob(), stuckSub('ns-b')]), octx))!, ctx);
    const delWithCm = withCm.kind === 'act' ? withCm.actions.find((a: Action) => a.verb === 'delete' && a.target.kind === 'Job') : undefined;
    expect(delWithCm && policyRefusal(NO_POLICY, delWithCm)?.reason).toBe('OptedOut');
    // The hole: no guard left, the executor deletes the opted-out catalog's Job.
    expect(del === undefined || policyRefusal(NO_POLICY, del)?.reason === 'OptedOut').toBe(true);
  });

  it('RT14-J5 with the ConfigMap gone, an opted-out CatalogSource of the same (shared) namespace does not hold back the delete of another catalog\'s failed unpack Job, which its stuck Subscription names (was: refused forever by the J3 fix)', async () => {
    const other = k(olm.catalogSource({ namespace: CAT, name: 'someone-elses-catalog', image: 'quay.io/x/catalog:latest', annotations: { 'olm-medic.io/ignore': 'true' } }), 'catsrc-2');
    const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader([catsrc(), other, failedJob(), stuckSub('ns-b')]), octx);
    const p = plan(observed!, ctx);
    const del = p.kind === 'act' ? p.actions.find((a: Action) => a.verb === 'delete' && a.target.kind === 'Job') : undefined;
    expect(del, `plan: ${JSON.stringify(p).slice(0, 300)}`).toBeDefined();
    expect(policyRefusal(NO_POLICY, del!)).toBeUndefined();
    // ... while the opt-out of the catalog the stuck Subscription names still holds it back (J3).
    const own = plan((await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader([catsrc({ 'olm-medic.io/ignore': 'true' }), other, failedJob(), stuckSub('ns-b')]), octx))!, ctx);
    const ownDel = own.kind === 'act' ? own.actions.find((a: Action) => a.verb === 'delete' && a.target.kind === 'Job') : undefined;
    expect(ownDel && policyRefusal(NO_POLICY, ownDel)?.reason).toBe('OptedOut');
  });
});
