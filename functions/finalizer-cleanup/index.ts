/**
 * finalizer-cleanup — CSV cleanup that survives downtime, and uninstall leftovers (olm-facts §4, §5).
 *   listens   ClusterServiceVersion add/update/delete; Operator (operators.coreos.com/v1) add/update; sweeps
 *   reads     the CSV and the cluster-scoped objects labelled as its own (5 label-selected lists);
 *             for an Operator: its Subscriptions, CSVs and the live objects in status.components.refs
 *   writes    CSV finalizers (merge patch, rv precondition); deletes with uid+rv preconditions;
 *             removes the component label from kept objects
 */
import type { ResourceTrigger } from '../../shared/events/types.js';
import type { ObserveContext, RemediationFunction, SweepScope, TargetRef } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { collect } from '../../shared/kube/collect.js';
import { isKnownKind, resourceFor } from '../../shared/kube/resources.js';
import { equalitySelector, hasLabels, isDnsLabel, isDnsSubdomain, isLabelKey } from '../../shared/kube/validate.js';
import { COMPONENT_LABEL_PREFIX, FINALIZER_OLM_CSV_CLEANUP, LABEL_OWNER, LABEL_OWNER_KIND, LABEL_OWNER_NAMESPACE, MEDIC, V1, V1ALPHA1 } from '../../shared/olm/constants.js';
import { componentLabelKey, hasOtherComponentKey, isCopiedCsv, namespaceFitsKey, seconds } from '../../shared/olm/olm.js';
import { defaults, plan, type Component, type CsvObserved, type Observed, type OperatorObserved } from './plan.js';

const CSV = { apiVersion: V1ALPHA1, kind: 'ClusterServiceVersion' };
const OPERATOR = { apiVersion: V1, kind: 'Operator' };
/** Cluster-scoped kinds OLM labels with olm.owner* and deletes on CSV deletion (§4.2). */
const OWNED_KINDS: [string, string][] = [
  ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
  ['apiregistration.k8s.io/v1', 'APIService'],
];

/** Whether a CSV event may need us: our finalizer to add (none yet) or to release, or a cleanup to run. */
function needsUs(csv: KubeObject): boolean {
  const f = csv.metadata.finalizers ?? [];
  // Ours is always released, even from a CSV that looks copied (a label anyone can add).
  if (f.includes(MEDIC.finalizer)) return true;
  if (isCopiedCsv(csv)) return false;
  return !csv.metadata.deletionTimestamp && !f.includes(FINALIZER_OLM_CSV_CLEANUP);
}

function targets(t: ResourceTrigger): Ref[] {
  const { apiVersion, kind } = t.ref;
  if (kind === 'ClusterServiceVersion' && apiVersion === V1ALPHA1) {
    if (t.verb === 'delete') return t.object && isCopiedCsv(t.object) && !(t.object.metadata.finalizers ?? []).includes(MEDIC.finalizer) ? [] : [t.ref];
    return !t.object || needsUs(t.object) ? [t.ref] : [];
  }
  if (kind === 'Operator' && apiVersion === V1 && t.verb !== 'delete') return [t.ref];
  return [];
}

async function* sweep(read: Reader, scope: SweepScope): AsyncIterable<TargetRef> {
  for await (const csv of read.list(V1ALPHA1, 'ClusterServiceVersion', scope.namespace ? { namespace: scope.namespace } : {})) {
    if (needsUs(csv)) yield { ...CSV, namespace: csv.metadata.namespace!, name: csv.metadata.name };
  }
  const owners = new Set<string>();
  for (const [apiVersion, kind] of OWNED_KINDS) {
    for await (const obj of read.list(apiVersion, kind, { labelSelector: `${LABEL_OWNER_KIND}=ClusterServiceVersion` })) {
      const l = obj.metadata.labels ?? {};
      const name = l[LABEL_OWNER];
      const ns = l[LABEL_OWNER_NAMESPACE];
      // Label values are not names: only a value that can name a CSV in a namespace is looked at.
      if (l[LABEL_OWNER_KIND] !== 'ClusterServiceVersion' || !isDnsSubdomain(name) || !isDnsLabel(ns)) continue;
      const key = `${ns}/${name}`;
      if (owners.has(key) || (scope.namespace && scope.namespace !== ns)) continue;
      owners.add(key);
      yield { ...CSV, namespace: ns, name };
    }
  }
  // Operators are cluster-scoped and their names may be truncated: a scoped sweep takes those whose
  // components touch its namespace.
  for await (const op of read.list(V1, 'Operator')) {
    // The look then keeps to that namespace (red team 29a, S3: it removed another namespace's leftovers).
    if (!scope.namespace) yield { ...OPERATOR, name: op.metadata.name };
    else if (componentsOf(op).refs?.some((r) => r.namespace === scope.namespace)) yield { ...OPERATOR, name: op.metadata.name, scope: scope.namespace };
  }
}

