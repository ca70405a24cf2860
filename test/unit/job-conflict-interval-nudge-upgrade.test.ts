/**
 * Red team 26 (N1; failed on ea46e2c): ea46e2c counts an upgrade the failed Job blocks (AtLatestKnown
 * with BundleUnpackFailed) as waiting (blockedOnUnpack) when deciding to DEFER to the namespace's
 * bundle-unpack-min-retry-interval, but once that interval had passed, plan()'s nudge branch still
 * picked the Subscriptions to touch with isStuckOnUnpack, which is false for every AtLatestKnown one.
 * So the blocked upgrade was deferred and then never nudged: plan() said "already nudged" (it never
 * was) and OLM retries only at its next resync (v0.46 requeues 5 min after a NEW failure only,
 * catalog/operator.go v0.46.0:1475-1483; otherwise resyncPeriod 15 min ±20 %, :143).
 * OLM creates the retry Job only when it resolves the namespace after the interval:
 * bundle_unpacker.go v0.46.0:741-750 (ensureJob), called from syncResolvingNamespace :1375.
 */
import { describe, expect, it } from 'vitest';
import { plan, type Observed } from '../../functions/job-conflict/plan.js';
import { CAT, CATALOG, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { catsrc, configMap, failedJob, blockedUpgrade, ctx } = scene(NOW);

describe("job-conflict: a blocked upgrade deferred to its namespace's retry interval", () => {
  it('is nudged once the interval has passed (OLM retries only when it next resolves)', () => {
    const o: Observed = {
      namespace: CAT,
      catalogSources: [CATALOG],
      catalogSourceObjects: [catsrc()],
      olmLabelsObjects: true,
      // OLM v0.28 (no TTL): failed 400 s ago, PAST ns-b's 300 s retry interval.
      jobs: [{ job: failedJob(400, { olmVersion: 'v0.28.0' }), configMap: configMap(), configMapInUse: false }],
      // ns-b: etcd v0.9.2 installed; its upgrade is blocked by this Job (as red team 25 U2); never nudged.
      subscribers: [blockedUpgrade('ns-b', 400)],
      retryIntervals: { 'ns-b': 300 },
    };
    // Inside the interval (red team 25 U2): deferred.
    const early = plan({ ...o }, { ...ctx, now: new Date(NOW.getTime() - 200_000) });
    expect(early.kind).toBe('defer');
    // Past it: nudge ns-b's Subscription.
    const p = plan(o, ctx);
    expect(writes(p), JSON.stringify(p)).toContain('patch Subscription/ns-b/etcd');
  });
});
