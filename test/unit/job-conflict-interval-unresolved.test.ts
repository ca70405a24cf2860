/**
 * Red team 26 (R1, R2; failed on ea46e2c): ea46e2c marked a namespace whose single OperatorGroup
 * carries a malformed bundle-unpack-timeout as `unresolved` (OLM returns before reading the retry
 * interval: catalog/operator.go v0.46.0:1270-1273, v0.28.0:1231-1234, v0.25.0:943), but observe()
 * still recorded that namespace's bundle-unpack-min-retry-interval in `retryIntervals`, and `retrying`
 * did not leave unresolved namespaces out. So ns-b (timeout "1d", interval 1m) set the deadline for
 * the whole catalog: after 1 minute olm-medic nudged ns-b (OLM cannot resolve it) and ns-d (interval
 * 30m: ensureJob creates no retry Job before 30m, bundle_unpacker.go v0.46.0:741-750). At 30m, when
 * OLM WOULD retry on ns-d's resolution, plan() answered "already nudged since the failure" (the
 * nudge check compared against the failure time, not the due time).
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan } from '../../functions/job-conflict/plan.js';
import { NO_POLICY, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, HASH, memReader, scene, writes } from '../support/job-conflict-scene.js';

const T0 = new Date('2026-06-01T12:00:00Z'); // the Job's failure
const at = (s: number): Date => new Date(T0.getTime() + s * 1000);
const ctxAt = (s: number): PlanContext => ({ now: at(s), options: { marginSeconds: 60 }, policy: NO_POLICY });
const { k, catsrc, configMap, failedJob: failed } = scene(T0);

/** OLM v0.28 (no TTL): failed at T0. */
const failedJob = (): KubeObject => failed(0, { olmVersion: 'v0.28.0' });
/** Both namespaces wait on this bundle; OLM wrote BundleUnpackFailed at T0. */
const waitingSub = (ns: string, name: string, nudgedAt?: Date): KubeObject => {
  const s = olm.subscription({ namespace: ns, name, package: 'etcd', source: CATALOG, sourceNamespace: CAT, ...(nudgedAt ? { annotations: { [MEDIC.nudge]: nudgedAt.toISOString() } } : {}) });
  s.status = olm.subscriptionStatus({ at: T0, conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: T0 })] });
  return k(s, `sub-${ns}`);
};
const og = (ns: string, annotations: Record<string, string>): KubeObject => k(olm.operatorGroup({ namespace: ns, name: 'og', annotations }), `og-${ns}`);
const world = (nudgedAt?: Date): KubeObject[] => [
  catsrc(),
  configMap(),
  failedJob(),
  waitingSub('ns-b', 'etcd', nudgedAt),
  // ns-b: OLM stops at the timeout ("1d" is not a Go duration) and never reads the 1m interval.
  og('ns-b', { 'operatorframework.io/bundle-unpack-timeout': '1d', 'operatorframework.io/bundle-unpack-min-retry-interval': '1m' }),
  waitingSub('ns-d', 'etcd', nudgedAt),
  og('ns-d', { 'operatorframework.io/bundle-unpack-min-retry-interval': '30m' }),
];
const run = async (s: number, objects: KubeObject[]): Promise<Plan> => {
  const c = ctxAt(s);
  const observed = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader(objects), { ...c, clock: () => c.now } as never);
  return plan(observed!, c);
};

describe('job-conflict: the retry interval of a namespace OLM does not resolve', () => {
  it("does not set the deadline: 2 min after the failure (inside ns-d's 30m) olm-medic still defers", async () => {
    const p = await run(120, world());
    expect(writes(p)).not.toContain('patch Subscription/ns-d/etcd');
    expect(p.kind).toBe('defer');
  });

  it('ns-d is nudged once ITS interval has passed, even though an earlier (too early) nudge touched it', async () => {
    // A nudge written at T0+120 s (inside ns-d's interval), seen at T0+31 min.
    const p = await run(31 * 60, world(at(120)));
    expect(writes(p)).toContain('patch Subscription/ns-d/etcd');
  });
});