/** The cluster-scoped objects labelled EXACTLY as owned by the CSV `ref` (re-checked after the label-selected list). */
async function ownedBy(ref: Ref, read: Reader): Promise<KubeObject[]> {
  const want = { [LABEL_OWNER]: ref.name, [LABEL_OWNER_NAMESPACE]: ref.namespace ?? '', [LABEL_OWNER_KIND]: 'ClusterServiceVersion' };
  // A name that is no label value cannot be in a label: nothing can match, and nothing is listed.
  const labelSelector = equalitySelector(want);
  if (!labelSelector) return [];
  const owned: KubeObject[] = [];
  for (const [apiVersion, kind] of OWNED_KINDS) owned.push(...(await collect(read.list(apiVersion, kind, { labelSelector }))).filter((o) => hasLabels(o, want)));
  return owned;
}

async function observeCsv(ref: Ref, read: Reader, again = false): Promise<CsvObserved> {
  const csv = await read.get(ref);
  if (csv && isCopiedCsv(csv)) return { kind: 'csv', csvRef: ref, csv, owned: [] }; // released without cleanup if ours
  if (csv && !csv.metadata.deletionTimestamp) {
    const f = csv.metadata.finalizers ?? [];
    const mayAdd = !f.includes(MEDIC.finalizer) && !f.includes(FINALIZER_OLM_CSV_CLEANUP) && (csv.status as { phase?: string } | undefined)?.phase;
    if (!mayAdd) return { kind: 'csv', csvRef: ref, csv, owned: [] };
    // Before adding ours: does this OLM manage CSV finalizers (another original in the namespace has one)?
    const siblings = await collect(read.list(V1ALPHA1, 'ClusterServiceVersion', { namespace: ref.namespace! }));
    const olmFinalizerSeen = siblings.some((s) => !isCopiedCsv(s) && (s.metadata.finalizers ?? []).includes(FINALIZER_OLM_CSV_CLEANUP));
    return { kind: 'csv', csvRef: ref, csv, owned: [], olmFinalizerSeen };
  }
  const owned = await ownedBy(ref, read);
  // Orphans only if the CSV is still gone AFTER the lists: one re-created meanwhile (a reinstall)
  // owns its labelled objects again (red team 17, F1). Looked at once more; past that, nothing now.
  if (!csv && owned.length && (await read.get(ref))) return again ? { kind: 'csv', csvRef: ref, owned: [] } : observeCsv(ref, read, true);
  return { kind: 'csv', csvRef: ref, ...(csv ? { csv } : {}), owned };
}

interface Components {
  labelSelector?: { matchExpressions?: { key?: string; operator?: string }[] };
  refs?: { apiVersion?: string; kind?: string; namespace?: string; name?: string }[];
}

function componentsOf(op: KubeObject): Components {
  return ((op.status as { components?: Components } | undefined)?.components ?? {}) as Components;
}

