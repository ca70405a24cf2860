/**
 * Red team 27 (against d641e31, reverted in f967048): a Subscription-triggered job-conflict
 * reconcile must read the shared cluster-wide lists from a list that started AFTER it asked. d641e31
 * let it join a running list that had only started after its own Subscription's last write; a
 * change in between to an object job-conflict gets no event for was then missed for good:
 *  - an InstallPlan that went Installing and still references the failed Job's unpack ConfigMap
 *    (§1.6): configMapInUse was false and the ConfigMap was deleted while in use;
 *  - a waiting Subscription (no retry interval) deleted: its namespace still counted as waiting
 *    without an interval, so the Job was deleted inside the other namespaces' interval.
 * Both "must" cases failed on d641e31.
 */
import { describe, expect, it } from 'vitest';
import { jobConflict } from '../../functions/job-conflict/index.js';
import { plan } from '../../functions/job-conflict/plan.js';
import { shareLists } from '../../shared/kube/shared-lists.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, IMAGE, scene, writes } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { ago, octx, ctx } = scene(NOW);
const tick = async (n = 10): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

/** A live store: a global resourceVersion; a list snapshots at its start (as a consistent list) and, for gated kinds, yields only once the gate opens. */
function store() {
  let rv = 100;
  const objects: KubeObject[] = [];
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const add = (o: KubeObject): KubeObject => {
    const x = { ...o, metadata: { ...o.metadata, resourceVersion: String(++rv), creationTimestamp: olm.rfc3339(ago(86400)) } } as KubeObject;
    objects.push(x);
    return x;
  };
  const reader: Reader = {
    get: (async (ref: Ref) =>
      objects.find((o) => o.apiVersion === ref.apiVersion && o.kind === ref.kind && o.metadata.name === ref.name && (o.metadata.namespace ?? '') === (ref.namespace ?? ''))) as Reader['get'],
    list: ((apiVersion: string, kind: string, opts: ListOptions = {}) =>
      (async function* () {
        const snap = objects.filter((o) => o.apiVersion === apiVersion && o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace)).filter((o) =>
          !opts.labelSelector || opts.labelSelector.split(',').every((t) => {
            const [key, val] = t.split('=');
            const v = o.metadata.labels?.[key!];
            return val === undefined ? v !== undefined : v === val;
          }));
        opts.onListResourceVersion?.(String(rv));
        const gated = !opts.namespace && opts.pageSize !== 1 && (kind === 'InstallPlan' || kind === 'Subscription');
        if (gated) await gate;
        for (const o of snap) yield o;
      })()) as Reader['list'],
  };
  return { add, reader, open, objects };
}

function seed(s: ReturnType<typeof store>) {
  s.add({ ...olm.catalogSource({ namespace: CAT, name: CATALOG, image: 'quay.io/operatorhubio/catalog:latest' }), metadata: { ...olm.catalogSource({ namespace: CAT, name: CATALOG, image: 'x' }).metadata, uid: 'catsrc-1' } } as KubeObject);
  const cm = olm.unpackConfigMap({ namespace: CAT, image: IMAGE, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true });
  s.add({ ...cm, metadata: { ...cm.metadata, uid: 'cm-1' } } as KubeObject);
  const j = olm.unpackJob({ namespace: CAT, image: IMAGE, configMapUid: 'cm-1' });
  j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(3000) });
  s.add({ ...j, metadata: { ...j.metadata, uid: 'job-1' } } as KubeObject);
  for (const ns of ['ns-a', 'ns-b']) {
    const sub = olm.subscription({ namespace: ns, name: 'etcd', package: 'etcd', source: CATALOG, sourceNamespace: CAT });
    sub.status = olm.subscriptionStatus({ at: ago(3000), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(3000) })] });
    s.add({ ...sub, metadata: { ...sub.metadata, uid: `sub-${ns}` } } as KubeObject);
    const og = olm.operatorGroup({ namespace: ns, name: 'og' });
    s.add({ ...og, metadata: { ...og.metadata, uid: `og-${ns}` } } as KubeObject);
  }
}

