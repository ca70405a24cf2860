/**
 * Red team 25 (T1; failed on 659e60c): 659e60c excludes from `unretried` the namespaces OLM does not resolve, but it
 * only recognises two of the three early returns that precede every status write in
 * syncResolvingNamespace: != 1 OperatorGroup and a malformed bundle-unpack-min-retry-interval. A
 * malformed operatorframework.io/bundle-unpack-timeout (e.g. "1d", "10 min") on the single
 * OperatorGroup stops the namespace just the same:
 *   catalog/operator.go v0.46.0:1270-1273, v0.28.0:1231-1234, v0.25.0:943-946
 *     unpackTimeout, err := bundle.OperatorGroupBundleUnpackTimeout(ogLister); if err != nil { return err }
 *   bundle_unpacker.go v0.28.0:896-899 "failed to parse unpack timeout annotation(...)"
 * so ns-d's BundleUnpackFailed (written while it still resolved) is stale, ns-d waits on no unpack,
 * yet it counts as "unretried" and olm-medic deletes ns-b's Job inside ns-b's retry interval.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan } from '../../functions/job-conflict/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { CAT, HASH, memReader, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { catsrc, configMap, og, failedJob: failed, waitingSub: unpackFailedSub, ctx, octx } = scene(NOW);

/** OLM v0.26-v0.42 (no TTL): failed 100 s ago, inside ns-b's 300 s retry interval. */
const failedJob = (): KubeObject => failed(100);

describe('redteam25 T1: a namespace OLM stops resolving because of a malformed bundle-unpack-timeout', () => {
  it('ns-d\'s single OperatorGroup sets bundle-unpack-timeout "1d" (OLM returns before any status write): its stale BundleUnpackFailed does not cancel ns-b\'s retry interval', async () => {
    const reader = memReader([
      catsrc(),
      configMap(),
      failedJob(),
      unpackFailedSub('ns-b', 'etcd', 100),
      og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-min-retry-interval': '5m' }),
      unpackFailedSub('ns-d', 'redis', 3 * 86400),
      og('ns-d', 'og', { 'operatorframework.io/bundle-unpack-timeout': '1d' }),
    ]);
    const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
    const p = plan(observed!, ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });
});
