/**
 * Red team 25 (U2; failed on 659e60c and before): 659e60c recognises an upgrade blocked by the failed Job (AtLatestKnown with
 * BundleUnpackFailed: ensureSubscriptionCSVState keeps AtLatestKnown while currentCSV exists,
 * catalog/operator.go v0.46.0:1694-1719; only setIPReference v0.46.0:1734-1746 moves it on) as
 * waiting on the Job, but only for `unretried` and the post-delete nudge. `waiting` (hence
 * `retrying`) still uses isStuckOnUnpack, which returns false for every AtLatestKnown Subscription.
 * So when the blocked upgrade's namespace DOES set bundle-unpack-min-retry-interval, olm-medic does
 * not defer to it: it deletes the Job (and its ConfigMap) at once, inside the interval after which
 * OLM creates the retry Job itself (bundle_unpacker.go v0.46.0:741-750: only when the interval has
 * passed since the Failed condition). The same namespace as a new install (no currentCSV) is deferred.
 */
import { describe, expect, it } from 'vitest';
import { plan, type Observed } from '../../functions/job-conflict/plan.js';
import { CAT, CATALOG, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { catsrc, configMap, failedJob, blockedUpgrade, ctx } = scene(NOW);

describe('redteam25 U2: an upgrade blocked by the failed Job in a namespace WITH a retry interval', () => {
  it('is left to OLM\'s retry inside the interval: defer, no delete', () => {
    const o: Observed = {
      namespace: CAT,
      catalogSources: [CATALOG],
      catalogSourceObjects: [catsrc()],
      olmLabelsObjects: true,
      // OLM v0.26-v0.42 (no TTL): failed 100 s ago, inside ns-b's 300 s retry interval.
      jobs: [{ job: failedJob(100, { olmVersion: 'v0.28.0' }), configMap: configMap(), configMapInUse: false }],
      // ns-b: etcd v0.9.2 installed; its upgrade to v0.9.4 is blocked by this Job; ns-b sets a 5m retry interval.
      subscribers: [blockedUpgrade('ns-b', 100)],
      retryIntervals: { 'ns-b': 300 },
    };
    const p = plan(o, ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });
});
