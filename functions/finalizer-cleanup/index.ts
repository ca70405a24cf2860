/**
 * finalizer-cleanup — CSV cleanup that survives downtime, and uninstall leftovers (olm-facts §4, §5).
 *   listens   ClusterServiceVersion add/update/delete; Operator (operators.coreos.com/v1) add/update; sweeps
 *   reads     the CSV and the cluster-scoped objects labelled as its own (5 label-selected lists);
 *             for an Operator: its Subscriptions, CSVs and the live objects in status.components.refs
 *   writes    CSV finalizers (merge patch, rv precondition); deletes with uid+rv preconditions;
 *             removes the component label from kept objects
 */
import type { ResourceTrigger } from '../../shared/events/types.js';
import type { PlanContext, RemediationFunction, SweepScope } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { collect } from '../../shared/kube/collect.js';
import { isKnownKind } from '../../shared/kube/resources.js';
import { COMPONENT_LABEL_PREFIX, FINALIZER_OLM_CSV_CLEANUP, LABEL_OWNER, LABEL_OWNER_KIND, LABEL_OWNER_NAMESPACE, MEDIC, V1, V1ALPHA1 } from '../../shared/olm/constants.js';
import { isCopiedCsv } from '../../shared/olm/olm.js';
import { defaults, plan, type CsvObserved, type Observed, type OperatorObserved } from './plan.js';

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

function needsUs(csv: KubeObject): boolean {
  if (isCopiedCsv(csv)) return false;
  const f = csv.metadata.finalizers ?? [];
  return csv.metadata.deletionTimestamp ? f.includes(MEDIC.finalizer) : !f.includes(MEDIC.finalizer) && !f.includes(FINALIZER_OLM_CSV_CLEANUP);
}

function targets(t: ResourceTrigger): Ref[] {
  const { apiVersion, kind } = t.ref;
  if (kind === 'ClusterServiceVersion' && apiVersion === V1ALPHA1) {
    if (t.verb === 'delete') return t.object && isCopiedCsv(t.object) ? [] : [t.ref];
    return !t.object || needsUs(t.object) ? [t.ref] : [];
  }
  if (kind === 'Operator' && apiVersion === V1 && t.verb !== 'delete') return [t.ref];
  return [];
}

async function* sweep(read: Reader, scope: SweepScope): AsyncIterable<Ref> {
  for await (const csv of read.list(V1ALPHA1, 'ClusterServiceVersion', scope.namespace ? { namespace: scope.namespace } : {})) {
    if (needsUs(csv)) yield { ...CSV, namespace: csv.metadata.namespace!, name: csv.metadata.name };
  }
  const owners = new Set<string>();
  for (const [apiVersion, kind] of OWNED_KINDS) {
    for await (const obj of read.list(apiVersion, kind, { labelSelector: `${LABEL_OWNER_KIND}=ClusterServiceVersion` })) {
      const l = obj.metadata.labels ?? {};
      const key = `${l[LABEL_OWNER_NAMESPACE]}/${l[LABEL_OWNER]}`;
      if (!l[LABEL_OWNER] || !l[LABEL_OWNER_NAMESPACE] || owners.has(key) || (scope.namespace && scope.namespace !== l[LABEL_OWNER_NAMESPACE])) continue;
      owners.add(key);
      yield { ...CSV, namespace: l[LABEL_OWNER_NAMESPACE], name: l[LABEL_OWNER] };
    }
  }
  // Operators are cluster-scoped and named <pkg>.<namespace>: a scoped sweep takes those of its namespace.
  for await (const op of read.list(V1, 'Operator')) {
    if (!scope.namespace || op.metadata.name.endsWith(`.${scope.namespace}`)) yield { ...OPERATOR, name: op.metadata.name };
  }
}