async function observeOperator(ref: TargetRef, read: Reader, ctx: ObserveContext): Promise<OperatorObserved | undefined> {
  const operator = await read.get(ref);
  if (!operator) return undefined;
  const comps = componentsOf(operator);
  // The key OLM reports; never derived from the Operator's name (which may be truncated, §2.2).
  const labelKey = comps.labelSelector?.matchExpressions?.find((e) => e.key?.startsWith(COMPONENT_LABEL_PREFIX) && e.operator === 'Exists')?.key;
  const base: OperatorObserved = { kind: 'operator', operator, claimants: [], csvs: [], components: [], ...(ref.scope ? { scope: ref.scope } : {}) };
  if (!labelKey || !isLabelKey(labelKey)) return base;
  const refs = (comps.refs ?? []).filter((r) => typeof r.apiVersion === 'string' && typeof r.kind === 'string' && typeof r.name === 'string');
  // Every Subscription whose component label key is this one still uses the Operator, in whatever
  // namespace (keys of two installs can collide), and whatever the Operator is named.
  const allSubs = (await collect(read.list(V1ALPHA1, 'Subscription'))).filter((s) => !s.metadata.deletionTimestamp);
  const claimants = allSubs.filter(
    (s) => componentLabelKey((s.spec as { name?: string } | undefined)?.name ?? '', s.metadata.namespace!) === labelKey || s.metadata.labels?.[labelKey] !== undefined,
  );
  // Each CSV is read once per look, however many roles it plays here (in the refs, as a component,
  // as the owner a cluster-scoped component's labels name, as the owner of a namespaced one).
  const csvReads = new Map<string, Promise<KubeObject | undefined>>();
  const readCsv = (namespace: string, name: string): Promise<KubeObject | undefined> => {
    const k = `${namespace}/${name}`;
    let p = csvReads.get(k);
    if (!p) csvReads.set(k, (p = read.get({ ...CSV, namespace, name })));
    return p;
  };
  const csvs: KubeObject[] = [];
  for (const r of refs.filter((x) => x.kind === 'ClusterServiceVersion' && x.apiVersion === V1ALPHA1 && isDnsLabel(x.namespace) && isDnsSubdomain(x.name))) {
    const c = await readCsv(r.namespace!, r.name!);
    if (c) csvs.push(c);
  }
  const observed: OperatorObserved = { ...base, labelKey, claimants, csvs };
  const eligible = operator.metadata.annotations?.[MEDIC.uninstall] === 'true' || (ctx.options.autoUninstall === true && claimants.length === 0);
  if (!eligible) return observed;
  // The CSVs this uninstall may remove, as the plan will judge them: in a namespace the key names
  // and no Subscription claims, used by no live Subscription, carrying no other operator's key. An
  // owner reference to any OTHER CSV (one the plan keeps) still counts as a user of what it owns.
  const claimed = new Set(claimants.map((s) => s.metadata.namespace!));
  // It must still carry the key (the plan deletes only labelled components: one the key was taken
  // off is kept, and so is what it owns — red team 11, U5).
  let going = csvs.filter((c) => {
    const ns = c.metadata.namespace ?? '';
    return c.metadata.labels?.[labelKey] !== undefined && namespaceFitsKey(labelKey, ns) && !claimed.has(ns) && !hasOtherComponentKey(c, labelKey) && !allSubs.some((s) => subscriptionUses(s, c));
  });
  // And no live CSV outside the uninstall may own it (the plan keeps such a CSV, and with it what it
  // owns; red team 12, G1): drop those until none is left, as each drop can make another CSV's owner kept.
  for (let changed = true; changed; ) {
    const kept: KubeObject[] = [];
    for (const c of going) if ((await usersOf(c, allSubs, going, readCsv)).length === 0) kept.push(c);
    changed = kept.length < going.length;
    going = kept;
  }
  const components: Component[] = [];
  for (const r of refs) {
    const cref = { apiVersion: r.apiVersion!, kind: r.kind!, name: r.name!, ...(r.namespace ? { namespace: r.namespace } : {}) };
    // OLM lists only objects carrying the component label, so a listed Secret still has it.
    if (r.kind === 'Secret') components.push({ ref: cref, unreadable: 'a Secret: never read' });
    else if (!isKnownKind(cref.apiVersion, cref.kind)) components.push({ ref: cref, unreadable: `olm-medic does not handle ${cref.kind}` });
    else if (!isDnsSubdomain(cref.name) && !cref.kind.startsWith('ClusterRole') && !cref.kind.startsWith('Role')) components.push({ ref: cref, unreadable: 'not a valid name' });
    else if (cref.namespace !== undefined && !isDnsLabel(cref.namespace)) components.push({ ref: cref, unreadable: 'not a valid namespace' });
    // The kind decides the scope, never the ref: a namespace on a cluster-scoped kind's ref (or none on
    // a namespaced one's) is not what OLM writes, and would attribute the object by that namespace.
    else if (resourceFor(cref.apiVersion, cref.kind).namespaced !== (cref.namespace !== undefined)) {
      components.push({ ref: cref, unreadable: cref.namespace !== undefined ? 'a namespace on a cluster-scoped kind' : 'no namespace for a namespaced kind' });
    } else {
      const isCsv = cref.kind === 'ClusterServiceVersion' && cref.apiVersion === V1ALPHA1 && cref.namespace !== undefined;
      const live = isCsv ? await readCsv(cref.namespace!, cref.name) : await read.get(cref);
      if (!live) continue;
      // A cluster-scoped object labelled as owned by a CSV: that CSV must be gone for it to be a leftover.
      const l = live.metadata.labels ?? {};
      const ownerLive = !cref.namespace && l[LABEL_OWNER_KIND] === 'ClusterServiceVersion' && isDnsSubdomain(l[LABEL_OWNER]) && isDnsLabel(l[LABEL_OWNER_NAMESPACE])
        ? !!(await readCsv(l[LABEL_OWNER_NAMESPACE], l[LABEL_OWNER]))
        : undefined;
      const users = await usersOf(live, allSubs, going, readCsv);
      const userCsvs = users.flatMap((u) => (u.csv ? [u.csv] : []));
      components.push({
        ref: cref,
        live,
        ...(ownerLive !== undefined ? { ownerCsvLive: ownerLive } : {}),
        ...(users.length ? { usedBy: users.map((u) => u.text) } : {}),
        ...(userCsvs.length ? { userCsvs } : {}),
      });
    }
  }
  // OLM's InstallPlans still Installing that list a CSV that may go (one list per namespace of those
  // CSVs). Only Installing: that is the phase catalog-operator executes (transitionInstallPlanState).
  const unfinishedPlans: NonNullable<OperatorObserved['unfinishedPlans']> = [];
  for (const ns of new Set(going.map((c) => c.metadata.namespace!))) {
    for (const ip of await collect(read.list(V1ALPHA1, 'InstallPlan', { namespace: ns }))) {
      const phase = (ip.status as { phase?: string } | undefined)?.phase ?? '';
      if (phase !== 'Installing' || ip.metadata.deletionTimestamp) continue;
      const names = (ip.spec as { clusterServiceVersionNames?: unknown } | undefined)?.clusterServiceVersionNames;
      for (const c of going.filter((x) => x.metadata.namespace === ns && Array.isArray(names) && names.includes(x.metadata.name))) {
        const st = (ip.status as { startTime?: string } | undefined)?.startTime;
        const since = seconds(st) ?? seconds(ip.metadata.creationTimestamp);
        unfinishedPlans.push({ plan: ip.metadata.name, namespace: ns, csv: c.metadata.name, phase, ...(since !== undefined ? { since } : {}) });
      }
    }
  }
  return { ...observed, components, ...(unfinishedPlans.length ? { unfinishedPlans } : {}) };
}

