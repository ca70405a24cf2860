/**
 * finalizer-cleanup: the pure decisions (olm-facts §4, §5).
 * A. CSV cleanup that survives downtime. OLM < v0.27 has no finalizer: if olm-operator is down
 *    when a CSV is deleted, its cluster-scoped RBAC, webhooks and APIServices are orphaned. We add
 *    our own finalizer to original CSVs lacking OLM's, and on deletion delete the objects labelled
 *    olm.owner=<csv>,olm.owner.namespace=<ns>,olm.owner.kind=ClusterServiceVersion, confirm they are
 *    gone, and only then remove the finalizer. Orphans of CSVs that no longer exist are swept too.
 * B. Uninstall leftovers listed by the Operator object <pkg>.<ns>: only on explicit request (an
 *    annotation) or, opted in, for the narrow safe case. Never CRDs, custom resources or namespaces.
 */
import type { Action, Plan, PlanContext } from '../../shared/core/types.js';
import { target } from '../../shared/core/types.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import { FINALIZER_OLM_CSV_CLEANUP, MEDIC } from '../../shared/olm/constants.js';
import { isCopiedCsv, seconds } from '../../shared/olm/olm.js';

export interface CsvObserved {
  kind: 'csv';
  csvRef: Ref;
  /** undefined: the CSV does not exist (any more). */
  csv?: KubeObject;
  /** Cluster-scoped objects labelled as owned by this CSV. */
  owned: KubeObject[];
}

export interface OperatorObserved {
  kind: 'operator';
  operator: KubeObject;
  pkg: string;
  namespace: string;
  labelKey: string;
  /** Subscriptions for this package in its namespace. */
  subscriptions: KubeObject[];
  csvs: KubeObject[];
  /** Live component objects that still carry the component label (read only when needed). */
  components: KubeObject[];
  /** Secrets listed in status.components.refs ("ns/name"): never read, never deleted. */
  secrets?: string[];
}

export type Observed = CsvObserved | OperatorObserved;

export const defaults = {
  /** Add our finalizer to CSVs that lack OLM's (situation A). */
  manageFinalizer: true,
  /** Labelled objects younger than this are not orphans yet (installs create them around the CSV). */
  orphanGraceSeconds: 120,
  /** Opt-in: clean up without an explicit request when no Subscription exists and the CSV has failed. */
  autoUninstall: false,
  failedCsvGraceSeconds: 3600,
};

/**
 * Kinds deleted on an uninstall request; everything else keeps its data and only loses the label.
 * Secrets are neither: olm-medic may not read them (RBAC), so they are reported by name and the
 * Operator object is left until a person deletes or unlabels them.
 */