async function observeCsv(ref: Ref, read: Reader): Promise<CsvObserved> {
  const csv = await read.get(ref);
  if (csv && isCopiedCsv(csv)) return { kind: 'csv', csvRef: ref, csv, owned: [] };
  if (csv && !csv.metadata.deletionTimestamp) return { kind: 'csv', csvRef: ref, csv, owned: [] }; // only the finalizer matters
  const selector = `${LABEL_OWNER}=${ref.name},${LABEL_OWNER_NAMESPACE}=${ref.namespace},${LABEL_OWNER_KIND}=ClusterServiceVersion`;
  const owned: KubeObject[] = [];
  for (const [apiVersion, kind] of OWNED_KINDS) owned.push(...(await collect(read.list(apiVersion, kind, { labelSelector: selector }))));
  return { kind: 'csv', csvRef: ref, ...(csv ? { csv } : {}), owned };
}

interface Components {
  labelSelector?: { matchExpressions?: { key?: string }[] };
  refs?: { apiVersion?: string; kind?: string; namespace?: string; name?: string }[];
}

async function observeOperator(ref: Ref, read: Reader, ctx: PlanContext): Promise<OperatorObserved | undefined> {
  const operator = await read.get(ref);
  if (!operator) return undefined;
  const comps = ((operator.status as { components?: Components } | undefined)?.components ?? {}) as Components;
  const labelKey = comps.labelSelector?.matchExpressions?.find((e) => e.key?.startsWith(COMPONENT_LABEL_PREFIX))?.key ?? `${COMPONENT_LABEL_PREFIX}${operator.metadata.name}`;
  const refs = (comps.refs ?? []).filter((r) => r.apiVersion && r.kind && r.name && isKnownKind(r.apiVersion, r.kind));
  const namespace = refs.find((r) => r.kind === 'ClusterServiceVersion')?.namespace ?? operator.metadata.name.slice(operator.metadata.name.lastIndexOf('.') + 1);
  const pkg = operator.metadata.name.endsWith(`.${namespace}`) ? operator.metadata.name.slice(0, -(namespace.length + 1)) : operator.metadata.name;
  const subscriptions = (await collect(read.list(V1ALPHA1, 'Subscription', { namespace }))).filter((s) => (s.spec as { name?: string } | undefined)?.name === pkg);
  const csvs: KubeObject[] = [];
  for (const r of refs.filter((x) => x.kind === 'ClusterServiceVersion')) {
    const c = await read.get({ ...CSV, namespace: r.namespace ?? namespace, name: r.name! });
    if (c) csvs.push(c);
  }
  const base: OperatorObserved = { kind: 'operator', operator, pkg, namespace, labelKey, subscriptions, csvs, components: [] };
  const eligible = operator.metadata.annotations?.[MEDIC.uninstall] === 'true' || (ctx.options.autoUninstall === true && subscriptions.length === 0);
  if (!eligible) return base;
  const components: KubeObject[] = [];
  // OLM lists only objects carrying the component label, so a listed Secret still has it.
  const secrets = refs.filter((r) => r.kind === 'Secret').map((r) => `${r.namespace ?? namespace}/${r.name}`);
  for (const r of refs.filter((x) => x.kind !== 'Secret')) {
    const live = await read.get({ apiVersion: r.apiVersion!, kind: r.kind!, name: r.name!, ...(r.namespace ? { namespace: r.namespace } : {}) });
    if (live) components.push(live);
  }
  return { ...base, components, ...(secrets.length ? { secrets } : {}) };
}

async function observe(ref: Ref, read: Reader, ctx: PlanContext): Promise<Observed | undefined> {
  return ref.kind === 'Operator' ? observeOperator(ref, read, ctx) : observeCsv(ref, read);
}

export const finalizerCleanup: RemediationFunction<Observed> = {
  name: 'finalizer-cleanup',
  kinds: ['operators.coreos.com/v1alpha1/ClusterServiceVersion', 'operators.coreos.com/v1/Operator'],
  summary: 'cleans up after deleted CSVs with a finalizer that survives downtime, and removes uninstall leftovers on request',
  defaults,
  targets,
  sweep,
  observe,
  plan,
};