/** Whether live Subscription `s` uses `obj`: owns it, installs it (a CSV), or points at it (its InstallPlan). */
function subscriptionUses(s: KubeObject, obj: KubeObject): boolean {
  if (s.metadata.namespace !== obj.metadata.namespace) return false;
  const st = s.status as { installPlanRef?: { uid?: string }; installedCSV?: string; currentCSV?: string } | undefined;
  const installs = obj.kind === 'ClusterServiceVersion' && (st?.installedCSV === obj.metadata.name || st?.currentCSV === obj.metadata.name);
  return (obj.kind === 'InstallPlan' && st?.installPlanRef?.uid === obj.metadata.uid) || installs || (obj.metadata.ownerReferences ?? []).some((o) => o.uid === s.metadata.uid);
}

/**
 * Live objects outside the uninstall that still use a component: a Subscription that owns it or
 * whose status.installPlanRef is it (a shared InstallPlan), or a live CSV of another operator that
 * owns it (a ServiceAccount OLM merged owners on). Such a component only loses the label.
 */
async function usersOf(obj: KubeObject, subs: KubeObject[], uninstalledCsvs: KubeObject[], readCsv: (namespace: string, name: string) => Promise<KubeObject | undefined>): Promise<{ text: string; csv?: string }[]> {
  const users: { text: string; csv?: string }[] = [];
  for (const s of subs) if (subscriptionUses(s, obj)) users.push({ text: `Subscription ${s.metadata.namespace}/${s.metadata.name}` });
  const ours = new Set(uninstalledCsvs.map((c) => c.metadata.uid));
  for (const o of obj.metadata.ownerReferences ?? []) {
    if (o.kind !== 'ClusterServiceVersion' || !obj.metadata.namespace || !isDnsSubdomain(o.name)) continue;
    const owner = await readCsv(obj.metadata.namespace, o.name);
    if (owner?.metadata.uid !== o.uid) continue;
    // A CSV deleted with propagationPolicy=Orphan (its `orphan` finalizer) hands what it owns back to
    // whoever deleted it: garbage collection strips the owner reference and the object runs on. It
    // keeps it, even one of the uninstall's own CSVs (red team 43).
    const orphaning = !!owner.metadata.deletionTimestamp && (owner.metadata.finalizers ?? []).includes('orphan');
    const csv = `${obj.metadata.namespace}/${o.name}`;
    if (orphaning || (!ours.has(o.uid) && !owner.metadata.deletionTimestamp)) users.push({ text: `CSV ${csv}${orphaning ? ' (being deleted with its dependents orphaned)' : ''}`, csv });
  }
  return users;
}

