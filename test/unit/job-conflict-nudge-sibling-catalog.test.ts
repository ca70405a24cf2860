/**
 * Red team 30 (N1): a Subscription that resolves from an OPTED-OUT CatalogSource is nudged anyway
 * when another catalog of the same catalog namespace has a failed unpack Job.
 *
 * 7f252c3 (red team 29b G1) guards a nudge "like the finding it acts on": a re-sent nudge by the
 * catalog the Subscription resolves from (plan.ts nudgeOwed), a nudge that stands in for the
 * delete by the Job's guards (plan.ts decideJob, `guards: [target(f.job), ...jobGuards(f, o).guards]`).
 * But plan() nudges every blockedOnUnpack subscriber of the catalog NAMESPACE (`o.subscribers`, all
 * Subscriptions whose spec.sourceNamespace is it), whatever catalog each resolves from, and each
 * nudge carries only the failed Job's guards (`guardsFor(sub)`), never the Subscription's own
 * catalog. The delete path's nudges carry no guard at all. So the opt-out of catalog
 * `private-catalog` (README: "a re-sent nudge is guarded by the catalog the Subscription resolves
 * from") is ignored for its own Subscription as soon as a sibling catalog's Job fails: the very
 * Subscription nudgeOwed refuses to touch is patched (olm-medic.io/nudged-at).
 *
 * Scene (OLM v0.28): catalog namespace `olm` holds operatorhubio-catalog (owns the failed Job and
 * its ConfigMap) and private-catalog (annotated olm-medic.io/opt-out=true). Namespace ns-b has
 * Subscription etcd (from operatorhubio-catalog) and Subscription private-op (from private-catalog),
 * both BundleUnpackFailed. ns-b's OperatorGroup sets bundle-unpack-min-retry-interval=1m (passed).
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import * as olm from '../fixtures/olm-objects.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';
import { CAT, HASH, scene } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { k, ago, catsrc, configMap, og, failedJob, waitingSub } = scene(NOW);

const privateCatalog = (): KubeObject =>
  k(olm.catalogSource({ namespace: CAT, name: 'private-catalog', image: 'registry.example.com/private:latest', annotations: { [MEDIC.optOut]: 'true' } }), 'catsrc-private');

/** A Subscription of ns-b resolving from the opted-out private-catalog, BundleUnpackFailed 10 min ago. */
const privateSub = (): KubeObject => {
  const s = olm.subscription({ namespace: 'ns-b', name: 'private-op', package: 'private-op', source: 'private-catalog', sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: ago(600), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(600) })] });
  return k(s, 'sub-ns-b-private');
};

async function run(objects: KubeObject[], trigger: 'job' | 'private-sub'): Promise<string[]> {
  const { kube, writes } = recordingKube(objects, { now: () => NOW });
  const ref =
    trigger === 'job'
      ? { apiVersion: 'batch/v1', kind: 'Job', namespace: CAT, name: HASH }
      : { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: 'ns-b', name: 'private-op' };
  await handleOnce(kube, { now: () => NOW }, refUpdate(ref));
  return writes;
}

describe('red team 30 N1: a nudge never writes a Subscription whose own catalog is opted out', () => {
  it("control: nudgeOwed (the re-sent nudge) leaves private-catalog's Subscription alone", async () => {
    // No failed Job left: the Subscription's own look (nudgeOwed) is guarded by its catalog.
    const writes = await run([catsrc(), privateCatalog(), waitingSub('ns-b', 'etcd', 600), privateSub(), og('ns-b', 'og')], 'private-sub');
    expect(writes).toEqual([]);
  });

  it("retry interval passed on operatorhubio-catalog's failed Job: only its own waiter is nudged, not private-catalog's", async () => {
    const objects = [
      catsrc(),
      privateCatalog(),
      configMap(),
      failedJob(600, { olmVersion: 'v0.28.0' }),
      waitingSub('ns-b', 'etcd', 600),
      privateSub(),
      og('ns-b', 'og', { 'operatorframework.io/bundle-unpack-min-retry-interval': '1m' }),
    ];
    const writes = await run(objects, 'job');
    expect(writes, 'premise: the interval passed and the waiter of the failed Job is nudged').toContain('patch Subscription ns-b/etcd');
    expect(writes).not.toContain('patch Subscription ns-b/private-op');
  });

  it("no retry interval: operatorhubio-catalog's failed Job is deleted, and private-catalog's Subscription is not nudged", async () => {
    const objects = [catsrc(), privateCatalog(), configMap(), failedJob(600, { olmVersion: 'v0.28.0' }), waitingSub('ns-b', 'etcd', 600), privateSub(), og('ns-b', 'og')];
    const writes = await run(objects, 'job');
    expect(writes, 'premise: the failed Job is deleted').toContain(`delete Job ${CAT}/${HASH}`);
    expect(writes).not.toContain('patch Subscription ns-b/private-op');
  });
});
