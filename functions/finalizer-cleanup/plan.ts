/**
 * finalizer-cleanup: the pure decisions (olm-facts §4, §5).
 * A. CSV cleanup that survives downtime. OLM < v0.27 has no finalizer: if olm-operator is down
 *    when a CSV is deleted, its cluster-scoped RBAC, webhooks and APIServices are orphaned. We add
 *    our own finalizer to original CSVs that OLM has synced without adding its own, and on deletion
 *    delete the objects labelled olm.owner=<csv>,olm.owner.namespace=<ns>,olm.owner.kind=
 *    ClusterServiceVersion, confirm they are gone, and only then remove the finalizer. Our finalizer
 *    is ALWAYS released: opted out, protected, dry-run, disabled or superseded by OLM's own, it goes
 *    (without the cleanup) rather than leave a CSV stuck Terminating. Orphans of CSVs that no longer
 *    exist are swept too.
 * B. Uninstall leftovers listed by an Operator object: only on explicit request (an annotation) or,
 *    opted in, for the narrow safe case. The Operator's name is the TRUNCATED component label key
 *    (§2.2), so package and namespaces come from the objects carrying the label, never from the
 *    name; components in a namespace where a Subscription still claims the label are kept; objects
 *    shared with another operator only lose this operator's label. Never CRDs, CRs or namespaces.
 */
