/**
 * Red team 23 (W1; failed on 991b03d): 991b03d made job-conflict delete a failed unpack Job as soon as ANY "waiting"
 * subscriber namespace lacks bundle-unpack-min-retry-interval. "waiting" is every Subscription of
 * the catalog namespace that isStuckOnUnpack, i.e. also one that has no installPlanRef/currentCSV
 * for reasons that have nothing to do with this (or any) unpack Job:
 *   - its namespace's resolution fails before unpacking (ResolutionFailed=True, ConstraintsNotSatisfiable);
 *   - its namespace has != 1 OperatorGroup: OLM's syncResolvingNamespace returns at once
 *     (IsFailForwardEnabled / OperatorGroupBundleUnpackRetryInterval: "found %d operatorGroups,
 *     expected 1", catalog/operator.go v0.46.0:1265-1279), so OLM never unpacks anything for it.
 * Such a namespace cannot be waiting on the failed Job, yet it makes olm-medic delete the Job the
 * only really waiting namespace (ns-b) leaves to OLM's retry interval (and nudge it, so OLM recreates
 * the Job at once): the interval is defeated on every failure, for as long as the unrelated
 * Subscription stays. On 420070f these deferred (ns-b's interval); regression of 991b03d.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan, type Observed } from '../../functions/job-conflict/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, HASH, memReader, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { ago, k, catsrc, configMap, og, failedJob: failed, waitingSub, ctx, octx } = scene(NOW);

/** OLM v0.26-v0.42 shape (no TTL): failed 100 s ago, well inside ns-b's 300 s retry interval. */
const failedJob = (): KubeObject => failed(100);
/** ns-b really waits on this Job: OLM set BundleUnpackFailed on its Subscription. */
const waitingB = (): KubeObject => waitingSub('ns-b', 'etcd', 100);
/** ns-c: resolution fails before any unpack (constraints not satisfiable): no installPlanRef, no currentCSV, no unpack condition. */
const unresolvableC = (): KubeObject => {
  const s = olm.subscription({ namespace: 'ns-c', name: 'prometheus', package: 'prometheus', source: CATALOG, sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({
    at: ago(7200),
    conditions: [
      olm.subscriptionCondition({ type: 'ResolutionFailed', reason: 'ConstraintsNotSatisfiable', message: 'no operators found in channel alpha of package prometheus in the catalog referenced by subscription prometheus', at: ago(7200) }),
    ],
  });
  return k(s, 'sub-ns-c');
};
/** ns-d: a Subscription in a namespace OLM refuses to resolve (two OperatorGroups): OLM writes no status. */
const unresolvedD = (): KubeObject => k(olm.subscription({ namespace: 'ns-d', name: 'redis', package: 'redis', source: CATALOG, sourceNamespace: CAT }), 'sub-ns-d');

describe('redteam23 W1: a Subscription that is not waiting on any unpack does not cancel another namespace\'s retry interval', () => {
  it('ns-b (interval 5m) waits on the failed Job; ns-c\'s Subscription only fails resolution (ConstraintsNotSatisfiable, never unpacked): defer to OLM\'s retry for ns-b, no delete, no nudge', () => {
    const o: Observed = {
      namespace: CAT,
      catalogSources: [CATALOG],
      catalogSourceObjects: [catsrc()],
      olmLabelsObjects: true,
      jobs: [{ job: failedJob(), configMap: configMap(), configMapInUse: false }],
      subscribers: [waitingB(), unresolvableC()],
      retryIntervals: { 'ns-b': 300 },
    };
    const p = plan(o, ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });

  it('through observe: ns-d has two OperatorGroups (OLM never resolves it, "found 2 operatorGroups, expected 1"); its status-less Subscription must not make olm-medic delete ns-b\'s Job inside ns-b\'s retry interval', async () => {
    const reader = memReader([
      catsrc(),
      configMap(),
      failedJob(),
      waitingB(),
      unresolvedD(),
      og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-min-retry-interval': '5m' }),
      og('ns-d', 'og-1'),
      og('ns-d', 'og-2'),
    ]);
    const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
    const p = plan(observed!, ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(writes(p)).not.toContain('patch Subscription/ns-d/redis');
  });
});
