/**
 * Red-team of finalizer-cleanup's uninstall path (functions/finalizer-cleanup/index.ts observeOperator,
 * plan.ts planOperator / uninstallGate, shared/olm/olm.ts namespaceFitsKey / componentLabelKey), after
 * 4f026c3 (InstallPlans deleted before CSVs). Written by a helper given only the code.
 *
 * Every scene runs the REAL observe() against an in-memory cluster and then plan(), applying each
 * planned write to the cluster (deletes remove the object, merge patches merge, null removes a key)
 * round after round until the plan stops acting — the uninstall as the engine would drive it (OLM's
 * own reactions are not modelled: status.components.refs stays as written).
 *
 * `U1`-`U3` are the holes it proved: each FAILED on 6accf3c and passes since the fix that follows it
 * (auto-uninstall needs every install under a colliding key to be long Failed; usersOf counts only the
 * CSVs the plan will remove as "being uninstalled"; a cluster-scoped object is attributed by
 * olm.owner.namespace only when its owner CSV is proven gone).
 * `safe:` tests are passing regressions for suspicions that were checked and found safe.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { defaults } from '../../functions/finalizer-cleanup/plan.js';
import { componentLabelKey, namespaceFitsKey } from '../../shared/olm/olm.js';
import { resourceFor, resourcePath } from '../../shared/kube/resources.js';
import { NO_POLICY, type Action, type Plan } from '../../shared/core/types.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget, type Policy } from '../../shared/core/policy.js';
import type { KubeObject, ListOptions, Reader, Ref, Writer } from '../../shared/kube/types.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const iso = (secondsAgo: number) => new Date(NOW.getTime() - secondsAgo * 1000).toISOString();
const V1A1 = 'operators.coreos.com/v1alpha1';
const UNINSTALL = 'olm-medic.io/uninstall';

// ---------------------------------------------------------------------------------------------
// An in-memory cluster: a Reader for observe(), and the writes a plan makes applied to it
// ---------------------------------------------------------------------------------------------

const clone = <T>(x: T): T => structuredClone(x);

class Cluster implements Reader, Writer {
  /** Deletes the executor made (drive through the executor). */
  deleted: string[] = [];
  private objs = new Map<string, KubeObject>();
  private seq = 0;
  /** As the apiserver's URL has it: a namespace counts only for a namespaced kind. */
  static key(r: { apiVersion: string; kind: string; namespace?: string; name: string }): string {
    return `${r.apiVersion}/${r.kind}/${resourceFor(r.apiVersion, r.kind).namespaced ? (r.namespace ?? '') : ''}/${r.name}`;
  }
  add(o: KubeObject): KubeObject {
    this.seq++;
    const obj = clone(o);
    obj.metadata = { uid: `uid-${obj.kind}-${obj.metadata.namespace ?? ''}-${obj.metadata.name}`, resourceVersion: String(100 + this.seq), creationTimestamp: iso(86_400), ...obj.metadata };
    this.objs.set(Cluster.key({ ...obj, ...obj.metadata }), obj);
    return obj;
  }
  has(r: { apiVersion: string; kind: string; namespace?: string; name: string }): boolean {
    return this.objs.has(Cluster.key(r));
  }
  async get<T extends KubeObject = KubeObject>(ref: Ref): Promise<T | undefined> {
    // Same validation as the real client (throws InvalidValue before any request).
    resourcePath(resourceFor(ref.apiVersion, ref.kind), ref.namespace, ref.name);
    const o = this.objs.get(Cluster.key(ref));
    return o ? (clone(o) as T) : undefined;
  }
  async *list<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): AsyncIterable<T> {
    const sel = (opts.labelSelector ?? '').split(',').filter(Boolean).map((p) => p.split('='));
    for (const o of [...this.objs.values()]) {
      if (o.apiVersion !== apiVersion || o.kind !== kind) continue;
      if (opts.namespace && o.metadata.namespace !== opts.namespace) continue;
      const l = o.metadata.labels ?? {};
      if (!sel.every(([k, v]) => (v === undefined ? l[k!] !== undefined : l[k!] === v))) continue;
      yield clone(o) as T;
    }
  }
  async delete(ref: Ref, opts: { uid?: string }): Promise<'deleted' | 'gone'> {
    const live = this.objs.get(Cluster.key(ref));
    if (!live || (opts.uid && live.metadata.uid !== opts.uid)) return 'gone';
    this.objs.delete(Cluster.key(ref));
    this.deleted.push(`${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
    return 'deleted';
  }
  async mergePatch(ref: Ref, patch: Record<string, unknown>): Promise<KubeObject | 'gone'> {
    const live = this.objs.get(Cluster.key(ref));
    if (!live) return 'gone';
    this.apply({ verb: 'patch', target: { ...ref, uid: live.metadata.uid!, resourceVersion: live.metadata.resourceVersion! }, patch } as Action);
    return clone(live);
  }
  async create(o: KubeObject): Promise<KubeObject> {
    return o;
  }
  apply(a: Action): void {
    const k = Cluster.key(a.target);
    const live = this.objs.get(k);
    if (!live || live.metadata.uid !== a.target.uid) return;
    if (a.verb === 'delete') {
      this.objs.delete(k);
      return;
    }
    const merge = (dst: Record<string, unknown>, src: Record<string, unknown>): void => {
      for (const [key, v] of Object.entries(src)) {
        if (v === null) delete dst[key];
        else if (typeof v === 'object' && !Array.isArray(v)) merge((dst[key] ??= {}) as Record<string, unknown>, v as Record<string, unknown>);
        else dst[key] = v;
      }
    };
    merge(live as unknown as Record<string, unknown>, clone(a.patch) as Record<string, unknown>);
    live.metadata.resourceVersion = String(Number(live.metadata.resourceVersion) + 1000);
  }
}

const ctx = (options: Record<string, number | boolean> = {}) => ({ now: NOW, clock: () => NOW, options: { ...defaults, ...options }, policy: NO_POLICY });

/** Drives the uninstall of Operator `name` to its end; returns every planned action and the last plan. */
async function drive(cluster: Cluster, name: string, options: Record<string, number | boolean> = {}, rounds = 12): Promise<{ writes: Action[]; plans: Plan[] }> {
  const writes: Action[] = [];
  const plans: Plan[] = [];
  const ref = { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name };
  for (let i = 0; i < rounds; i++) {
    const o = await finalizerCleanup.observe(ref, cluster, ctx(options));
    if (!o) break;
    const p = finalizerCleanup.plan(o, ctx(options));
    plans.push(p);
    if (p.kind !== 'act') {
      if (p.kind === 'requeue') continue;
      break;
    }
    for (const a of p.actions) {
      writes.push(a);
      cluster.apply(a);
    }
  }
  return { writes, plans };
}
/** The same, every plan passed through the real executor (policy: protected namespaces, opt-outs). */
async function driveThroughExecutor(cluster: Cluster, name: string, policy: Policy, rounds = 12): Promise<Plan[]> {
  const execute = createExecutor({ writer: cluster, recorder: { record: async () => {} }, policy, budget: new ActionBudget(1000, 60_000, () => NOW.getTime()) });
  const c = { now: NOW, clock: () => NOW, options: { ...defaults }, policy };
  const plans: Plan[] = [];
  for (let i = 0; i < rounds; i++) {
    const o = await finalizerCleanup.observe({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name }, cluster, c);
    if (!o) break;
    const p = finalizerCleanup.plan(o, c);
    plans.push(p);
    if (p.kind !== 'act' && p.kind !== 'requeue') break;
    if (p.kind === 'act') await execute('finalizer-cleanup', p, name);
  }
  return plans;
}
const where = (a: Action) => `${a.verb} ${a.target.kind} ${a.target.namespace ?? ''}/${a.target.name}`;

// ---------------------------------------------------------------------------------------------
// Object builders (shapes as OLM writes them; olm-facts §4.1, §5)
// ---------------------------------------------------------------------------------------------

const lbl = (...keys: string[]) => Object.fromEntries(keys.map((k) => [k, '']));
function csvObj(ns: string, name: string, labels: Record<string, string>, phase: 'Succeeded' | 'Failed', since = 7200): KubeObject {
  return {
    apiVersion: V1A1,
    kind: 'ClusterServiceVersion',
    metadata: { name, namespace: ns, labels: { 'olm.managed': 'true', ...labels }, annotations: { 'olm.operatorNamespace': ns, 'olm.operatorGroup': 'og', 'olm.targetNamespaces': ns } },
    spec: {},
    status: { phase, reason: phase === 'Failed' ? 'InstallCheckFailed' : 'InstallSucceeded', lastTransitionTime: iso(since) },
  };
}
const uidOf = (kind: string, ns: string | undefined, name: string) => `uid-${kind}-${ns ?? ''}-${name}`;
const ownedByCsv = (ns: string, csv: string) => [{ apiVersion: V1A1, kind: 'ClusterServiceVersion', name: csv, uid: uidOf('ClusterServiceVersion', ns, csv), controller: false, blockOwnerDeletion: false }];
function nsObj(apiVersion: string, kind: string, ns: string, name: string, labels: Record<string, string>, extra: Partial<KubeObject['metadata']> = {}, rest: Record<string, unknown> = {}): KubeObject {
  return { apiVersion, kind, metadata: { name, namespace: ns, labels, ...extra }, ...rest };
}
function clusterObj(apiVersion: string, kind: string, name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion, kind, metadata: { name, labels } };
}
function sub(ns: string, name: string, pkg: string, status: Record<string, unknown> = {}, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: V1A1, kind: 'Subscription', metadata: { name, namespace: ns, labels }, spec: { name: pkg, channel: 'stable', source: 'community', sourceNamespace: 'olm' }, status: { lastUpdated: iso(60), ...status } };
}
function installPlan(ns: string, name: string, labels: Record<string, string>, ownerSubs: KubeObject[] = [], phase = 'Complete'): KubeObject {
  return nsObj(V1A1, 'InstallPlan', ns, name, labels, ownerSubs.length ? { ownerReferences: ownerSubs.map((s) => ({ apiVersion: V1A1, kind: 'Subscription', name: s.metadata.name, uid: s.metadata.uid!, controller: false, blockOwnerDeletion: false })) } : {}, {
    spec: { approval: 'Automatic', approved: true, clusterServiceVersionNames: [] },
    status: { phase },
  });
}
/** The Operator object as OLM's OperatorReconciler writes it: named after the (truncated) key, refs of every labelled object. */
function operatorObj(key: string, objs: KubeObject[], annotate: boolean): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: { name: key.slice('operators.coreos.com/'.length), ...(annotate ? { annotations: { [UNINSTALL]: 'true' } } : {}) },
    spec: {},
    status: {
      components: {
        labelSelector: { matchExpressions: [{ key, operator: 'Exists' }] },
        refs: objs.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) })),
      },
    },
  };
}

// A long package installed in two namespaces whose `<pkg>.<ns>` keys collide after truncation (§2.2).
const LONG_PKG = 'cluster-observability-and-telemetry-operator'; // 44 chars: 18 chars of the namespace survive
const NS_A = 'platform-monitoring-eu';
const NS_B = 'platform-monitoring-us';
const KEY = componentLabelKey(LONG_PKG, NS_A);
const LONG_CSV = 'cluster-observability-and-telemetry-operator.v1.2.0';

/**
 * Another operator's LIVE CSV in `shop` owns ClusterRole other-live (full olm.owner labels); a ClusterRole
 * attributed to a namespace the key cannot name, and a bundle ClusterRoleBinding without owner labels;
 * all carry etcd's key, and the annotated Operator lists them. `refNamespace`: its refs give these
 * cluster-scoped objects the namespace `shop` (not what OLM writes).
 */
function liveCsvRbacScene(refNamespace: boolean): { c: Cluster; name: string } {
  const c = new Cluster();
  const ns = 'shop';
  const key = componentLabelKey('etcd', ns);
  c.add(csvObj(ns, 'other-operator.v1.0.0', lbl(componentLabelKey('other-operator', ns)), 'Succeeded'));
  const objs = [
    c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'other-live', { 'olm.owner': 'other-operator.v1.0.0', 'olm.owner.namespace': ns, 'olm.owner.kind': 'ClusterServiceVersion', ...lbl(key) })),
    c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'elsewhere', { 'olm.owner': 'gone.v1', 'olm.owner.namespace': 'payments', 'olm.owner.kind': 'ClusterServiceVersion', ...lbl(key) })),
    c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'bundle-shipped', lbl(key))),
  ];
  const op = operatorObj(key, objs, true);
  if (refNamespace) for (const r of (op.status as { components: { refs: { namespace?: string }[] } }).components.refs) r.namespace = ns;
  c.add(op);
  return { c, name: `etcd.${ns}` };
}

describe('scene sanity', () => {
  it('the two namespaces really collide on one 63-char key, and both fit it', () => {
    expect(componentLabelKey(LONG_PKG, NS_B)).toBe(KEY);
    expect(KEY.length - 'operators.coreos.com/'.length).toBe(63);
    expect(namespaceFitsKey(KEY, NS_A) && namespaceFitsKey(KEY, NS_B)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Holes
// ---------------------------------------------------------------------------------------------

describe('holes', () => {
  it('U1: a long-Failed CSV in namespace A never starts an automatic uninstall while the install in namespace B whose key collides is healthy (was: B\'s CSV and Deployment deleted)', async () => {
    // Both Subscriptions were deleted (a documented way to pin an operator: "Deleting the Sub does not
    // delete the CSV"). A's CSV has been Failed for 2 h; B's CSV is Succeeded and running.
    const c = new Cluster();
    const objs = [
      c.add(csvObj(NS_A, LONG_CSV, lbl(KEY), 'Failed')),
      c.add(nsObj('apps/v1', 'Deployment', NS_A, 'telemetry-controller', lbl(KEY), { ownerReferences: ownedByCsv(NS_A, LONG_CSV) })),
      c.add(csvObj(NS_B, LONG_CSV, lbl(KEY), 'Succeeded')),
      c.add(nsObj('apps/v1', 'Deployment', NS_B, 'telemetry-controller', lbl(KEY), { ownerReferences: ownedByCsv(NS_B, LONG_CSV) })),
    ];
    c.add(operatorObj(KEY, objs, false));
    const { writes } = await drive(c, KEY.slice('operators.coreos.com/'.length), { autoUninstall: true });
    // the automatic decision rests on A's failure: it is evidence about A only
    expect(writes.map(where).filter((w) => w.includes(` ${NS_B}/`))).toEqual([]);
    expect(c.has({ apiVersion: V1A1, kind: 'ClusterServiceVersion', namespace: NS_B, name: LONG_CSV })).toBe(true);
  });

  it('U2: a Deployment owned by a CSV the uninstall itself keeps (a live Subscription of another package installs it) is kept too (was: deleted, every CSV among the refs counted as "being uninstalled" in usersOf, hiding the live owner)', async () => {
    // H16's scene (index.ts usersOf): CSV other-operator.v1.0.0 carries the uninstalled key (label copied
    // by a tool / mislabelled) and is installed by the live Subscription `other-operator`. Since H16's fix
    // the CSV is kept (only unlabelled) — but it is still put into `uninstalledCsvs`, so its own
    // Deployment, which carries the same key, loses its live owner and is deleted.
    const c = new Cluster();
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    c.add(sub(ns, 'other-operator', 'other-operator', { installedCSV: 'other-operator.v1.0.0', currentCSV: 'other-operator.v1.0.0', state: 'AtLatestKnown' }, lbl(componentLabelKey('other-operator', ns))));
    const objs = [
      c.add(csvObj(ns, 'other-operator.v1.0.0', lbl(key), 'Succeeded')),
      c.add(nsObj('apps/v1', 'Deployment', ns, 'other-operator-controller', lbl(key), { ownerReferences: ownedByCsv(ns, 'other-operator.v1.0.0') })),
    ];
    c.add(operatorObj(key, objs, true));
    const { writes } = await drive(c, `etcd.${ns}`);
    // the CSV is (correctly) only unlabelled...
    expect(writes.filter((w) => w.target.kind === 'ClusterServiceVersion').map((w) => w.verb)).toEqual(['patch']);
    // ...and so must be what it owns: the running operator's Deployment stays
    expect(writes.filter((w) => w.verb === 'delete' && w.target.kind === 'Deployment').map(where)).toEqual([]);
    expect(c.has({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'other-operator-controller' })).toBe(true);
  });

  it('U3: a ClusterRole labelled olm.owner/olm.owner.namespace for a LIVE CSV but without olm.owner.kind is kept (was: deleted; attributed by olm.owner.namespace, its owner\'s liveness checked only with olm.owner.kind)', async () => {
    const c = new Cluster();
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    // another operator, live and subscribed in the same namespace (its own key)
    c.add(sub(ns, 'other-operator', 'other-operator', { installedCSV: 'other-operator.v1.0.0' }));
    c.add(csvObj(ns, 'other-operator.v1.0.0', lbl(componentLabelKey('other-operator', ns)), 'Succeeded'));
    const objs = [
      c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'other-operator-metrics-reader', { 'olm.owner': 'other-operator.v1.0.0', 'olm.owner.namespace': ns, ...lbl(key) })),
    ];
    c.add(operatorObj(key, objs, true));
    const { writes } = await drive(c, `etcd.${ns}`);
    expect(writes.filter((w) => w.verb === 'delete' && w.target.kind === 'ClusterRole').map(where)).toEqual([]);
  });

  it('U5 (red team 11): a CSV in the refs that no longer carries the key is kept, and so is the Deployment it owns (was: the Deployment deleted from under the live CSV, which observe counted as being uninstalled)', async () => {
    const ns = 'team-a';
    const key = componentLabelKey('etcd', ns);
    const csvName = 'etcdoperator.v0.9.4';
    const scene = (csvCarriesKey: boolean): Cluster => {
      const c = new Cluster();
      // Its Subscription is gone (the usual state before an uninstall); the key was taken off the CSV
      // (a user keeping it, or refs older than the label change): the plan keeps the CSV.
      const csv = c.add(csvObj(ns, csvName, csvCarriesKey ? lbl(key) : {}, 'Succeeded'));
      const dep = c.add(nsObj('apps/v1', 'Deployment', ns, 'etcd-operator', { ...lbl(key), 'olm.owner': csvName, 'olm.owner.namespace': ns, 'olm.owner.kind': 'ClusterServiceVersion' }, { ownerReferences: ownedByCsv(ns, csvName) }));
      c.add(operatorObj(key, [csv, dep], true));
      return c;
    };
    const kept = await drive(scene(false), `etcd.${ns}`);
    expect(kept.writes.filter((w) => w.verb === 'delete').map(where)).toEqual([]);
    // The control: the CSV still carries the key: the CSV goes, then the Deployment.
    const gone = await drive(scene(true), `etcd.${ns}`);
    expect(gone.writes.filter((w) => w.verb === 'delete').map(where)).toEqual([`delete ClusterServiceVersion ${ns}/${csvName}`, `delete Deployment ${ns}/etcd-operator`, `delete Operator /etcd.${ns}`]);
  });

  it('U6 (red team 12): a ClusterRole attributed (olm.owner.namespace) to a PROTECTED namespace is never deleted by an uninstall, as the orphan sweep never deletes it (was: deleted; the uninstall\'s delete had no guard for that namespace)', async () => {
    const ns = 'tenant-system';
    const key = componentLabelKey('etcd', ns);
    const c = new Cluster();
    // The CSV is already gone (the leftovers case); its Deployment and its cluster RBAC remain.
    const dep = c.add(nsObj('apps/v1', 'Deployment', ns, 'etcd-operator', lbl(key)));
    const cr = c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'etcd.v1-abcde', { 'olm.owner': 'etcd.v1', 'olm.owner.namespace': ns, 'olm.owner.kind': 'ClusterServiceVersion', ...lbl(key) }));
    c.add(operatorObj(key, [dep, cr], true));
    await driveThroughExecutor(c, `etcd.${ns}`, { dryRun: false, protectedNamespaces: new Set([ns]), maxActionsPerWindow: 1000, windowSeconds: 60 });
    expect(c.deleted).toEqual([]);
  });

  it('U7 (red team 12): a CSV another LIVE CSV owns is kept by the uninstall, and so is the Deployment it owns (was: the Deployment deleted, then the Operator; observe counted the kept CSV as being uninstalled)', async () => {
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    const c = new Cluster();
    const other = c.add(csvObj(ns, 'other-operator.v1.0.0', lbl(componentLabelKey('other-operator', ns)), 'Succeeded'));
    c.add(sub(ns, 'other-operator', 'other-operator', { installedCSV: 'other-operator.v1.0.0' }, lbl(componentLabelKey('other-operator', ns))));
    const csv = c.add({ ...csvObj(ns, 'etcd.v1', lbl(key), 'Succeeded'), metadata: { ...csvObj(ns, 'etcd.v1', lbl(key), 'Succeeded').metadata, ownerReferences: ownedByCsv(ns, other.metadata.name) } });
    const dep = c.add(nsObj('apps/v1', 'Deployment', ns, 'etcd-operator', lbl(key), { ownerReferences: ownedByCsv(ns, 'etcd.v1') }));
    c.add(operatorObj(key, [csv, dep], true));
    await driveThroughExecutor(c, `etcd.${ns}`, { ...NO_POLICY, maxActionsPerWindow: 1000, windowSeconds: 60 });
    expect(c.deleted).toEqual([]);
  });

  it('U4 (red team 10): refs that give cluster-scoped objects a namespace never attribute them by it: a LIVE CSV\'s ClusterRole and an unattributed bundle ClusterRoleBinding are kept, and so is the Operator (was: both deleted, then the Operator; the client dropped the namespace from the URL and the plan trusted the ref\'s)', async () => {
    const { c, name } = liveCsvRbacScene(true);
    const { writes, plans } = await drive(c, name);
    expect(writes.map(where)).toEqual([]);
    expect(plans.at(-1)).toMatchObject({ kind: 'refuse', note: expect.stringContaining('a namespace on a cluster-scoped kind') });
  });
});

// ---------------------------------------------------------------------------------------------
// Checked and found safe
// ---------------------------------------------------------------------------------------------

describe('safe', () => {
  it('safe: colliding keys, B still subscribed: A goes (InstallPlan first, then CSV, then the rest); nothing of B — not its InstallPlan, CSV, Deployment, cluster RBAC — is written, and the Operator stays', async () => {
    const c = new Cluster();
    const subB = c.add(sub(NS_B, 'telemetry', LONG_PKG, { installedCSV: LONG_CSV, currentCSV: LONG_CSV }, lbl(KEY)));
    const ipB = installPlan(NS_B, 'install-bbbbb', lbl(KEY), [subB]);
    const objs = [
      c.add(installPlan(NS_A, 'install-aaaaa', lbl(KEY), [], 'Installing')),
      c.add(csvObj(NS_A, LONG_CSV, lbl(KEY), 'Failed')),
      c.add(nsObj('apps/v1', 'Deployment', NS_A, 'telemetry-controller', lbl(KEY), { ownerReferences: ownedByCsv(NS_A, LONG_CSV) })),
      c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'telemetry-a', { 'olm.owner': LONG_CSV, 'olm.owner.namespace': NS_A, 'olm.owner.kind': 'ClusterServiceVersion', ...lbl(KEY) })),
      subB,
      c.add(ipB),
      c.add(csvObj(NS_B, LONG_CSV, lbl(KEY), 'Succeeded')),
      c.add(nsObj('apps/v1', 'Deployment', NS_B, 'telemetry-controller', lbl(KEY), { ownerReferences: ownedByCsv(NS_B, LONG_CSV) })),
      c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'telemetry-b', { 'olm.owner': LONG_CSV, 'olm.owner.namespace': NS_B, 'olm.owner.kind': 'ClusterServiceVersion', ...lbl(KEY) })),
      c.add(clusterObj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'telemetries.example.com', lbl(KEY))),
    ];
    c.add(operatorObj(KEY, objs, true));
    const { writes, plans } = await drive(c, KEY.slice('operators.coreos.com/'.length));
    expect(writes.map(where)).toEqual([
      `delete InstallPlan ${NS_A}/install-aaaaa`,
      `delete ClusterServiceVersion ${NS_A}/${LONG_CSV}`,
      `delete Deployment ${NS_A}/telemetry-controller`,
      'delete ClusterRole /telemetry-a',
    ]);
    expect(plans.at(-1)).toMatchObject({ kind: 'refuse', reason: 'UninstallLeftoversKept' });
  });

  it('safe: an InstallPlan a live Subscription of ANOTHER package points at (status.installPlanRef, no ownerRef, no other label) is never deleted, not even by the InstallPlans-first step', async () => {
    const c = new Cluster();
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    const ip = installPlan(ns, 'install-shared', lbl(key), [], 'RequiresApproval');
    const ipLive = c.add(ip);
    c.add(sub(ns, 'prometheus', 'prometheus', { state: 'UpgradePending', installPlanRef: { apiVersion: V1A1, kind: 'InstallPlan', name: 'install-shared', namespace: ns, uid: ipLive.metadata.uid } }));
    const objs = [ipLive, c.add(csvObj(ns, 'etcdoperator.v0.9.4', lbl(key), 'Failed'))];
    c.add(operatorObj(key, objs, true));
    const { writes } = await drive(c, `etcd.${ns}`);
    expect(writes.filter((w) => w.target.kind === 'InstallPlan').map(where)).toEqual([`patch InstallPlan ${ns}/install-shared`]);
    expect(writes.map(where)).toContain(`delete ClusterServiceVersion ${ns}/etcdoperator.v0.9.4`);
  });

  it('safe: annotated while the install\'s own Subscription is live: no InstallPlan, CSV or anything else of its namespace is written, only a refusal', async () => {
    const c = new Cluster();
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    const s = c.add(sub(ns, 'etcd', 'etcd', { installedCSV: 'etcdoperator.v0.9.4' }));
    const objs = [c.add(installPlan(ns, 'install-x', lbl(key), [s], 'Installing')), c.add(csvObj(ns, 'etcdoperator.v0.9.4', lbl(key), 'Failed')), c.add(nsObj('v1', 'ConfigMap', ns, 'cfg', lbl(key)))];
    c.add(operatorObj(key, objs, true));
    const { writes, plans } = await drive(c, `etcd.${ns}`, { autoUninstall: true });
    expect(writes).toEqual([]);
    expect(plans.at(-1)).toMatchObject({ kind: 'refuse' });
  });

  it('an InstallPlan still Installing that lists the CSV (unlabelled, not in the refs: not ours to delete) holds the CSV until OLM completes it; then the CSV goes (real OLM v0.25.0 re-created a CSV deleted under such a plan)', async () => {
    const c = new Cluster();
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    const plan = installPlan(ns, 'install-x', {}, [], 'Installing');
    (plan.spec as { clusterServiceVersionNames: string[] }).clusterServiceVersionNames = ['etcdoperator.v0.9.4'];
    c.add(plan);
    const objs = [c.add(csvObj(ns, 'etcdoperator.v0.9.4', lbl(key), 'Failed')), c.add(nsObj('v1', 'ConfigMap', ns, 'cfg', lbl(key)))];
    c.add(operatorObj(key, objs, true));
    const held = await drive(c, `etcd.${ns}`, {}, 3);
    expect(held.writes).toEqual([]);
    expect(held.plans.at(-1)).toMatchObject({ kind: 'requeue', reason: expect.stringContaining('shop/install-x (Installing)') });
    // OLM records the plan Complete: the uninstall goes on, the CSV first.
    (plan.status as { phase: string }).phase = 'Complete';
    c.add(plan);
    const after = await drive(c, `etcd.${ns}`);
    expect(after.writes.map(where)[0]).toBe('delete ClusterServiceVersion shop/etcdoperator.v0.9.4');
    expect(after.writes.map(where)).not.toContain('delete InstallPlan shop/install-x');
  });

  it('safe: the Subscription claims the key only by its spec.name (not yet labelled by OLM): still counted, nothing in its namespace written', async () => {
    const c = new Cluster();
    c.add(sub(NS_A, 'telemetry', LONG_PKG)); // no label yet, key computed from spec.name + namespace
    const objs = [c.add(installPlan(NS_A, 'install-aaaaa', lbl(KEY), [], 'Installing')), c.add(csvObj(NS_A, LONG_CSV, lbl(KEY), 'Succeeded'))];
    c.add(operatorObj(KEY, objs, true));
    const { writes } = await drive(c, KEY.slice('operators.coreos.com/'.length));
    expect(writes).toEqual([]);
  });

  it('safe: a cluster-scoped ClusterRole of a LIVE CSV (full olm.owner labels) carrying the key is never deleted; nor is one attributed to a namespace the key cannot name', async () => {
    const { c, name } = liveCsvRbacScene(false);
    const { writes } = await drive(c, name);
    expect(writes.filter((w) => w.verb === 'delete')).toEqual([]);
  });

  it('safe: namespaceFitsKey(key, ns) holds exactly when a package P the rule recognises (ending before a \'.\' of the key, or dot-free and filling it) gives componentLabelKey(P, ns) === key (brute force)', () => {
    const seg = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    const pkg = fc.tuple(fc.array(seg, { minLength: 1, maxLength: 4 }), fc.constantFrom('.', '-')).map(([parts, sep]) => parts.join(sep));
    const ns = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    fc.assert(
      fc.property(pkg, ns, ns, (p, n1, n2) => {
        const key = componentLabelKey(p, n1);
        expect(namespaceFitsKey(key, n1)).toBe(true);
        const name = key.slice('operators.coreos.com/'.length);
        // brute force over the packages the rule recognises: every prefix of the name that ends before
        // one of its '.', and the whole name when it has no '.' (a package that fills the key). A
        // package WITH dots that fills the key is deliberately not recognised (never acted on).
        let brute = false;
        for (let i = 1; i <= name.length && !brute; i++) if (name[i] === '.' || (i === name.length && !name.includes('.'))) brute = componentLabelKey(name.slice(0, i), n2) === key;
        expect(namespaceFitsKey(key, n2)).toBe(brute);
        // an untruncated key names exactly one namespace
        if (`${p}.${n1}`.length <= 63 && n2 !== n1 && !p.includes('.')) expect(namespaceFitsKey(key, n2)).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it('safe: observe+plan never throw on odd refs OLM can list (Secret, unhandled kind, RBAC names with spaces/colons, refs of objects already gone): the Secret and the unhandled kind are only reported, the leftover Role named with a space is deleted', async () => {
    const c = new Cluster();
    const ns = 'shop';
    const key = componentLabelKey('etcd', ns);
    const objs = [
      c.add(nsObj('rbac.authorization.k8s.io/v1', 'Role', ns, 'evil role', lbl(key))),
      c.add(clusterObj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'system:etcd reader', lbl(key))),
      nsObj('v1', 'Secret', ns, 'etcd-cert', lbl(key)),
      nsObj('example.com/v1', 'Widget', ns, 'w', lbl(key)),
      nsObj('apps/v1', 'Deployment', ns, 'already-gone', lbl(key)),
    ];
    c.add(operatorObj(key, objs, true));
    const { writes, plans } = await drive(c, `etcd.${ns}`);
    expect(writes.map(where)).toEqual([`delete Role ${ns}/evil role`]);
    expect(plans.at(-1)).toMatchObject({ kind: 'refuse', reason: 'UninstallSecretsKept' });
  });
});