import type { Action, Guard, Plan, PlanContext } from '../../shared/core/types.js';
import { target, writeKey } from '../../shared/core/types.js';
import { policyRefusal } from '../../shared/core/policy.js';
import type { KubeObject, Ref } from '../../shared/kube/types.js';
import { isDnsLabel, isDnsSubdomain } from '../../shared/kube/validate.js';
import { FINALIZER_OLM_CSV_CLEANUP, LABEL_OWNER, LABEL_OWNER_KIND, LABEL_OWNER_NAMESPACE, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { fieldOwners, hasOtherComponentKey, isCopiedCsv, latestOf, managedWriteTime, namespaceFitsKey, seconds } from '../../shared/olm/olm.js';

export interface CsvObserved {
  kind: 'csv';
  csvRef: Ref;
  /** undefined: the CSV does not exist (any more). */
  csv?: KubeObject;
  /** Cluster-scoped objects labelled (exactly) as owned by this CSV. */
  owned: KubeObject[];
  /** Another original CSV in the namespace carries OLM's finalizer: this OLM (v0.27+) manages them. */
  olmFinalizerSeen?: boolean;
}

/** One entry of status.components.refs, and what is live behind it. */
export interface Component {
  ref: { apiVersion: string; kind: string; namespace?: string; name: string };
  /** The live object (read only when an uninstall may proceed). */
  live?: KubeObject;
  /** Why it could not be read (unknown kind, Secret: never read). */
  unreadable?: string;
  /** Cluster-scoped objects labelled olm.owner*: whether that CSV exists (then it is not a leftover). */
  ownerCsvLive?: boolean;
  /** Live objects outside the uninstall that use it (owner Subscription/CSV, a Subscription's installPlanRef). */
  usedBy?: string[];
  /** The live CSVs among usedBy, as `<namespace>/<name>`. */
  userCsvs?: string[];
}

export interface OperatorObserved {
  kind: 'operator';
  operator: KubeObject;
  /** The component label key OLM reported (status.components.labelSelector), if any. */
  labelKey?: string;
  /** Live Subscriptions (any namespace) whose component label key is labelKey: they still use it. */
  claimants: KubeObject[];
  /** Live CSVs among the refs (for the automatic, long-failed gate). */
  csvs: KubeObject[];
  /** Every ref, with its live object when an uninstall may proceed (otherwise empty). */
  components: Component[];
  /**
   * InstallPlans still Installing that list a CSV this uninstall would delete (read only when an
   * uninstall may proceed): catalog-operator executes such a plan again and re-creates a CSV deleted
   * under it (seen on real OLM v0.25.0 when its write of Complete lost a conflict).
   */
  /** `since`: the plan's status.startTime (else its creation), seconds: how long OLM has been at it. */
  unfinishedPlans?: { plan: string; namespace: string; csv: string; phase: string; since?: number }[];
  /**
   * Looked at by a sweep of this namespace (TargetRef.scope): only that namespace's components (and
   * cluster-scoped ones attributed to it) are acted on; the Operator object and an automatic
   * uninstall's decision are left to an unscoped look.
   */
  scope?: string;
}

export type Observed = CsvObserved | OperatorObserved;

export const defaults = {
  /** Hold our finalizer on CSVs OLM does not protect (situation A). false: olm-medic holds none and releases its own. */
  manageFinalizer: true,
  /** Labelled objects younger than this are not orphans yet (installs create them around the CSV). */
  orphanGraceSeconds: 120,
  /** Opt-in: clean up without an explicit request when no Subscription exists and the CSV has failed. */
  autoUninstall: false,
  failedCsvGraceSeconds: 3600,
};

/** Kinds deleted on an uninstall request; the others are kept and only lose the component label. */
export const DELETABLE = new Set(['ClusterServiceVersion', 'Deployment', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Service', 'InstallPlan', 'ConfigMap', 'OperatorCondition']);
/** Kinds the shipped RBAC may patch (to remove a component label); others are kept as they are and reported. */
export const PATCHABLE = new Set(['ClusterServiceVersion', 'Subscription', 'InstallPlan', 'ServiceAccount', 'CustomResourceDefinition', 'Namespace', 'APIService']);

export function plan(o: Observed, ctx: PlanContext): Plan {
  return o.kind === 'csv' ? planCsv(o, ctx) : planOperator(o, ctx);
}

const del = (obj: KubeObject, reason: string, note: string, extra: Partial<Action> = {}): Action => ({
  verb: 'delete',
  target: target(obj),
  propagationPolicy: 'Background',
  reason,
  note,
  ...(extra as object),
});

function addFinalizer(csv: KubeObject): Action {
  return {
    verb: 'patch',
    target: { ...target(csv), resourceVersion: csv.metadata.resourceVersion! },
    patch: { metadata: { finalizers: [...(csv.metadata.finalizers ?? []), MEDIC.finalizer] } },
    reason: 'CsvFinalizerAdded',
    note: `Added finalizer ${MEDIC.finalizer}: OLM synced this CSV without its own ${FINALIZER_OLM_CSV_CLEANUP} (OLM < v0.27 cleans up only if it sees the deletion), so olm-medic will clean up its cluster-scoped RBAC/webhooks even if deletion happens while controllers are down.`,
  };
}

/** Removes our finalizer (and nothing else). Exempt from policy and dry-run: keeping it would strand the CSV. */
function release(csv: KubeObject, reason: string, why: string): Action {
  return {
    verb: 'patch',
    target: { ...target(csv), resourceVersion: csv.metadata.resourceVersion! },
    patch: { metadata: { finalizers: (csv.metadata.finalizers ?? []).filter((f) => f !== MEDIC.finalizer) } },
    releasesOwnFinalizer: true,
    reason,
    note: `Removed finalizer ${MEDIC.finalizer} from CSV ${csv.metadata.namespace}/${csv.metadata.name}: ${why}.`,
  };
}

const optedOut = (o: KubeObject): boolean => o.metadata.annotations?.[MEDIC.optOut] === 'true';

export function planCsv(o: CsvObserved, ctx: PlanContext): Plan {
  const now = ctx.now.getTime() / 1000;
  const csv = o.csv;
  const label = `${o.csvRef.namespace}/${o.csvRef.name}`;
  const releaseMode = ctx.options.manageFinalizer === false;
  if (!csv) {
    const grace = Number(ctx.options.orphanGraceSeconds ?? defaults.orphanGraceSeconds);
    const live = o.owned.filter((x) => !x.metadata.deletionTimestamp);
    const old = live.filter((x) => (seconds(x.metadata.creationTimestamp) ?? now) + grace <= now);
    if (old.length) {
      // Guarded by the CSV's namespace: a protected namespace's leftovers are never swept.
      const guards = [{ apiVersion: o.csvRef.apiVersion, kind: o.csvRef.kind, name: o.csvRef.name, namespace: o.csvRef.namespace! }];
      return {
        kind: 'act',
        summary: `deleted ${old.length} leftover(s) of deleted CSV ${label}`,
        actions: old.map((x) => del(x, 'CsvLeftoverDeleted', `Deleted ${x.kind} ${x.metadata.name}: labelled as owned by CSV ${label}, which no longer exists (its cleanup never ran).`, { optional: true, guards })),
      };
    }
    if (live.length) return { kind: 'requeue', afterSeconds: grace, reason: 'leftovers younger than the orphan grace period' };
    return { kind: 'noop', reason: `CSV ${label} is gone and left nothing behind` };
  }
  const finalizers = csv.metadata.finalizers ?? [];
  if (isCopiedCsv(csv)) {
    // Ours on something that looks copied (anyone can add the label): released, never a cleanup.
    if (finalizers.includes(MEDIC.finalizer)) return act([release(csv, 'CsvFinalizerReleased', 'it looks like a copied CSV (olm.copiedFrom / operatorNamespace elsewhere / status Copied): only originals are cleaned up')], 'released our finalizer');
    return { kind: 'noop', reason: 'copied CSV; only originals are cleaned up' };
  }
  const ours = finalizers.includes(MEDIC.finalizer);
  const olms = finalizers.includes(FINALIZER_OLM_CSV_CLEANUP);
  const protectedNs = ctx.policy.protectedNamespaces.has(csv.metadata.namespace ?? '');
  if (!csv.metadata.deletionTimestamp) {
    if (ours && releaseMode) return act([release(csv, 'CsvFinalizerReleased', 'finalizer management is off (manageFinalizer=false or finalizer-cleanup disabled); olm-medic holds no finalizers')], 'released our finalizer');
    if (ours && olms) return act([release(csv, 'CsvFinalizerReleased', `OLM's own ${FINALIZER_OLM_CSV_CLEANUP} now protects it (OLM v0.27+); olm-medic defers to OLM`)], 'released our finalizer to OLM');
    if (ours || olms) return { kind: 'noop', reason: 'CSV has a cleanup finalizer' };
    if (releaseMode) return { kind: 'noop', reason: 'finalizer management is off' };
    if (ctx.policy.dryRun) return { kind: 'noop', reason: 'dry-run: olm-medic adds no finalizer (it could not release it by cleaning up)' };
    if (ctx.policy.oneShot) return { kind: 'noop', reason: 'a one-off run (the CLI) adds no finalizer: no olm-medic would stay to release it when the CSV is deleted' };
    if (optedOut(csv) || protectedNs) return { kind: 'noop', reason: 'opted out or protected: no finalizer' };
    // OLM v0.27+ adds its finalizer on the CSV's FIRST sync, before it ever writes status
    // (olm/operator.go v0.28.0:1286-1300, :1402): an unsynced CSV proves nothing, so never race OLM.
    if (!(csv.status as { phase?: string } | undefined)?.phase) return { kind: 'noop', reason: 'OLM has not synced this CSV yet (OLM v0.27+ adds its own finalizer first)' };
    if (o.olmFinalizerSeen) return { kind: 'noop', reason: `another CSV in ${csv.metadata.namespace} carries ${FINALIZER_OLM_CSV_CLEANUP}: this OLM manages CSV cleanup` };
    return act([addFinalizer(csv)], `added cleanup finalizer to CSV ${label}`);
  }
  if (!ours) return { kind: 'noop', reason: 'CSV is being deleted without our finalizer; leftovers are swept once it is gone' };
  if (releaseMode) return act([release(csv, 'CsvFinalizerReleased', 'finalizer management is off; cleanup skipped')], 'released our finalizer');
  if (olms) return act([release(csv, 'CsvFinalizerReleased', `OLM's own ${FINALIZER_OLM_CSV_CLEANUP} does the cleanup`)], 'released our finalizer to OLM');
  if (optedOut(csv) || protectedNs) {
    const why = protectedNs ? `namespace ${csv.metadata.namespace} is protected` : `the CSV is annotated ${MEDIC.optOut}=true`;
    return act([release(csv, 'CsvCleanupSkipped', `${why}, so its cluster-scoped objects were not cleaned up`)], 'released our finalizer without cleanup');
  }
  const pending = o.owned.filter((x) => !x.metadata.deletionTimestamp);
  // The apiserver refused to delete this very state of it (admission, narrowed RBAC): asking again
  // gets the same answer, and the CSV must not stay Terminating for it (red team 28a F1). Left like
  // an opted-out one; the leftovers sweep tries again once the CSV is gone.
  const refusedBy = (x: KubeObject): string | undefined => ctx.refusedWrite?.('CsvOwnedObjectDeleted', x.metadata.uid, x.metadata.resourceVersion);
  const kept = pending.filter(optedOut);
  const refused = pending.filter((x) => !optedOut(x) && refusedBy(x) !== undefined);
  const deletable = pending.filter((x) => !optedOut(x) && refusedBy(x) === undefined);
  const left = kept.length + refused.length;
  const deletes = deletable.map((x) => del(x, 'CsvOwnedObjectDeleted', `Deleted ${x.kind} ${x.metadata.name}, owned by CSV ${label} which is being deleted.`, { optional: true, regarding: target(csv) }));
  const keptNote =
    (kept.length ? `; kept (opted out): ${kept.map((x) => `${x.kind} ${x.metadata.name}`).join(', ')}` : '') +
    (refused.length ? `; not deleted, the apiserver refused (the leftovers sweep tries again once the CSV is gone): ${refused.map((x) => `${x.kind} ${x.metadata.name} (${refusedBy(x)})`).join('; ')}` : '');
  if (ctx.policy.dryRun) {
    // Dry-run deletes change nothing, so waiting for them would strand the CSV: show them, then release.
    return act([...deletes, release(csv, 'CsvFinalizerReleased', `dry-run: the cleanup was only simulated${keptNote}`)], `dry-run cleanup of CSV ${label}`);
  }
  if (deletes.length) return { kind: 'act', summary: `cleaning up ${deletes.length} object(s) of CSV ${label}`, requeueAfterSeconds: 2, actions: deletes };
  const deleting = o.owned.filter((x) => x.metadata.deletionTimestamp);
  const heldLong = deleting.filter((x) => (x.metadata.finalizers ?? []).length > 0 && (seconds(x.metadata.deletionTimestamp) ?? now) + HELD_DELETING_SECONDS <= now);
  if (pending.length === left && deleting.length > 0 && heldLong.length === deleting.length) {
    const held = heldLong.map((x) => `${x.kind} ${x.metadata.name} (finalizers ${(x.metadata.finalizers ?? []).join(', ')})`).join('; ');
    return act([release(csv, 'CsvCleanupCompleted', `every object labelled as owned by it is deleted or being deleted; still Terminating behind other finalizers for over ${HELD_DELETING_SECONDS}s: ${held}${keptNote}`)], `cleanup of CSV ${label} complete (deletions requested)`);
  }
  if (pending.length > left || deleting.length) {
    return { kind: 'requeue', afterSeconds: deletingWait(deleting, now, 2), reason: 'waiting for owned objects to finish deleting' };
  }
  if (refused.length) return act([release(csv, 'CsvCleanupIncomplete', `the apiserver refused to delete what is left${keptNote}`)], `cleanup of CSV ${label} incomplete (refused by the apiserver)`);
  return act([release(csv, 'CsvCleanupCompleted', `all cluster-scoped objects labelled as owned by it are gone${keptNote}`)], `cleanup of CSV ${label} complete`);
}

/**
 * How long to wait for objects to finish deleting: `base` for the first 30 s (GC's usual few
 * seconds), then a quarter of the time the oldest of them has been deleting, at most 60 s: one held
 * by someone else's finalizer (OLM's, with olm-operator down for hours) is not polled every 2 s.
 */
export function deletingWait(objs: KubeObject[], now: number, base: number): number {
  return backOff(objs.map((x) => seconds(x.metadata.deletionTimestamp)), now, base);
}

/** The same back-off for a wait on something under way since the earliest of `since` (seconds). */
function backOff(since: (number | undefined)[], now: number, base: number): number {
  const age = now - Math.min(now, ...since.map((s) => s ?? now));
  return age < 30 ? base : Math.min(60, Math.max(base, Math.ceil(age / 4)));
}

/**
 * How long an object olm-medic asked to delete may stay Terminating behind other finalizers before
 * the CSV's cleanup counts as done: its deletion is requested (whoever holds it finishes it), and
 * olm-medic's finalizer must not keep the CSV Terminating (and its name blocked) for as long.
 */
export const HELD_DELETING_SECONDS = 300;

function act(actions: Action[], summary: string): Plan {
  return { kind: 'act', actions, summary };
}

/**
 * The earliest the CSV's Failed transition can have been on the apiserver's clock, given how far
 * behind olm-operator's clock ran (red team 37: a CSV created long ago whose Failed phase a clock
 * 2 h behind dated). OLM writes status when its lastUpdateTime changes (SetPhase stamps it with its
 * own clock); the apiserver stamps that write (managedFields). Their gap is how far OLM's clock was
 * behind, and it moves lastTransitionTime forward by as much. Not the write time itself: OLM rewrites
 * the status of a CSV that stays Failed (a Failed CSV with an invalid install strategy gets SetPhase
 * on every sync, a new lastUpdateTime and the same lastTransitionTime — operator.go, v0.46.0
 * parseStrategiesAndUpdateStatus), so the last write says nothing about when it failed. Without a
 * lastUpdateTime, the last status write bounds it.
 */
function skewBound(c: KubeObject, st: { lastTransitionTime?: string; lastUpdateTime?: string } | undefined): number | undefined {
  const written = managedWriteTime(c, 'status');
  const updated = seconds(st?.lastUpdateTime);
  const transition = seconds(st?.lastTransitionTime);
  if (written === undefined) return undefined;
  if (updated === undefined || transition === undefined) return written;
  return transition + Math.max(0, written - updated);
}

/**
 * The operator's Deployments (components) that serve: any available or ready replica, whatever the
 * Available condition says (red team 41, R2: 2 of 3 replicas up is Available=False and serving).
 * Their names, or undefined if none.
 */
function runningDeployments(o: OperatorObserved, goesAnyway: (c: Component) => boolean = () => false): string | undefined {
  const running = o.components.filter((c) => {
    const st = c.live?.status as { availableReplicas?: unknown; readyReplicas?: unknown } | undefined;
    const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
    return c.ref.kind === 'Deployment' && c.live && !c.live.metadata.deletionTimestamp && (n(st?.availableReplicas) > 0 || n(st?.readyReplicas) > 0) && !goesAnyway(c);
  });
  return running.length ? running.map((c) => `${c.live!.metadata.namespace}/${c.live!.metadata.name}`).join(', ') : undefined;
}

/**
 * A component garbage collection removes with the CSVs that own it: every owner reference is to a
 * CSV — OLM's apiVersion too: garbage collection resolves an owner by apiVersion and kind, and one it
 * cannot map (`operators.coreos.com/v1`) is retried for ever, never deleted (red team 43) — and no
 * live CSV keeps it (usedBy: the observer read each owner; one being deleted, gone, or replaced by
 * another of its name under a new uid is no user, one being deleted with propagationPolicy=Orphan is).
 */
function goesWithItsCsv(c: Component): boolean {
  const owners = c.live?.metadata.ownerReferences ?? [];
  return owners.length > 0 && owners.every((r) => r.kind === 'ClusterServiceVersion' && r.apiVersion === V1ALPHA1) && !c.usedBy?.length;
}

/**
 * Why an uninstall may proceed, or why not (and whether to tell the user, or to take back an
 * automatic decision recorded earlier). `auto`: decided by autoUninstall now, not yet recorded on the
 * Operator. A user's request (`true`) stands until the user takes it back; olm-medic's own record
 * (`auto`) goes on only while what decided it still holds — no Subscription, every CSV under the key
 * that is not being deleted long Failed — and only while autoUninstall is on (red team 39: a record
 * left behind by an uninstall that stopped short later deleted the operator's recovered CSV).
 */
function uninstallGate(o: OperatorObserved, ctx: PlanContext): { go: true; why: string; auto?: string[]; only?: UninstallRecord } | { go: false; refuse?: string; noop?: string; cancel?: string } {
  const marker = o.operator.metadata.annotations?.[MEDIC.uninstall];
  // Before 8f97ca8 olm-medic recorded an automatic uninstall as `true`: one that only olm-medic's
  // field manager ever set is its own record, not a user's request (red team 40, L1).
  const owners = fieldOwners(o.operator, ['metadata', 'annotations', MEDIC.uninstall]);
  const ownRecord = marker === 'true' && owners.length > 0 && owners.every((m) => m === MEDIC.fieldManager);
  if (marker === 'true' && !ownRecord) return { go: true, why: `requested by annotation ${MEDIC.uninstall}=true` };
  // Any other value is a user's word too: no uninstall, automatic or not (red team 40, V1).
  if (marker !== undefined && marker !== 'true' && marker !== 'auto') return { go: false, noop: `annotation ${MEDIC.uninstall}=${JSON.stringify(marker).slice(0, 40)} is neither "true" nor "auto": no uninstall` };
  const recorded = marker === 'auto' || ownRecord;
  const claimants = o.claimants.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
  if (claimants.length) return recorded ? { go: false, cancel: `Subscription ${claimants.join(', ')} uses the operator again` } : { go: false, noop: 'operator is subscribed' };
  if (recorded && ctx.options.autoUninstall !== true) return { go: false, cancel: 'autoUninstall is off' };
  // A record names the CSVs it was decided on (long Failed, and every part under the key in their
  // namespaces, owned by none but them: C1). One without them is from an olm-medic that did not check
  // that (`true`, or `auto` before 637df7b): under colliding keys it would delete another install's
  // parts, and its own first stage has deleted the evidence to check it now. Taken back; where the
  // CSVs are still there, the next look decides afresh.
  const decided = recorded ? recordOf(o.operator) : undefined;
  if (recorded && !decided) return { go: false, cancel: `the record does not name the CSVs it was decided on (${MEDIC.uninstallCsvs}; an olm-medic from before that check wrote it). Annotate Operator ${o.operator.metadata.name} with ${MEDIC.uninstall}=true to remove its leftovers` };
  const now = ctx.now.getTime() / 1000;
  const grace = Number(ctx.options.failedCsvGraceSeconds ?? defaults.failedCsvGraceSeconds);
  // Only a CSV in a namespace the key can name is evidence about THIS operator.
  // OLM stamps the phase transition with its own clock: never older than the CSV itself, which the
  // apiserver stamped (red team 31: an olm-operator clock 2 h behind started an automatic uninstall
  // of a CSV created 10 min before).
  const underKey = o.csvs.filter((c) => namespaceFitsKey(o.labelKey ?? '', c.metadata.namespace ?? ''));
  const failedLong = underKey.filter((c) => {
    const st = c.status as { phase?: string; lastTransitionTime?: string; lastUpdateTime?: string } | undefined;
    const failedAt = latestOf(seconds(st?.lastTransitionTime) ?? now, seconds(c.metadata.creationTimestamp) ?? now, skewBound(c, st))!;
    return st?.phase === 'Failed' && failedAt + grace <= now;
  });
  const names = (cs: KubeObject[]): string => cs.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).join(', ');
  if (recorded) {
    // The CSVs this uninstall already deleted are gone or going: they count for it, not against it.
    const recovered = underKey.filter((c) => !c.metadata.deletionTimestamp && !failedLong.includes(c));
    if (recovered.length) return { go: false, cancel: `CSV ${names(recovered)} is not long Failed any more` };
    // ... nor while the operator serves (red team 41, R1: a record from before that check, or pods
    // that came back while the uninstall waited on its first stage). Once every CSV under the key is
    // being deleted, a Deployment that only such CSVs own goes with them (garbage collection) and is
    // no longer evidence; one no CSV owns any more (its CSV deleted with --cascade=orphan, or another
    // install's whose key collides, recorded before the start checked for that) serves on whatever
    // this uninstall does: it takes the record back (red team 42, O1).
    const standing = underKey.some((c) => !c.metadata.deletionTimestamp);
    const running = runningDeployments(o, standing ? undefined : goesWithItsCsv);
    if (running) return { go: false, cancel: `Deployment ${running} is available (the operator runs)${standing ? '' : ' and no CSV being deleted owns it'}` };
    return { go: true, why: `automatic uninstall recorded (${MEDIC.uninstall}=${marker}, CSV ${[...decided!.csvs].join(', ')}); no Subscription uses ${o.labelKey} and no CSV under it is healthy`, only: decided };
  }
  if (!failedLong.length) return { go: false, noop: 'no Subscription, but no long-failed CSV either' };
  // Keys of two installs can collide (one Operator object for both): a failed install says nothing
  // about another one, so an automatic uninstall needs EVERY install under the key to be long Failed.
  const healthy = underKey.filter((c) => !failedLong.includes(c));
  if (healthy.length) return { go: false, noop: `CSV ${names(healthy)} under the same key is not long Failed: no automatic uninstall` };
  const why = `no Subscription uses ${o.labelKey} and CSV ${names(failedLong)} has been Failed for over ${grace}s`;
  if (ctx.options.autoUninstall === true) {
    // Keys of two installs can collide: an install whose CSV is gone (deleted with its parts orphaned)
    // adds no CSV to the evidence, but its parts are under the key. Every namespace holding a part
    // must hold a long-Failed CSV (red team 40, C1: another install's running Deployment deleted).
    // A part a live CSV uses (OLM's RBAC copy in a target namespace the truncated key also names,
    // owned by the copied CSV there: red team 45, S2) is kept whatever happens: no evidence either way.
    // Nor is a part outside the namespaces the key names, where the uninstall never acts.
    const parts = o.components.flatMap((c) => {
      const ns = placedIn(c);
      return ns !== undefined && namespaceFitsKey(o.labelKey ?? '', ns) && !c.usedBy?.length && c.ownerCsvLive !== true ? [{ c, ns }] : [];
    });
    const failedNs = new Set(failedLong.map((c) => c.metadata.namespace));
    const otherNs = [...new Set(parts.filter((p) => !failedNs.has(p.ns)).map((p) => p.ns))];
    if (otherNs.length) return { go: false, refuse: `${why}, but the parts of it in ${otherNs.join(', ')} have no long-Failed CSV: no automatic uninstall. Annotate Operator ${o.operator.metadata.name} with ${MEDIC.uninstall}=true to remove its leftovers` };
    // ... and two installs under one key can share a namespace (red team 44, H3): a part OLM marked
    // as another CSV's (owner reference, olm.owner labels) that is no live CSV under the key is
    // another install's, or one this evidence says nothing about.
    const known = new Set([...failedLong, ...o.csvs].map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
    const strangers = parts.map((p) => p.c).filter((c) => ownerCsvs(c).some((n) => !known.has(n)));
    if (strangers.length) return { go: false, refuse: `${why}, but ${strangers.map((c) => `${where(c)} (of CSV ${ownerCsvs(c).filter((n) => !known.has(n)).join(', ')})`).join(', ')} ${strangers.length > 1 ? 'are' : 'is'} under the key too: no automatic uninstall. Annotate Operator ${o.operator.metadata.name} with ${MEDIC.uninstall}=true to remove its leftovers` };
    // A Failed phase is OLM's word, and OLM moves it back only while it runs: an operator with a
    // Deployment serving is running, whatever its CSV still says (olm-operator down, or a CSV OLM
    // cannot parse any more). Not removed automatically (red team 40's suspicion).
    const running = runningDeployments(o);
    if (running) return { go: false, refuse: `${why}, but Deployment ${running} is available (the operator runs): no automatic uninstall. Annotate Operator ${o.operator.metadata.name} with ${MEDIC.uninstall}=true to remove it` };
    // A CSV policy keeps (opted out, protected namespace) would stop the uninstall after its first
    // stage and leave the record behind: not started at all.
    const kept = failedLong.flatMap((c) => {
      const r = policyRefusal(ctx.policy, del(c, 'OperatorLeftoverDeleted', 'delete it'));
      return r ? [`CSV ${c.metadata.namespace}/${c.metadata.name} (${r.reason})`] : [];
    });
    if (kept.length) return { go: false, refuse: `${why}, but policy keeps ${kept.join(', ')}: no automatic uninstall` };
    return { go: true, why: `${why} (autoUninstall)`, auto: [...new Set(failedLong.map((c) => `${c.metadata.namespace}/${c.metadata.name}`))].sort() };
  }
  return { go: false, refuse: `${why}. Annotate Operator ${o.operator.metadata.name} with ${MEDIC.uninstall}=true to remove its leftovers` };
}

/** What a recorded automatic uninstall was decided on: its CSVs (`<namespace>/<name>`) and their namespaces. */
interface UninstallRecord { csvs: ReadonlySet<string>; namespaces: ReadonlySet<string> }

/** The record's CSVs (MEDIC.uninstallCsvs), or undefined when it names none or one that is not `<namespace>/<name>`. */
function recordOf(op: KubeObject): UninstallRecord | undefined {
  const v = op.metadata.annotations?.[MEDIC.uninstallCsvs];
  if (typeof v !== 'string' || !v) return undefined;
  const csvs = v.split(',').map((e) => e.split('/'));
  if (!csvs.every((e) => e.length === 2 && isDnsLabel(e[0]) && isDnsSubdomain(e[1]))) return undefined;
  return { csvs: new Set(csvs.map((e) => e.join('/'))), namespaces: new Set(csvs.map((e) => e[0]!)) };
}

/** The namespace a part belongs to: its own, a Namespace object's name, a cluster-scoped object's olm.owner.namespace, or (not read) its ref's. */
function placedIn(c: Component): string | undefined {
  if (!c.live) return c.ref.namespace;
  if (c.live.metadata.namespace) return c.live.metadata.namespace;
  return c.ref.kind === 'Namespace' ? c.live.metadata.name : c.live.metadata.labels?.[LABEL_OWNER_NAMESPACE];
}

/** The CSVs (`<namespace>/<name>`) OLM marked a part as owned by: its CSV owner references, its olm.owner labels. */
function ownerCsvs(c: Component): string[] {
  const m = c.live?.metadata;
  if (!m) return [];
  const refs = m.namespace ? (m.ownerReferences ?? []).filter((r) => r.kind === 'ClusterServiceVersion').map((r) => `${m.namespace}/${r.name}`) : [];
  const l = m.labels ?? {};
  const labelled = l[LABEL_OWNER_KIND] === 'ClusterServiceVersion' && l[LABEL_OWNER] && l[LABEL_OWNER_NAMESPACE] ? [`${l[LABEL_OWNER_NAMESPACE]}/${l[LABEL_OWNER]}`] : [];
  return [...new Set([...refs, ...labelled])];
}

const where = (c: Component): string => `${c.ref.kind} ${c.ref.namespace ? `${c.ref.namespace}/` : ''}${c.ref.name}`;

export function planOperator(o: OperatorObserved, ctx: PlanContext): Plan {
  const op = o.operator;
  if (op.metadata.deletionTimestamp) return { kind: 'noop', reason: 'Operator is being deleted' };
  // Until OLM has written status.components, "no refs" means "not known yet", not "nothing left".
  if (!o.labelKey) return { kind: 'noop', reason: 'OLM has not reported the components (label selector) yet' };
  const key = o.labelKey;
  const gate = uninstallGate(o, ctx);
  if (!gate.go) {
    if (gate.refuse) return { kind: 'refuse', reason: 'UninstallLeftoversKept', note: gate.refuse, regarding: target(op) };
    if (gate.cancel) {
      // The Operator object is for a look at all of it (as the start is): a scoped sweep leaves it.
      if (o.scope) return { kind: 'noop', reason: `the automatic uninstall of ${op.metadata.name} is to be taken back (${gate.cancel}) by a look at all of it` };
      return {
        kind: 'act',
        summary: `automatic uninstall of operator ${op.metadata.name} cancelled: ${gate.cancel}`,
        actions: [{
          verb: 'patch',
          target: { ...target(op), resourceVersion: op.metadata.resourceVersion! },
          patch: { metadata: { annotations: { [MEDIC.uninstall]: null, [MEDIC.uninstallCsvs]: null } } },
          reason: 'AutoUninstallCancelled',
          note: `Removed ${MEDIC.uninstall}, olm-medic's record of an automatic uninstall: ${gate.cancel}. Nothing more is removed.`,
        }],
      };
    }
    return { kind: 'noop', reason: gate.noop ?? 'not requested' };
  }
  // The CSV is deleted first, and with it the evidence (a long-Failed CSV) an automatic decision
  // rests on: record the decision on the Operator first (`auto`), so the next rounds carry on — and
  // take it back if a Subscription or a CSV that is not long Failed appears.
  // A sweep of one namespace acts on that namespace's part only (red team 29a, S3); where the
  // Operator has parts elsewhere, it and they are left to an unscoped look.
  const inScopeNs = (c: Component): boolean => {
    if (!o.scope) return true;
    const ns = c.live ? c.live.metadata.namespace : c.ref.namespace;
    return (ns ?? c.live?.metadata.labels?.[LABEL_OWNER_NAMESPACE]) === o.scope;
  };
  if (gate.auto) {
    if (o.components.some((c) => !inScopeNs(c))) return { kind: 'noop', reason: `an automatic uninstall of ${op.metadata.name}, which has parts outside ${o.scope}, is decided by a look at all of it` };
    return {
      kind: 'act',
      summary: `automatic uninstall of operator ${op.metadata.name} started`,
      requeueAfterSeconds: 1,
      actions: [{
        verb: 'patch',
        target: { ...target(op), resourceVersion: op.metadata.resourceVersion! },
        patch: { metadata: { annotations: { [MEDIC.uninstall]: 'auto', [MEDIC.uninstallCsvs]: gate.auto.join(',') } } },
        reason: 'AutoUninstallStarted',
        note: `Annotated ${MEDIC.uninstall}=auto (${MEDIC.uninstallCsvs}=${gate.auto.join(',')}): ${gate.why}. olm-medic now removes the operator's leftovers (and stops if a Subscription or a healthy CSV appears).`,
      }],
    };
  }
  // Only the namespaces no Subscription claims any more are uninstalled. Keys that truncate to the
  // same 63 characters share one Operator object (§2.2): another install's parts stay untouched.
  // And only namespaces the key can name (`<pkg>.<ns>`, maybe truncated): an object elsewhere that
  // carries the label is not this operator's to touch.
  const subscribed = new Set(o.claimants.map((s) => s.metadata.namespace!));
  // A recorded automatic uninstall: only the namespaces of the CSVs it was decided on, and only
  // parts no other CSV is named owner of (red team 44: keys of two installs collide, in one namespace too).
  const only = gate.only;
  const uninstalled = (ns: string | undefined): boolean => ns !== undefined && namespaceFitsKey(key, ns) && !subscribed.has(ns) && (!only || only.namespaces.has(ns));
  // An owner mark is the record's CSV, or a live CSV that uses the part (then it only loses the key:
  // red team 45, S1, a ServiceAccount OLM merged owners on). A CSV itself must be one of the record's.
  const marksOk = (c: Component): boolean => ownerCsvs(c).every((n) => only!.csvs.has(n) || (c.userCsvs ?? []).includes(n));
  // A namespace holding a part marked as another (gone) CSV's holds another install: its unmarked
  // parts cannot be told apart there, and stay.
  const contested = new Set(only ? o.components.filter((c) => !marksOk(c)).flatMap((c) => placedIn(c) ?? []) : []);
  const decidedOn = (c: Component): boolean => {
    if (!only) return true;
    if (c.ref.kind === 'ClusterServiceVersion') return c.live !== undefined && only.csvs.has(`${c.live.metadata.namespace}/${c.live.metadata.name}`);
    if (!marksOk(c)) return false;
    const ns = placedIn(c);
    return ownerCsvs(c).length > 0 || ns === undefined || !contested.has(ns);
  };
  // Under a record, what carries the key outside it keeps the Operator object (OLM would recreate it).
  const outside = only ? o.components.filter((c) => {
    const ns = placedIn(c);
    return (c.unreadable !== undefined || c.live?.metadata.labels?.[key] !== undefined) && ns !== undefined && !subscribed.has(ns) && (!only.namespaces.has(ns) || !decidedOn(c));
  }) : [];
  const ours = (c: Component): boolean => {
    if (!decidedOn(c)) return false;
    // Where the object lives, as the apiserver says (a ref's namespace is only a claim).
    const ns = c.live ? c.live.metadata.namespace : c.ref.namespace;
    if (ns) return uninstalled(ns);
    const ownerNs = c.live?.metadata.labels?.[LABEL_OWNER_NAMESPACE];
    // cluster-scoped: attributed by its olm.owner.namespace label; without one, only the kinds kept
    // anyway — and under a record only once nothing outside it is left (the Operator object stays
    // while that carries the key: no label need come off for it yet). A Namespace object is outside
    // unless it is one of the record's (red team 44, H2: another install's was unlabelled).
    if (ownerNs === undefined) return subscribed.size === 0 && !DELETABLE.has(c.ref.kind) && !outside.length;
    // Attributed by olm.owner.namespace only when its owner is PROVEN gone (observe could look it up).
    return uninstalled(ownerNs) && c.ownerCsvLive === false;
  };
  const mine = (c: Component): boolean => ours(c) && inScopeNs(c);
  const elsewhere = o.components.filter((c) => ours(c) && !inScopeNs(c));
  const inScope = o.components.filter(mine);
  const labelled = inScope.filter((c) => c.live && c.live.metadata.labels?.[key] !== undefined);
  const reported = inScope.filter((c) => c.unreadable);
  const sharedC = (c: Component): boolean => hasOtherComponentKey(c.live!, key) || (c.usedBy?.length ?? 0) > 0;
  const toDelete = labelled.filter((c) => DELETABLE.has(c.ref.kind) && !sharedC(c));
  const toUnlabel = labelled.filter((c) => !toDelete.includes(c) && PATCHABLE.has(c.ref.kind));
  const stuck = labelled.filter((c) => !toDelete.includes(c) && !toUnlabel.includes(c));
  const regarding = target(op);
  // A cluster-scoped component is this install's by its olm.owner.namespace: guarded by that
  // namespace, as the orphan sweep is (a protected namespace's leftovers are never removed; red team 12, P1).
  const ownerGuards = (c: Component): Guard[] => {
    const ownerNs = c.live!.metadata.namespace ? undefined : c.live!.metadata.labels?.[LABEL_OWNER_NAMESPACE];
    return ownerNs ? [{ apiVersion: 'v1', kind: 'Namespace', name: ownerNs }] : [];
  };
  const gone = (c: Component): Action => {
    const guards = ownerGuards(c);
    return del(c.live!, 'OperatorLeftoverDeleted', `Deleted ${where(c)} of uninstalled operator ${op.metadata.name}: ${gate.why}.`, { regarding, optional: true, ...(guards.length ? { guards } : {}) });
  };

  const now = ctx.now.getTime() / 1000;
  // A leftover policy keeps (opted out, or of a protected namespace) will never go: no stage waits
  // for it. Its delete rides along with every acting plan, refused by the executor with a Warning
  // Event; once the rest is gone the uninstall stops there (the Operator object stays).
  // So does one whose delete the apiserver refused for good lately, in this very state (admission,
  // narrowed RBAC: its WriteRefused Event was recorded then; red team 51, H2).
  const refusedNow = (a: Action): boolean => ctx.refusedWrite?.(writeKey(a), a.target.uid, a.target.resourceVersion) !== undefined;
  const held = toDelete.filter((c) => !c.live!.metadata.deletionTimestamp && (policyRefusal(ctx.policy, gone(c)) || refusedNow(gone(c))));
  const removable = toDelete.filter((c) => !held.includes(c));
  const heldActions = held.map(gone);
  // Staged: one kind alone, and nothing after it until its objects are gone.
  const stage = (kind: string, what: string, after: number): Plan | undefined => {
    const all = removable.filter((c) => c.ref.kind === kind);
    const pending = all.filter((c) => !c.live!.metadata.deletionTimestamp);
    if (pending.length) return { kind: 'act', summary: `removing the ${what} of operator ${op.metadata.name}`, requeueAfterSeconds: after, actions: [...pending.map(gone), ...heldActions] };
    if (all.length) return { kind: 'requeue', afterSeconds: deletingWait(all.map((c) => c.live!), now, after), reason: `waiting for the ${what} to finish deleting` };
    return undefined;
  };
  // InstallPlans first: catalog-operator re-executes a plan until it records it Complete, and a
  // plan still Installing re-creates a CSV deleted under it (ExecutePlan; seen on real OLM v0.25.0,
  // whose status write lost a conflict and retried after the CSV was gone: test/olm/uninstall.test.ts).
  // Then the CSVs: while a CSV exists OLM recreates its OperatorConditions and deployments, so
  // deleting those earlier fights OLM.
  const installPlans = stage('InstallPlan', 'InstallPlan(s)', 1);
  if (installPlans) return installPlans;
  // A plan that is not ours to delete (not labelled, not listed) but still Installing would re-create
  // the CSV too: wait until OLM completes it or GC removes it (its Subscription is gone).
  const csvNames = new Set(removable.filter((c) => c.ref.kind === 'ClusterServiceVersion' && !c.live!.metadata.deletionTimestamp).map((c) => `${c.ref.namespace}/${c.ref.name}`));
  const blocking = (o.unfinishedPlans ?? []).filter((p) => csvNames.has(`${p.namespace}/${p.csv}`));
  if (blocking.length) return { kind: 'requeue', afterSeconds: backOff(blocking.map((p) => p.since), now, 2), reason: `waiting for InstallPlan ${blocking.map((p) => `${p.namespace}/${p.plan} (${p.phase})`).join(', ')} to finish: OLM would re-create the CSV it lists` };
  const staged = stage('ClusterServiceVersion', 'CSV(s)', 2);
  if (staged) return staged;
  // A CSV policy keeps stays, and OLM recreates what it owns: nothing after it is deleted (below).
  const keptCsvs = held.filter((c) => c.ref.kind === 'ClusterServiceVersion');
  const pending = keptCsvs.length ? [] : removable.filter((c) => !c.live!.metadata.deletionTimestamp);
  if (pending.length) return { kind: 'act', summary: `removing ${pending.length} leftover(s) of operator ${op.metadata.name}`, requeueAfterSeconds: 2, actions: [...pending.map(gone), ...heldActions] };
  if (removable.length && !keptCsvs.length) return { kind: 'requeue', afterSeconds: deletingWait(removable.map((c) => c.live!), now, 2), reason: 'waiting for leftovers to finish deleting' };
  // What we keep (CRDs, namespaces, objects another operator shares) must lose THIS operator's
  // label, or OLM recreates the Operator object (§5). Guarded as a delete is: a cluster-scoped one
  // attributed to a protected namespace keeps its label, and with it the Operator object (red team 46, P1).
  const unlabel = (c: Component): Action => {
    const guards = ownerGuards(c);
    return {
      verb: 'patch' as const,
      target: { ...target(c.live!), resourceVersion: c.live!.metadata.resourceVersion! },
      patch: { metadata: { labels: { [key]: null } } },
      regarding,
      optional: true,
      ...(guards.length ? { guards } : {}),
      reason: 'ComponentLabelRemoved',
      note: sharedC(c)
        ? `Kept ${where(c)}: ${c.usedBy?.length ? `still used by ${c.usedBy.join(', ')}` : "another operator's component label is on it too"}; removed only ${key}.`
        : `Kept ${where(c)} (olm-medic never deletes ${c.ref.kind}s) and removed label ${key} so OLM does not recreate Operator ${op.metadata.name}.`,
    };
  };
  const heldLabels = toUnlabel.filter((c) => policyRefusal(ctx.policy, unlabel(c)) || refusedNow(unlabel(c)));
  const unlabelled = toUnlabel.filter((c) => !heldLabels.includes(c));
  const gateWhy = gate.why;
  /** Beside a plan of kept objects only: the refusal that says what else keeps the Operator object. */
  const besideRest = (p: Plan, removedOthers = true): Plan => {
    const rest = finish(removedOthers);
    return rest.kind === 'refuse' ? { ...p, explained: [{ kind: 'refuse', reason: rest.reason, note: rest.note, regarding: rest.regarding }] } : p;
  };
  // A kept CSV: the rest of the operator stays with it; what else carries the key is said beside
  // its Warning (red team 51, H1: a Secret went unsaid).
  if (keptCsvs.length) {
    return besideRest({ kind: 'act', summary: `kept ${keptCsvs.map(where).join(', ')} (policy, or refused by the apiserver), and so the rest of operator ${op.metadata.name} (OLM would recreate it)`, actions: heldActions }, false);
  }
  // Only what policy keeps is left: refused (Warning Events), no re-check (nothing would change);
  // what else keeps the Operator object (a Secret, parts not attributable) is said beside them
  // (red team 50: only the kept leftover's Warning was recorded).
  if (heldActions.length) {
    return besideRest({ kind: 'act', summary: `kept ${heldActions.length} leftover(s) of operator ${op.metadata.name} (policy, or refused by the apiserver)`, actions: heldActions });
  }
  if (unlabelled.length) {
    return { kind: 'act', summary: `unlabelled ${unlabelled.length} kept object(s) of operator ${op.metadata.name}`, requeueAfterSeconds: 2, actions: [...unlabelled, ...heldLabels].map(unlabel) };
  }
  // Only labels policy keeps are left: refused (Warning Events), no re-check; the Operator object
  // stays, and what else keeps it (a Subscription, parts not attributable) is said beside them.
  if (heldLabels.length) return besideRest({ kind: 'act', summary: `kept the label on ${heldLabels.length} object(s) of operator ${op.metadata.name} (policy, or refused by the apiserver)`, actions: heldLabels.map(unlabel) });
  return finish();

  function finish(removedOthers = true): Plan {
    if (elsewhere.length || (o.scope && subscribed.size)) {
      // The rest (other namespaces' parts, the Operator object) is for an unscoped look.
      return { kind: 'noop', reason: `the part of ${op.metadata.name} in ${o.scope} is uninstalled; left to a look at all of it: ${elsewhere.length ? elsewhere.map(where).join(', ') : `the parts ${[...subscribed].join(', ')} still use`}` };
    }
    // A part not read (a Secret, a kind olm-medic does not handle) still carries the key (OLM lists
    // only labelled objects): it keeps the Operator object too (red team 44, H1).
    const foreign = o.components.filter((c) => !mine(c) && (c.unreadable !== undefined || c.live?.metadata.labels?.[key] !== undefined) && !(c.ref.namespace && subscribed.has(c.ref.namespace)));
    // ... and so do the labels policy keeps (red team 49, N1: the refusal beside their Warnings
    // promised the Operator object's removal once the others were dealt with).
    const keptOthers = [...stuck.map(where), ...reported.map((c) => `${where(c)} (${c.unreadable})`), ...foreign.map((c) => `${where(c)} (not attributable to this install)`)];
    const keptHere = [
      ...keptOthers,
      ...held.map((c) => `${where(c)} (${refusedNow(gone(c)) ? 'its delete refused by the apiserver' : 'kept by policy: opted out, or a protected namespace'})`),
      ...heldLabels.map((c) => `${where(c)} (${refusedNow(unlabel(c)) ? 'its unlabel refused by the apiserver' : 'its label kept by policy: opted out, or a protected namespace'})`),
    ];
    if (subscribed.size) {
      const claim = o.claimants.map((s) => `${s.metadata.namespace}/${s.metadata.name}`).join(', ');
      return {
        kind: 'refuse',
        reason: 'UninstallLeftoversKept',
        note: `Subscription ${claim} still uses ${key}: its components (in ${[...subscribed].join(', ')}) and the Operator object are kept${keptHere.length ? `; also kept: ${keptHere.join(', ')}` : ''}. Delete the Subscription first to uninstall it.`,
        regarding,
      };
    }
    // (Labels policy keeps alone are said by their own Warning Events.)
    if (keptOthers.length) {
      return {
        kind: 'refuse',
        reason: 'UninstallSecretsKept',
        note: `${removedOthers ? `Removed the other leftovers of ${op.metadata.name}` : `The leftovers of ${op.metadata.name} stay with the CSV kept`}; ${keptHere.join(', ')} still carry ${key}. olm-medic does not change these (it never reads Secrets, and it touches nothing it cannot read or attribute to this install, or that policy keeps): delete them or remove the label, and the Operator object will be removed.`,
        regarding,
      };
    }
    return act([del(op, 'OperatorDeleted', `All leftovers of ${op.metadata.name} are gone (${gateWhy}); deleted the Operator object.`)], `operator ${op.metadata.name} uninstalled`);
  }
}
