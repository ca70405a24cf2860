/**
 * Red team 29b (D1): goDurationSeconds() (shared/olm/olm.ts) is stricter than Go's
 * time.ParseDuration, which OLM uses on the OperatorGroup annotations
 * (bundle_unpacker.go v0.28.0 OperatorGroupBundleUnpackRetryInterval / ...Timeout; v0.46.0:978-1030,
 * called from catalog/operator.go v0.28.0:1231-1240 syncResolvingNamespace). Go accepts an optional
 * leading '+' ("+5m"), a fraction without an integer part (".5h") or without digits after the dot
 * ("5.m"), "+0"/"-0", and "μs" spelled with U+03BC (checked with go1 time.ParseDuration). olm-medic parses none of them, so it records a namespace OLM resolves and
 * retries as `unresolved` with no retry interval, and deletes the failed unpack Job INSIDE that
 * namespace's retry interval (OLM v0.26-v0.42: no TTL), where it should defer to OLM.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan } from '../../functions/job-conflict/plan.js';
import { goDurationSeconds } from '../../shared/olm/olm.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { CAT, HASH, memReader, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { catsrc, configMap, og, failedJob: failed, waitingSub, ctx, octx } = scene(NOW);

/** OLM v0.28 (no TTL): failed 100 s ago. */
const failedJob = (): KubeObject => failed(100, { olmVersion: 'v0.28.0' });

describe('redteam29b D1: retry intervals Go parses but olm-medic does not', () => {
  it('goDurationSeconds agrees with time.ParseDuration on valid Go durations', () => {
    expect(goDurationSeconds('+5m')).toBe(300);
    expect(goDurationSeconds('.5h')).toBe(1800);
    expect(goDurationSeconds('5.m')).toBe(300);
    expect(goDurationSeconds('-0') === 0).toBe(true);
    expect(goDurationSeconds('+0') === 0).toBe(true);
    // Go takes U+03BC (Greek mu) as well as U+00B5 (micro sign) for microseconds.
    expect(goDurationSeconds('1\u03bcs')).toBeCloseTo(1e-6);
  });

  for (const interval of ['+5m', '.5h', '5.m']) {
    it(`ns-b's OperatorGroup sets bundle-unpack-min-retry-interval "${interval}" (valid for Go): 100 s after the failure the Job is not deleted (OLM retries it itself)`, async () => {
      const reader = memReader([
        catsrc(),
        configMap(),
        failedJob(),
        waitingSub('ns-b', 'etcd', 100),
        og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-min-retry-interval': interval }),
      ]);
      const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
      const p = plan(observed!, ctx);
      expect(writes(p)).not.toContain('delete Job/olm/hash');
      expect(p.kind).toBe('defer');
    });
  }

  it('ns-b\'s OperatorGroup sets bundle-unpack-timeout "+10m" (valid for Go) and a 5m retry interval: OLM resolves ns-b and retries itself, so the Job is not deleted 100 s after the failure', async () => {
    const reader = memReader([
      catsrc(),
      configMap(),
      failedJob(),
      waitingSub('ns-b', 'etcd', 100),
      og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-timeout': '+10m', 'operatorframework.io/bundle-unpack-min-retry-interval': '5m' }),
    ]);
    const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, reader, octx);
    const p = plan(observed!, ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });
});
