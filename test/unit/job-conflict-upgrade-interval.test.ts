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
import { NO_POLICY, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const ctx: PlanContext = { now: NOW, options: { marginSeconds: 60 }, policy: NO_POLICY };
const CAT = 'olm';
const CATALOG = 'operatorhubio-catalog';
const IMAGE = 'quay.io/operatorhubio/etcd@sha256:5e9e2a1ed1e3ab0b0f9b4e6f4a8b9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1';
const HASH = olm.unpackHash(IMAGE);
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);
let rv = 0;
const k = (o: olm.Obj, uid: string): KubeObject =>
  ({ ...o, metadata: { ...o.metadata, uid, resourceVersion: String(++rv), creationTimestamp: olm.rfc3339(ago(86400)) } }) as KubeObject;

const catsrc = (): KubeObject => k(olm.catalogSource({ namespace: CAT, name: CATALOG, image: 'quay.io/operatorhubio/catalog:latest' }), 'catsrc-1');
const configMap = (): KubeObject => k(olm.unpackConfigMap({ namespace: CAT, image: IMAGE, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true }), 'cm-1');
/** OLM v0.26-v0.42 (no TTL): failed 100 s ago, inside ns-b's 300 s retry interval. */
const failedJob = (): KubeObject => {
  const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', olmVersion: 'v0.28.0' });
  j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(100) });
  return k(j, 'job-1');
};
/** ns-b: etcd v0.9.2 installed; its upgrade to v0.9.4 is blocked by this Job; ns-b sets a 5m retry interval. */
const upgradeB = (): KubeObject => {
  const s = olm.subscription({ namespace: 'ns-b', name: 'etcd', package: 'etcd', source: CATALOG, sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({
    at: ago(100),
    currentCSV: 'etcdoperator.v0.9.2',
    installedCSV: 'etcdoperator.v0.9.2',
    installPlan: { name: 'install-old01', namespace: 'ns-b', uid: 'ip-old' },
    state: 'AtLatestKnown',
    conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(100) })],
  });
  return k(s, 'sub-ns-b');
};
const writes = (p: Plan): string[] =>
  p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace}/${a.target.name === HASH ? 'hash' : a.target.name}`) : [`${p.kind}`];

describe('redteam25 U2: an upgrade blocked by the failed Job in a namespace WITH a retry interval', () => {
  it('is left to OLM\'s retry inside the interval: defer, no delete', () => {
    const o: Observed = {
      namespace: CAT,
      catalogSources: [CATALOG],
      catalogSourceObjects: [catsrc()],
      olmLabelsObjects: true,
      jobs: [{ job: failedJob(), configMap: configMap(), configMapInUse: false }],
      subscribers: [upgradeB()],
      retryIntervals: { 'ns-b': 300 },
    };
    const p = plan(o, ctx);
    expect(writes(p)).not.toContain('delete Job/olm/hash');
    expect(p.kind).toBe('defer');
  });
});
