/**
 * Test support: the scaffolding of job-conflict scenes (test/unit/job-conflict-*.test.ts,
 * attack-job-conflict.test.ts). One catalog namespace (CAT) with one CatalogSource (CATALOG, uid
 * catsrc-1) and the unpack ConfigMap (uid cm-1) of one bundle image (IMAGE, whose unpack Job is
 * named HASH), an in-memory Reader, and builders stamped relative to each file's own NOW.
 */
import { NO_POLICY, type ObserveContext, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import * as olm from '../fixtures/olm-objects.js';

export const CAT = 'olm';
export const CATALOG = 'operatorhubio-catalog';
export const IMAGE = 'quay.io/operatorhubio/etcd@sha256:5e9e2a1ed1e3ab0b0f9b4e6f4a8b9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1';
export const HASH = olm.unpackHash(IMAGE);

/**
 * Two bundle images of CATALOG (two unpack Jobs side by side in CAT), and a stamp giving a built
 * object its uid, resourceVersion 7, an age of a day before `now` and, if asked, annotations.
 */
export function twoBundles(now: Date) {
  const images = ['quay.io/operatorhubio/etcd@sha256:' + 'a'.repeat(64), 'quay.io/operatorhubio/redis@sha256:' + 'b'.repeat(64)] as const;
  const ago = (s: number): Date => new Date(now.getTime() - s * 1000);
  const stamp = (o: olm.Obj, uid: string, annotations?: Record<string, string>): KubeObject =>
    ({ ...o, metadata: { ...o.metadata, uid, resourceVersion: '7', creationTimestamp: olm.rfc3339(ago(86400)), ...(annotations ? { annotations } : {}) } }) as KubeObject;
  return { IMAGES: images, ago, stamp };
}

/** An in-memory Reader: get by identity, list by kind, namespace and a simple label selector. */
export function memReader(objects: KubeObject[]): Reader {
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

/**
 * The builders of one scene at `now` (one per test file: its own resourceVersion counter).
 *   ago(s)          `now` minus s seconds;
 *   k(o, uid, ...)  stamps uid, the next resourceVersion, a creationTimestamp a day before `now`, then `extra`;
 *   catsrc()        the CatalogSource (optionally with annotations), configMap() its unpack ConfigMap of IMAGE;
 *   og(ns, name)    an OperatorGroup, uid og-<ns>-<name>;
 *   failedJob(s, o) IMAGE's unpack Job (owned by cm-1), Failed (DeadlineExceeded) s seconds ago; o.olmVersion,
 *                   o.variant, o.name go to olm.unpackJob as given (none: its defaults), uid o.uid ?? job-1;
 *   waitingSub(ns, pkg, s, nudgedAt?)
 *                   a Subscription <pkg> (package <pkg>) waiting on an unpack: status and BundleUnpackFailed
 *                   s seconds ago, no installPlanRef; uid sub-<ns>; with nudgedAt, olm-medic's nudge annotation;
 *   blockedUpgrade(ns, s)
 *                   the Subscription etcd of ns whose upgrade the failed Job blocks: AtLatestKnown with
 *                   etcdoperator.v0.9.2 installed (InstallPlan install-old01, uid ip-old) and BundleUnpackFailed,
 *                   both s seconds ago; uid sub-<ns>;
 *   ctx / octx      plan()'s context at `now` (margin 60 s, no policy) / observe()'s, whose clock reads `now`.
 */
export function scene(now: Date) {
  const ago = (s: number): Date => new Date(now.getTime() - s * 1000);
  let rv = 0;
  const k = (o: olm.Obj, uid: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
    ({ ...o, metadata: { ...o.metadata, uid, resourceVersion: String(++rv), creationTimestamp: olm.rfc3339(ago(86400)), ...extra } }) as KubeObject;
  const catsrc = (annotations?: Record<string, string>): KubeObject =>
    k(olm.catalogSource({ namespace: CAT, name: CATALOG, image: 'quay.io/operatorhubio/catalog:latest', ...(annotations ? { annotations } : {}) }), 'catsrc-1');
  const configMap = (): KubeObject => k(olm.unpackConfigMap({ namespace: CAT, image: IMAGE, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true }), 'cm-1');
  const og = (ns: string, name: string, annotations?: Record<string, string>): KubeObject =>
    k(olm.operatorGroup({ namespace: ns, name, ...(annotations ? { annotations } : {}) }), `og-${ns}-${name}`);
  const failedJob = (failedSecondsAgo: number, opts: Pick<olm.UnpackJobOptions, 'olmVersion' | 'variant' | 'name'> & { uid?: string } = {}): KubeObject => {
    const { uid, ...shape } = opts;
    const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1', ...shape });
    j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(failedSecondsAgo) });
    return k(j, uid ?? 'job-1');
  };
  const waitingSub = (ns: string, pkg: string, secondsAgo: number, nudgedAt?: Date): KubeObject => {
    const s = olm.subscription({ namespace: ns, name: pkg, package: pkg, source: CATALOG, sourceNamespace: CAT });
    s.status = olm.subscriptionStatus({ at: ago(secondsAgo), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(secondsAgo) })] });
    return k(s, `sub-${ns}`, nudgedAt ? { annotations: { [MEDIC.nudge]: nudgedAt.toISOString() } } : {});
  };
  const blockedUpgrade = (ns: string, secondsAgo: number): KubeObject => {
    const s = olm.subscription({ namespace: ns, name: 'etcd', package: 'etcd', source: CATALOG, sourceNamespace: CAT });
    s.status = olm.subscriptionStatus({
      at: ago(secondsAgo),
      currentCSV: 'etcdoperator.v0.9.2',
      installedCSV: 'etcdoperator.v0.9.2',
      installPlan: { name: 'install-old01', namespace: ns, uid: 'ip-old' },
      state: 'AtLatestKnown',
      conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(secondsAgo) })],
    });
    return k(s, `sub-${ns}`);
  };
  const ctx: PlanContext = { now, options: { marginSeconds: 60 }, policy: NO_POLICY };
  const octx: ObserveContext = { ...ctx, clock: () => now };
  return { ago, k, catsrc, configMap, og, failedJob, waitingSub, blockedUpgrade, ctx, octx };
}

/** A name as tests write it: the unpack Job's or ConfigMap's (HASH) as `hash`. */
export const shortName = (name: string): string => (name === HASH ? 'hash' : name);

/** A plan's writes as `verb Kind/namespace/name` (the unpack Job's or ConfigMap's name as `hash`); any other plan as its kind. */
export const writes = (p: Plan): string[] =>
  p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace}/${shortName(a.target.name)}`) : [`${p.kind}`];
