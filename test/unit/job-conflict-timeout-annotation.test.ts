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
import { NO_POLICY, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const ctx: PlanContext = { now: NOW, options: { marginSeconds: 60 }, policy: NO_POLICY };
const octx = { ...ctx, clock: () => NOW };
const CAT = 'olm';
const CATALOG = 'operatorhubio-catalog';
const IMAGE = 'quay.io/operatorhubio/etcd@sha256:5e9e2a1ed1e3ab0b0f9b4e6f4a8b9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1';
const HASH = olm.unpackHash(IMAGE);
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);
let rv = 0;
const k = (o: olm.Obj, uid: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
  ({ ...o, metadata: { ...o.metadata, uid, resourceVersion: String(++rv), creationTimestamp: olm.rfc3339(ago(86400)), ...extra } }) as KubeObject;

function memReader(objects: KubeObject[]): Reader {
  const matches = (o: KubeObject, sel?: string): boolean =>
    !sel ||
    sel.split(',').every((term) => {
      const [key, val] = term.split('=');
      const v = o.metadata.labels?.[key!];
      return val === undefined ? v !== undefined : v === val;
    });
  return {
    get: (async (ref: Ref) =>
      objects.find((o) => o.apiVersion === ref.apiVersion && o.kind === ref.kind && o.metadata.name === ref.name && (o.metadata.namespace ?? '') === (ref.namespace ?? ''))) as Reader['get'],
    list: ((apiVersion: string, kind: string, opts: ListOptions = {}) =>
      (async function* () {
        for (const o of objects) {
          if (o.apiVersion !== apiVersion || o.kind !== kind) continue;
          if (opts.namespace && o.metadata.namespace !== opts.namespace) continue;
          if (!matches(o, opts.labelSelector)) continue;
          yield o;
        }
      })()) as Reader['list'],
  };
}

const catsrc = (): KubeObject => k(olm.catalogSource({ namespace: CAT, name: CATALOG, image: 'quay.io/operatorhubio/catalog:latest' }), 'catsrc-1');
const configMap = (): KubeObject => k(olm.unpackConfigMap({ namespace: CAT, image: IMAGE, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true }), 'cm-1');
/** OLM v0.26-v0.42 (no TTL): failed 100 s ago, inside ns-b's 300 s retry interval. */
const failedJob = (): KubeObject => {
  const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1' });
  j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(100) });
  return k(j, 'job-1');
};
const unpackFailedSub = (ns: string, name: string, at: number): KubeObject => {
  const s = olm.subscription({ namespace: ns, name, package: name, source: CATALOG, sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: ago(at), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(at) })] });
  return k(s, `sub-${ns}`);
};
const og = (ns: string, name: string, annotations?: Record<string, string>): KubeObject =>
  k(olm.operatorGroup({ namespace: ns, name, ...(annotations ? { annotations } : {}) }), `og-${ns}-${name}`);
const writes = (p: Plan): string[] =>
  p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace}/${a.target.name === HASH ? 'hash' : a.target.name}`) : [`${p.kind}`];

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
