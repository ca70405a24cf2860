/**
 * Red team 25 (L1; failed on 659e60c): BundleUnpackFailed LINGERS on a Subscription whose retried unpack succeeded and
 * whose InstallPlan now waits (Manual approval). On success syncResolvingNamespace removes the
 * conditions from its own list `subs` and then REPLACES each updated Subscription with the
 * resolver's copy, which was listed separately and still carries them:
 *   catalog/operator.go v0.46.0:1596-1612 (removeSubsCond(subs, BundleUnpackFailed); subs[i] = updatedSub),
 *   v0.28.0:1439-1460 (same); step_resolver.go v0.46.0:99-100,252-263 (own List), 222-229 (updatedSubs = those subs);
 *   updateSubscriptionStatuses v0.46.0:1899-1903 writes that status.
 * It is written UpgradePending with the new installPlanRef (setIPReference v0.46.0:1734-1746), and
 * while the plan awaits approval nothingToUpdate (v0.46.0:1647-1652, 1318-1325) keeps OLM from
 * resolving the namespace again, so nothing clears it (real-olm.md: conditions "may remain").
 * Such a Subscription waits on no unpack (its plan exists: the same reasoning as red team 13 J2 for
 * BundleUnpacking), yet unpackConditioned() counts its BundleUnpackFailed whatever the state, so
 * ns-c is "unretried" and olm-medic deletes ns-b's failed Job inside ns-b's retry interval and
 * nudges ns-c's Subscription, which is not blocked.
 */
import { describe, expect, it } from 'vitest';
import { plan, type Observed } from '../../functions/job-conflict/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { ago, k, catsrc, configMap, failedJob: failed, waitingSub, ctx } = scene(NOW);

/** OLM v0.26-v0.42 (no TTL): ns-b's bundle, failed 100 s ago, inside ns-b's 300 s retry interval. */
const failedJob = (): KubeObject => failed(100);
const waitingB = (): KubeObject => waitingSub('ns-b', 'etcd', 100);
/** ns-c: its own (other) bundle failed yesterday, was retried and unpacked; the plan awaits Manual approval. */
const pendingApprovalC = (): KubeObject => {
  const s = olm.subscription({ namespace: 'ns-c', name: 'redis', package: 'redis', source: CATALOG, sourceNamespace: CAT, approval: 'Manual' });
  s.status = olm.subscriptionStatus({
    at: ago(80000),
    currentCSV: 'redis-operator.v0.15.1',
    installedCSV: 'redis-operator.v0.15.0',
    installPlan: { name: 'install-7qx2k', namespace: 'ns-c', uid: 'ip-c' },
    installPlanGeneration: 2,
    state: 'UpgradePending',
    conditions: [
      olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(86000) }),
      olm.bundleUnpackingCondition(ago(80100)),
      olm.installPlanPendingCondition({ phase: 'RequiresApproval', at: ago(80000) }),
    ],
  });
  return k(s, 'sub-ns-c');
};

describe('redteam25 L1: a BundleUnpackFailed lingering on a Subscription whose InstallPlan exists', () => {
  const o = (): Observed => ({
    namespace: CAT,
    catalogSources: [CATALOG],
    catalogSourceObjects: [catsrc()],
    olmLabelsObjects: true,
    jobs: [{ job: failedJob(), configMap: configMap(), configMapInUse: false }],
    subscribers: [waitingB(), pendingApprovalC()],
    retryIntervals: { 'ns-b': 300 },
  });

  it('ns-c (UpgradePending, plan RequiresApproval) does not cancel ns-b\'s retry interval: defer, no delete', () => {
    const p = plan(o(), ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });

  it('ns-c\'s Subscription, whose plan exists, is never nudged for ns-b\'s Job', () => {
    const p = plan(o(), ctx);
    expect(writes(p)).not.toContain('patch Subscription/ns-c/redis');
  });
});
