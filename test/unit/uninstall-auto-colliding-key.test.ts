/**
 * Red team 40, C1 (colliding keys) (fixed): an automatic uninstall decided by install A's long-Failed CSV also
 * deletes install B's running parts when B has no CSV under the key.
 *
 * Impact: B's running Deployment (and its ServiceAccount, Roles, ...) in namespace B is deleted on the
 * evidence of A's failure alone, with autoUninstall, no annotation from anyone. The gate's own comment
 * says "a failed install says nothing about another one, so an automatic uninstall needs EVERY install
 * under the key to be long Failed"; uninstallGate() counts installs by their CSVs in the refs only, so an
 * install whose CSV is gone counts as nothing, and planOperator() then works on every namespace the
 * key can name.
 *
 * Path (contrived: needs colliding keys): a package whose `<pkg>.<ns>` is over 63 characters is
 * installed in team namespaces platform-monitoring-eu (A) and -us (B); OLM keeps ONE Operator for both.
 * B's owners took B off OLM ("delete the Subscription, then the CSV with --cascade=orphan": the
 * Deployment keeps running, its owner reference dropped by GC, its component label kept). Months later
 * A's install fails and its Subscription is gone (pinned). autoUninstall starts on A's CSV (the only CSV
 * under the key), records `auto`, deletes A's CSV, and then — no CSV left under the key, so the record
 * is "still valid" — deletes B's Deployment.
 *
 * Should: nothing in namespace B is deleted by an automatic uninstall that rests on A's CSV.
 * Now: an automatic uninstall starts only when every namespace holding a part under the key holds a
 * long-Failed CSV; here it is refused (UninstallLeftoversKept: annotate to remove the leftovers).
 */
import { describe, expect, it } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { defaults } from '../../functions/finalizer-cleanup/plan.js';
import { componentLabelKey } from '../../shared/olm/olm.js';
import { NO_POLICY, type Action } from '../../shared/core/types.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const iso = (secondsAgo: number) => new Date(NOW.getTime() - secondsAgo * 1000).toISOString();
const V1A1 = 'operators.coreos.com/v1alpha1';
const PKG = 'cluster-observability-and-telemetry-operator';
const NS_A = 'platform-monitoring-eu';
const NS_B = 'platform-monitoring-us';
const KEY = componentLabelKey(PKG, NS_A);
const CSV = `${PKG}.v1.2.0`;

/** In-memory cluster; plan writes are applied (delete removes, merge patch merges, null removes). */
function cluster(objs: KubeObject[]): Reader & { store: KubeObject[]; apply(a: Action): void } {
  const store = objs.map((o, i) => ({ ...o, metadata: { uid: `uid-${i}`, resourceVersion: String(100 + i), creationTimestamp: iso(86_400 * 30), ...o.metadata } }) as KubeObject);
  const same = (o: KubeObject, r: Ref) => o.apiVersion === r.apiVersion && o.kind === r.kind && o.metadata.name === r.name && (o.metadata.namespace ?? '') === (r.namespace ?? '');
  return {
    store,
    async get<T extends KubeObject = KubeObject>(ref: Ref): Promise<T | undefined> {
      const o = store.find((x) => same(x, ref));
      return o ? (structuredClone(o) as T) : undefined;
    },
    async *list<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
      for (const o of store) if (o.apiVersion === apiVersion && o.kind === kind && (!opts.namespace || o.metadata.namespace === opts.namespace)) yield structuredClone(o) as T;
    },
    apply(a: Action) {
      const i = store.findIndex((x) => same(x, a.target) && x.metadata.uid === a.target.uid);
      if (i < 0) return;
      if (a.verb === 'delete') {
        store.splice(i, 1);
        return;
      }
      const merge = (dst: Record<string, unknown>, src: Record<string, unknown>): void => {
        for (const [k, v] of Object.entries(src)) {
          if (v === null) delete dst[k];
          else if (typeof v === 'object' && !Array.isArray(v)) merge((dst[k] ??= {}) as Record<string, unknown>, v as Record<string, unknown>);
          else dst[k] = v;
        }
      };
      merge(store[i] as unknown as Record<string, unknown>, structuredClone(a.patch) as Record<string, unknown>);
      store[i]!.metadata.resourceVersion = String(Number(store[i]!.metadata.resourceVersion) + 1000);
    },
  };
}

describe('red team 40 C1: an automatic uninstall on A\'s failure leaves B (same colliding key) alone', () => {
  async function run(withB: boolean): Promise<{ writes: string[]; plans: string[] }> {
    const csvA: KubeObject = {
      apiVersion: V1A1,
      kind: 'ClusterServiceVersion',
      metadata: { name: CSV, namespace: NS_A, uid: 'csv-a', labels: { [KEY]: '' }, annotations: { 'olm.operatorNamespace': NS_A } },
      spec: {},
      status: { phase: 'Failed', reason: 'InstallCheckFailed', lastTransitionTime: iso(7200), lastUpdateTime: iso(7200) },
    };
    const depA: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'telemetry-controller', namespace: NS_A, labels: { [KEY]: '' }, ownerReferences: [{ apiVersion: V1A1, kind: 'ClusterServiceVersion', name: CSV, uid: 'csv-a' }] }, spec: {} };
    // B: its CSV deleted with --cascade=orphan long ago: the Deployment runs on, no owner, label kept.
    const depB: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'telemetry-controller', namespace: NS_B, labels: { [KEY]: '' } }, spec: {}, status: { availableReplicas: 1 } };
    const objs = withB ? [csvA, depA, depB] : [csvA, depA];
    const refs = objs.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }));
    const operator: KubeObject = {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'Operator',
      metadata: { name: KEY.slice('operators.coreos.com/'.length) },
      spec: {},
      status: { components: { labelSelector: { matchExpressions: [{ key: KEY, operator: 'Exists' }] }, refs } },
    };
    expect(componentLabelKey(PKG, NS_B), 'premise: the keys collide').toBe(KEY);
    const c = cluster([...objs, operator]);
    const ctx = { now: NOW, clock: () => NOW, options: { ...defaults, autoUninstall: true }, policy: NO_POLICY };
    const ref = { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: operator.metadata.name };
    const writes: string[] = [];
    const plans: string[] = [];
    for (let round = 0; round < 12; round++) {
      const o = await finalizerCleanup.observe(ref, c, ctx);
      if (!o) break;
      const p = finalizerCleanup.plan(o, ctx);
      plans.push(p.kind === 'refuse' ? `refuse ${p.reason}` : p.kind);
      if (p.kind === 'requeue') continue;
      if (p.kind !== 'act') break;
      for (const a of p.actions) {
        writes.push(`${a.verb} ${a.target.kind} ${a.target.namespace ?? ''}/${a.target.name}`);
        c.apply(a);
      }
    }
    return { writes, plans };
  }

  it("B's running Deployment, whose CSV was removed with --cascade=orphan, is not deleted: no automatic uninstall, a refusal naming B", async () => {
    const r = await run(true);
    expect(r.writes.filter((w) => w.includes(` ${NS_B}/`)), "B's running Deployment deleted on A's failure").toEqual([]);
    expect(r).toEqual({ writes: [], plans: ['refuse UninstallLeftoversKept'] });
  });

  it('twin: without B, the automatic uninstall runs on A', async () => {
    expect((await run(false)).writes).toContain(`delete ClusterServiceVersion ${NS_A}/${CSV}`);
  });
});
