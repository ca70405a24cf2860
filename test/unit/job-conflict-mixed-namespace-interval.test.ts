/**
 * Red team 26 (C1; left open until now): OLM writes BundleUnpackFailed on EVERY Subscription of a
 * namespace whose resolution failed, whichever catalog's bundle failed to unpack (catalog/operator.go
 * v0.46.0:1399-1467). An installed Subscription of this catalog with nothing to upgrade then looks
 * exactly like an upgrade this failed Job blocks (AtLatestKnown + BundleUnpackFailed). If its
 * namespace (ns-c) sets no retry interval, it counted as a namespace OLM never retries for, which
 * cancelled ns-b's interval: the Job was deleted inside ns-b's interval, although ns-c's condition
 * may come from its other catalog's unpack.
 *
 * A namespace that also subscribes to another catalog (another catalog namespace, or another
 * CatalogSource of this one) no longer cancels an interval; one whose Subscriptions all resolve from
 * the Job's catalog still does (job-conflict-upgrade-blocked.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan, type JobFacts, type Observed } from '../../functions/job-conflict/plan.js';
import type { KubeObject } from '../../shared/kube/types.js';
import type { Plan } from '../../shared/core/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, HASH, memReader, scene } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { k, ago, catsrc, configMap, og, failedJob: failed, waitingSub, blockedUpgrade, ctx, octx } = scene(NOW);

// The Job failed 100 s ago; ns-b (interval 5m) waits on it: OLM retries for ns-b 200 s from now.
const failedJob = failed(100, { olmVersion: 'v0.28.0' });
const facts: JobFacts = { job: failedJob, configMap: configMap(), configMapInUse: false };
/** ns-c: a Subscription of another CatalogSource in this catalog namespace, BundleUnpackFailed too. */
const siblingCatalogSub = (ns: string): KubeObject => {
  const s = olm.subscription({ namespace: ns, name: 'private-op', package: 'private-op', source: 'private-catalog', sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: ago(100), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(100) })] });
  return k(s, `sub-${ns}-private`);
};
const observed = (o: Partial<Observed>): Observed => ({
  namespace: CAT,
  catalogSources: [CATALOG, 'private-catalog'],
  catalogSourceObjects: [catsrc()],
  olmLabelsObjects: true,
  jobs: [facts],
  subscribers: [waitingSub('ns-b', 'broken-operator', 100), blockedUpgrade('ns-c', 100)],
  retryIntervals: { 'ns-b': 300 },
  ...o,
});
const said = (p: Plan): string => (p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace}`).join(', ') : p.kind);

describe("red team 26 C1: an installed Subscription in a namespace that also uses another catalog does not cancel another namespace's interval", () => {
  it('control: ns-c subscribes to this catalog only: its blocked upgrade is never retried by OLM, so the Job is deleted now', () => {
    expect(said(plan(observed({}), ctx))).toContain(`delete Job/${CAT}`);
  });

  it('ns-c also subscribes to a catalog of another catalog namespace: deferred to ns-b\'s interval (re-checked when it passes)', () => {
    const p = plan(observed({ foreignNamespaces: ['ns-c'] }), ctx);
    expect(said(p)).toBe('defer');
    expect(p.kind === 'defer' && p.requeueAfterSeconds).toBe(200);
  });

  it('ns-c also subscribes to another CatalogSource of this catalog namespace: deferred too', () => {
    const p = plan(observed({ subscribers: [waitingSub('ns-b', 'broken-operator', 100), blockedUpgrade('ns-c', 100), siblingCatalogSub('ns-c')] }), ctx);
    expect(said(p)).toBe('defer');
  });

  it("a namespace whose only stuck Subscription is of another CatalogSource waits on no unpack of this Job's catalog", () => {
    const p = plan(observed({ subscribers: [waitingSub('ns-b', 'broken-operator', 100), siblingCatalogSub('ns-d')] }), ctx);
    expect(said(p)).toBe('defer');
  });

  it('without the CatalogSource (unknown catalog), a namespace naming two catalogs counts as mixed', () => {
    const p = plan(observed({ catalogSourceObjects: [], subscribers: [waitingSub('ns-b', 'broken-operator', 100), blockedUpgrade('ns-c', 100), siblingCatalogSub('ns-c')] }), ctx);
    expect(said(p)).toBe('defer');
  });

  it('once ns-b\'s interval has passed, the mixed namespace changes nothing: ns-b is nudged, nothing deleted', () => {
    const late = { ...ctx, now: new Date(NOW.getTime() + 300_000) };
    const p = plan(observed({ foreignNamespaces: ['ns-c'] }), late);
    expect(said(p)).toBe('patch Subscription/ns-b');
  });
});

describe('red team 26 C1: observe() finds the namespaces that subscribe to another catalog namespace', () => {
  it("ns-c's Subscription of a catalog in another namespace makes ns-c mixed; ns-b stays not mixed; the whole cycle defers", async () => {
    const other = olm.subscription({ namespace: 'ns-c', name: 'other-op', package: 'other-op', source: 'vendor-catalog', sourceNamespace: 'vendor-catalogs' });
    other.status = olm.subscriptionStatus({ at: ago(100), currentCSV: 'other-op.v1', installedCSV: 'other-op.v1', state: 'UpgradePending', conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(100) })] });
    const objects = [catsrc(), configMap(), failedJob, waitingSub('ns-b', 'broken-operator', 100), blockedUpgrade('ns-c', 100), k(other, 'sub-ns-c-other'), og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-min-retry-interval': '5m' }), og('ns-c', 'og')];
    const seen = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader(objects), octx);
    expect(seen?.foreignNamespaces).toEqual(['ns-c']);
    expect(seen?.retryIntervals).toEqual({ 'ns-b': 300 });
    expect(said(plan(seen!, ctx))).toBe('defer');
    // Twin: without ns-c's other Subscription, ns-c cancels ns-b's interval (the Job is deleted now).
    const alone = await jobConflict.observe({ apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }, memReader(objects.filter((o) => o.metadata.uid !== 'sub-ns-c-other')), octx);
    expect(alone?.foreignNamespaces).toBeUndefined();
    expect(said(plan(alone!, ctx))).toContain(`delete Job/${CAT}`);
  });
});