/** An InstallPlan (ns-c) Installing that still dereferences the unpack ConfigMap (§1.6). */
function installingPlan(): KubeObject {
  const ip = olm.installPlan({ namespace: 'ns-c', name: 'install-c', csvNames: ['etcdoperator.v0.9.4'] });
  ip.status = { phase: 'Installing', plan: [{ resource: { manifest: olm.unpackedBundleReference({ image: IMAGE, catalogSourceName: CATALOG, catalogSourceNamespace: CAT }) } }] };
  return { ...ip, metadata: { ...ip.metadata, uid: 'ip-c' } } as KubeObject;
}

const subRef = (ns: string): Ref => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', namespace: ns, name: 'etcd' });

describe('job-conflict reads shared lists started after it asked: InstallPlans', () => {
  it('control: with every list started after the ask, an Installing plan keeps the ConfigMap', async () => {
    const s = store();
    seed(s);
    s.add(installingPlan());
    s.open();
    const o = await jobConflict.observe(subRef('ns-a'), shareLists(s.reader), octx);
    expect(writes(plan(o!, ctx))).not.toContain('delete ConfigMap/olm/hash');
    expect(writes(plan(o!, ctx))).toContain('delete Job/olm/hash');
  });

  it('a reconcile for ns-a that asks after the plan went Installing must not delete the ConfigMap it uses', async () => {
    const s = store();
    seed(s);
    const r = shareLists(s.reader);
    // R1 (ns-b's event) starts the shared Subscription and InstallPlan lists.
    const r1 = jobConflict.observe(subRef('ns-b'), r, octx);
    await tick();
    // ... then OLM moves a plan to Installing, referencing the unpack ConfigMap.
    s.add(installingPlan());
    // R2 (ns-a's Subscription, unchanged since long before R1's lists) asks only now.
    const r2 = jobConflict.observe(subRef('ns-a'), r, octx);
    await tick();
    s.open();
    await r1;
    const o2 = await r2;
    const p2 = plan(o2!, ctx);
    expect(o2!.jobs[0]!.configMapInUse).toBe(true);
    expect(writes(p2)).not.toContain('delete ConfigMap/olm/hash');
  });

});

describe('job-conflict reads shared lists started after it asked: Subscriptions', () => {
  /** ns-a and ns-b wait with a 3600 s retry interval; ns-c waits with none (so the Job goes at once) until its Subscription is deleted. */
  function seedRetry(s: ReturnType<typeof store>) {
    seed(s);
    for (const og of s.objects.filter((o) => o.kind === 'OperatorGroup')) og.metadata.annotations = { [olm.UNPACK_RETRY_ANNOTATION]: '1h' };
    const sub = olm.subscription({ namespace: 'ns-c', name: 'etcd', package: 'etcd', source: CATALOG, sourceNamespace: CAT });
    sub.status = olm.subscriptionStatus({ at: ago(3000), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(3000) })] });
    s.add({ ...sub, metadata: { ...sub.metadata, uid: 'sub-ns-c' } } as KubeObject);
    const og = olm.operatorGroup({ namespace: 'ns-c', name: 'og' });
    s.add({ ...og, metadata: { ...og.metadata, uid: 'og-ns-c' } } as KubeObject);
  }
  const delC = (s: ReturnType<typeof store>) => s.objects.splice(s.objects.findIndex((o) => o.metadata.uid === 'sub-ns-c'), 1);

  {
    it("ns-c's Subscription deleted while another reconcile's list runs, before ns-a's reconcile asked: defer to the interval, do not delete the Job", async () => {
      const s = store();
      seedRetry(s);
      const r = shareLists(s.reader);
      const r1 = jobConflict.observe(subRef('ns-b'), r, octx);
      await tick();
      delC(s);
      const r2 = jobConflict.observe(subRef('ns-a'), r, octx);
      await tick();
      s.open();
      await r1;
      const o2 = await r2;
      expect(writes(plan(o2!, ctx))).toEqual(['defer']);
      expect(o2!.subscribers.map((x) => x.metadata.namespace)).not.toContain('ns-c');
    });
  }
});