async function observe(ref: TargetRef, read: Reader, ctx: ObserveContext): Promise<Observed | undefined> {
  return ref.kind === 'Operator' ? observeOperator(ref, read, ctx) : observeCsv(ref, read);
}

const base = {
  kinds: ['operators.coreos.com/v1alpha1/ClusterServiceVersion', 'operators.coreos.com/v1/Operator'],
  defaults,
  targets,
  sweep,
  observe,
};

/**
 * What runs while finalizer-cleanup is disabled: it only releases olm-medic's own CSV finalizers
 * (on every CSV that carries one), so disabling the function never leaves a CSV stuck Terminating.
 */
const releaseOnly: RemediationFunction<Observed> = {
  ...base,
  name: 'finalizer-cleanup',
  summary: 'disabled: only releases olm-medic\'s own CSV finalizers',
  targets: (t) => (t.ref.kind === 'ClusterServiceVersion' ? targets(t) : []),
  async *sweep(read, scope) {
    for await (const csv of read.list(V1ALPHA1, 'ClusterServiceVersion', scope.namespace ? { namespace: scope.namespace } : {})) {
      if ((csv.metadata.finalizers ?? []).includes(MEDIC.finalizer)) yield { ...CSV, namespace: csv.metadata.namespace!, name: csv.metadata.name };
    }
  },
  observe: (ref, read) => (ref.kind === 'ClusterServiceVersion' ? observeCsv(ref, read) : Promise.resolve(undefined)),
  plan: (o, ctx) => plan(o, { ...ctx, options: { ...ctx.options, manageFinalizer: false } }),
};

export const finalizerCleanup: RemediationFunction<Observed> = {
  ...base,
  name: 'finalizer-cleanup',
  summary: 'cleans up after deleted CSVs with a finalizer that survives downtime, and removes uninstall leftovers on request',
  plan,
  whenDisabled: releaseOnly,
};
