/**
 * Red team 24 (W3; failed on 16a5f40): 16a5f40 counts a namespace as "waiting without a retry interval" (which cancels
 * every other namespace's interval) when one of its Subscriptions carries BundleUnpackFailed, on the
 * premise that OLM "sets those conditions only while resolving it". But OLM never REMOVES them when it
 * stops resolving a namespace: with != 1 OperatorGroup or a malformed bundle-unpack-min-retry-interval,
 * syncResolvingNamespace returns before writing any status (catalog/operator.go v0.46.0:1265-1279,
 * bundle_unpacker.go v0.46.0:1005-1024), so a BundleUnpackFailed written while the namespace still
 * resolved stays forever. Typical: the user sees BundleUnpackFailed, reads the docs and sets the retry
 * annotation as "1d" (Go's ParseDuration has no "d": OLM now fails the whole namespace), or an operator
 * manifest adds a second OperatorGroup. observe() sees both facts (it lists ns-d's OperatorGroups), yet
 * ns-d, which OLM never resolves again and which waits on no unpack, makes olm-medic delete ns-b's
 * failed Job inside ns-b's interval (and nudge ns-d uselessly), on every failure: the same harm W1 fixed
 * for a condition-less Subscription.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan } from '../../functions/job-conflict/plan.js';
import type { Plan } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { CAT, HASH, memReader, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { catsrc, configMap, og, failedJob: failed, waitingSub: unpackFailedSub, ctx, octx } = scene(NOW);

/** OLM v0.26-v0.42 (no TTL): failed 100 s ago, inside ns-b's 300 s retry interval. */
const failedJob = (): KubeObject => failed(100);
const RETRY = 'operatorframework.io/bundle-unpack-min-retry-interval';

async function planFor(nsD: KubeObject[]): Promise<Plan> {
  const reader = memReader([
    catsrc(),
    configMap(),
    failedJob(),
    unpackFailedSub('ns-b', 'etcd', 100), // really waits: OLM resolves ns-b and retries after 5m
    og('ns-b', 'og', { [RETRY]: '5m' }),
    // ns-d: BundleUnpackFailed written days ago, while it still resolved; OLM has not resolved it since.
    unpackFailedSub('ns-d', 'redis', 3 * 86400),
    ...nsD,
  ]);
  const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
  return plan(observed!, ctx);
}

describe('redteam24 W3: a stale BundleUnpackFailed of a namespace OLM no longer resolves does not cancel another namespace\'s retry interval', () => {
  it('ns-d now has two OperatorGroups ("found 2 operatorGroups, expected 1"): defer to ns-b\'s interval, no delete', async () => {
    const p = await planFor([og('ns-d', 'og-1'), og('ns-d', 'og-2')]);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });

  it('ns-d\'s OperatorGroup sets the retry interval as "1d" (Go ParseDuration rejects it: OLM fails ns-d\'s every sync): defer to ns-b\'s interval, no delete', async () => {
    const p = await planFor([og('ns-d', 'og', { [RETRY]: '1d' })]);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });
});