export const DELETABLE = new Set(['ClusterServiceVersion', 'Deployment', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Service', 'InstallPlan', 'ConfigMap', 'OperatorCondition']);

export function plan(o: Observed, ctx: PlanContext): Plan {
  return o.kind === 'csv' ? planCsv(o, ctx) : planOperator(o, ctx);
}

const del = (obj: KubeObject, reason: string, note: string, regarding?: KubeObject): Action => ({
  verb: 'delete',
  target: target(obj),
  propagationPolicy: 'Background',
  reason,
  note,
  ...(regarding ? { regarding: target(regarding) } : {}),
});

function finalizersPatch(csv: KubeObject, finalizers: string[]): Action {
  return {
    verb: 'patch',
    target: { ...target(csv), resourceVersion: csv.metadata.resourceVersion! },
    patch: { metadata: { finalizers } },
    reason: finalizers.includes(MEDIC.finalizer) ? 'CsvFinalizerAdded' : 'CsvCleanupCompleted',
    note: finalizers.includes(MEDIC.finalizer)
      ? `Added finalizer ${MEDIC.finalizer}: this OLM does not clean up cluster-scoped RBAC/webhooks on CSV deletion (no ${FINALIZER_OLM_CSV_CLEANUP}), so olm-medic will, even if deletion happens while controllers are down.`
      : `All cluster-scoped objects labelled as owned by CSV ${csv.metadata.namespace}/${csv.metadata.name} are gone; removed finalizer ${MEDIC.finalizer}.`,
  };
}

export function planCsv(o: CsvObserved, ctx: PlanContext): Plan {
  const now = ctx.now.getTime() / 1000;
  const csv = o.csv;
  const label = `${o.csvRef.namespace}/${o.csvRef.name}`;
  if (!csv) {
    const grace = Number(ctx.options.orphanGraceSeconds ?? defaults.orphanGraceSeconds);
    const live = o.owned.filter((x) => !x.metadata.deletionTimestamp);
    const old = live.filter((x) => (seconds(x.metadata.creationTimestamp) ?? 0) + grace <= now);
    if (old.length) {
      return {
        kind: 'act',
        summary: `deleted ${old.length} leftover(s) of deleted CSV ${label}`,
        actions: old.map((x) => del(x, 'CsvLeftoverDeleted', `Deleted ${x.kind} ${x.metadata.name}: labelled as owned by CSV ${label}, which no longer exists (its cleanup never ran).`)),
      };
    }
    if (live.length) return { kind: 'requeue', afterSeconds: grace, reason: 'leftovers younger than the orphan grace period' };
    return { kind: 'noop', reason: `CSV ${label} is gone and left nothing behind` };
  }
  if (isCopiedCsv(csv)) return { kind: 'noop', reason: 'copied CSV; only originals are cleaned up' };
  const finalizers = csv.metadata.finalizers ?? [];
  const ours = finalizers.includes(MEDIC.finalizer);
  if (!csv.metadata.deletionTimestamp) {
    if (ours || finalizers.includes(FINALIZER_OLM_CSV_CLEANUP)) return { kind: 'noop', reason: 'CSV has a cleanup finalizer' };
    if (ctx.options.manageFinalizer === false) return { kind: 'noop', reason: 'finalizer management disabled' };
    return { kind: 'act', summary: `added cleanup finalizer to CSV ${label}`, actions: [finalizersPatch(csv, [...finalizers, MEDIC.finalizer])] };
  }
  if (!ours) return { kind: 'noop', reason: 'CSV is being deleted without our finalizer; leftovers are swept once it is gone' };
  const pending = o.owned.filter((x) => !x.metadata.deletionTimestamp);
  if (pending.length) {
    return {
      kind: 'act',
      summary: `cleaning up ${pending.length} object(s) of CSV ${label}`,
      requeueAfterSeconds: 2,
      actions: pending.map((x) => del(x, 'CsvOwnedObjectDeleted', `Deleted ${x.kind} ${x.metadata.name}, owned by CSV ${label} which is being deleted.`, csv)),
    };
  }
  if (o.owned.length) return { kind: 'requeue', afterSeconds: 2, reason: 'waiting for owned objects to finish deleting' };
  return { kind: 'act', summary: `cleanup of CSV ${label} complete`, actions: [finalizersPatch(csv, finalizers.filter((f) => f !== MEDIC.finalizer))] };
}

/** Why an uninstall may proceed, or why not (and whether to tell the user). `auto`: decided by autoUninstall, not (yet) recorded on the Operator. */
function uninstallGate(o: OperatorObserved, ctx: PlanContext): { go: true; why: string; auto?: true } | { go: false; refuse?: string; noop?: string } {
  const requested = o.operator.metadata.annotations?.[MEDIC.uninstall] === 'true';
  const subs = o.subscriptions.filter((s) => !s.metadata.deletionTimestamp).map((s) => s.metadata.name);
  if (requested) {
    if (subs.length) return { go: false, refuse: `Subscription ${subs.join(', ')} for package ${o.pkg} still exists in ${o.namespace}; delete it first (OLM would reinstall)` };
    return { go: true, why: `requested by annotation ${MEDIC.uninstall}=true` };
  }
  if (subs.length) return { go: false, noop: 'operator is subscribed' };
  const now = ctx.now.getTime() / 1000;
  const grace = Number(ctx.options.failedCsvGraceSeconds ?? defaults.failedCsvGraceSeconds);
  const failedLong = o.csvs.filter((c) => {
    const st = c.status as { phase?: string; lastTransitionTime?: string } | undefined;
    return st?.phase === 'Failed' && (seconds(st.lastTransitionTime) ?? now) + grace <= now;
  });
  if (!failedLong.length) return { go: false, noop: 'no Subscription, but no long-failed CSV either' };
  const why = `no Subscription for ${o.pkg} in ${o.namespace} and CSV ${failedLong.map((c) => c.metadata.name).join(', ')} has been Failed for over ${grace}s`;
  if (ctx.options.autoUninstall === true) return { go: true, why: `${why} (autoUninstall)`, auto: true };
  return { go: false, refuse: `${why}. Annotate Operator ${o.operator.metadata.name} with ${MEDIC.uninstall}=true to remove its leftovers` };
}

export function planOperator(o: OperatorObserved, ctx: PlanContext): Plan {
  const op = o.operator;
  if (op.metadata.deletionTimestamp) return { kind: 'noop', reason: 'Operator is being deleted' };
  // Until OLM has written status.components, "no refs" means "not known yet", not "nothing left".
  if (!(op.status as { components?: { labelSelector?: unknown } } | undefined)?.components?.labelSelector) {
    return { kind: 'noop', reason: 'OLM has not reported the components yet' };
  }
  const gate = uninstallGate(o, ctx);
  if (!gate.go) {
    if (gate.refuse) return { kind: 'refuse', reason: 'UninstallLeftoversKept', note: gate.refuse, regarding: target(op) };
    return { kind: 'noop', reason: gate.noop ?? 'not requested' };
  }
  // The CSV is deleted first, and with it the evidence (a long-Failed CSV) an automatic decision
  // rests on: record the decision on the Operator first, so the next rounds (label removal, the
  // Operator itself) carry on as if requested — and still stop if a Subscription reappears.
  if (gate.auto) {
    return {
      kind: 'act',
      summary: `automatic uninstall of operator ${op.metadata.name} started`,
      requeueAfterSeconds: 1,
      actions: [{
        verb: 'patch',
        target: { ...target(op), resourceVersion: op.metadata.resourceVersion! },
        patch: { metadata: { annotations: { [MEDIC.uninstall]: 'true' } } },
        reason: 'AutoUninstallStarted',
        note: `Annotated ${MEDIC.uninstall}=true: ${gate.why}. olm-medic now removes the operator's leftovers.`,
      }],
    };
  }
  const live = o.components.filter((c) => c.metadata.labels?.[o.labelKey] !== undefined);
  const deletable = live.filter((c) => DELETABLE.has(c.kind));
  const pending = deletable.filter((c) => !c.metadata.deletionTimestamp);
  // The CSV first, so OLM does not recreate its deployment while we work.
  pending.sort((a, b) => Number(b.kind === 'ClusterServiceVersion') - Number(a.kind === 'ClusterServiceVersion'));
  if (pending.length) {
    return {
      kind: 'act',
      summary: `removing ${pending.length} leftover(s) of operator ${op.metadata.name}`,
      requeueAfterSeconds: 2,
      actions: pending.map((c) => del(c, 'OperatorLeftoverDeleted', `Deleted ${c.kind} ${c.metadata.namespace ? `${c.metadata.namespace}/` : ''}${c.metadata.name} of uninstalled operator ${op.metadata.name}: ${gate.why}.`, op)),
    };
  }
  if (deletable.length) return { kind: 'requeue', afterSeconds: 2, reason: 'waiting for leftovers to finish deleting' };
  if (o.secrets?.length) {
    return {
      kind: 'refuse',
      reason: 'UninstallSecretsKept',
      note: `Removed the other leftovers of ${op.metadata.name}; Secret ${o.secrets.join(', ')} still carries ${o.labelKey}. olm-medic never reads or deletes Secrets: delete them or remove the label, and the Operator object will be removed.`,
      regarding: target(op),
    };
  }
  // What we keep (CRDs, namespaces, ...) must lose the label, or OLM recreates the Operator object (§5).
  const keep = live.filter((c) => !DELETABLE.has(c.kind));
  if (keep.length) {
    return {
      kind: 'act',
      summary: `unlabelled ${keep.length} kept object(s) of operator ${op.metadata.name}`,
      requeueAfterSeconds: 2,
      actions: keep.map((c) => ({
        verb: 'patch' as const,
        target: { ...target(c), resourceVersion: c.metadata.resourceVersion! },
        patch: { metadata: { labels: { [o.labelKey]: null } } },
        regarding: target(op),
        reason: 'ComponentLabelRemoved',
        note: `Kept ${c.kind} ${c.metadata.name} (olm-medic never deletes ${c.kind}s) and removed label ${o.labelKey} so OLM does not recreate Operator ${op.metadata.name}.`,
      })),
    };
  }
  return { kind: 'act', summary: `operator ${op.metadata.name} uninstalled`, actions: [del(op, 'OperatorDeleted', `All leftovers of ${op.metadata.name} are gone (${gate.why}); deleted the Operator object.`)] };
}
