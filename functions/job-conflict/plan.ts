/**
 * job-conflict: the pure decision. A bundle-unpack Job (olm-facts §1) that is Failed, invisible to
 * OLM's label-filtered cache, or owned by a missing/recreated ConfigMap blocks every Subscription
 * that needs that bundle. Delete it (and its empty ConfigMap when nothing in flight needs it), then
 * nudge the stuck Subscriptions so OLM resolves again at once. Defer where OLM cleans up itself.
 */
import type { Action, Aside, Guard, Plan, PlanContext, Target } from '../../shared/core/types.js';
import { soonest, target } from '../../shared/core/types.js';
import { objectRefusal, policyRefusal } from '../../shared/core/policy.js';
import type { KubeObject, OwnerReference } from '../../shared/kube/types.js';
import { ANN_UNPACK_RETRY, LABEL_MANAGED, LABEL_UNPACK_REF, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { condition, isTrue, isUnpackJobName, jobBelongsToConfigMap, latestOf, managedWriteTime, seconds } from '../../shared/olm/olm.js';

export interface JobFacts {
  job: KubeObject;
  /** The owner ConfigMap as it is now (undefined: gone). */
  configMap?: KubeObject;
  /** An InstallPlan in RequiresApproval/Installing still points at the ConfigMap (§1.6). */
  configMapInUse: boolean;
}

export interface Observed {
  /** The catalog namespace the jobs live in. */
  namespace: string;
  /** CatalogSources in that namespace (identity check: OLM unpacks only there). */
  catalogSources: string[];
  /** The CatalogSource objects (their opt-out guards the jobs they own through the ConfigMap). */
  catalogSourceObjects?: KubeObject[];
  /**
   * Evidence that this OLM (v0.26+) labels its unpack Jobs, so an unlabelled job is invisible to it:
   * a catalog registry pod or another unpack Job in the namespace carrying OLM's labels. NOT the
   * ConfigMap's olm.managed label: OLM v0.19-v0.25 label the ConfigMap and not the Job (olm-facts §1.2).
   */
  olmLabelsObjects: boolean;
  /**
   * OLM <= v0.24 unpacks after the InstallPlan exists and keeps a failed lookup in it: InstallPlans
   * (ns/name) whose status.bundleLookups failed on a bundle, by unpack hash (§1.2, §1.6).
   */
  legacyFailedPlans?: Record<string, string[]>;
  jobs: JobFacts[];
  /** Subscriptions (any namespace) resolving from this catalog namespace. */
  subscribers: KubeObject[];
  /** Subscriber namespaces whose single OperatorGroup sets bundle-unpack-min-retry-interval (§1.4), with the interval in seconds. */
  retryIntervals: Record<string, number>;
  /**
   * Subscriber namespaces OLM does not resolve at all (not exactly one OperatorGroup, or a
   * bundle-unpack-min-retry-interval or bundle-unpack-timeout it cannot parse:
   * syncResolvingNamespace returns before any status write), so their Subscriptions' unpack
   * conditions are whatever OLM last wrote (red team 24 W3, 25 T1). They record no retry interval.
   */
  unresolved?: string[];
  /**
   * Subscriber namespaces that also hold a Subscription resolving from another catalog namespace.
   * OLM writes BundleUnpackFailed on every Subscription of a namespace whose resolution failed,
   * whichever catalog's unpack failed (catalog/operator.go v0.46.0:1399-1467).
   */
  foreignNamespaces?: string[];
  /** The Subscription whose event this is (Subscription-triggered checks). */
  subscription?: KubeObject;
  /** Any Failed Job with an unpack-hash name exists in the namespace, ours or a look-alike. */
  failedUnpackNamedJob?: boolean;
  /**
   * Every Job of the namespace that names an owner, whatever its name (read when a ConfigMap may be
   * deleted): the garbage collector deletes a ConfigMap's dependents by uid, look-alikes included.
   */
  dependents?: { uid: string; owners: string[]; terminating: boolean }[];
}

export const defaults = {
  /** Extra time past a deadline or TTL before acting where OLM or Kubernetes should have. */
  marginSeconds: 60,
};

interface JobSpec {
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  suspend?: boolean;
}
interface JobStatus {
  active?: number;
  startTime?: string;
  completionTime?: string;
}

/** The ConfigMap ownerReference that makes a Job an unpack job. */
export function configMapOwner(job: KubeObject): OwnerReference | undefined {
  return job.metadata.ownerReferences?.find((o) => o.kind === 'ConfigMap' && o.apiVersion === 'v1' && jobBelongsToConfigMap(job.metadata.name, o.name));
}

/** Why this job is not provably an OLM unpack job (undefined: it is). §1.9 identity checks. */
export function identityProblem(job: KubeObject, catalogSources?: string[]): string | undefined {
  if (!isUnpackJobName(job.metadata.name)) return 'name is not an unpack hash';
  const owner = configMapOwner(job);
  if (!owner) return 'no ConfigMap owner named by the same hash';
  const ref = job.metadata.labels?.[LABEL_UNPACK_REF];
  if (ref !== undefined && ref !== owner.name) return `label ${LABEL_UNPACK_REF}=${ref} does not match owner ${owner.name}`;
  if (catalogSources && catalogSources.length === 0) return `namespace ${job.metadata.namespace} has no CatalogSource`;
  return undefined;
}

export type JobState =
  | { kind: 'failed'; why: string; finishedAt?: number }
  | { kind: 'complete'; finishedAt?: number }
  | { kind: 'suspended' }
  | { kind: 'running'; deadlineAt?: number };

export function jobState(job: KubeObject): JobState {
  // The Job controller stamps its times with kube-controller-manager's clock, and counts the Job's
  // deadline and TTL on that same clock. Against the apiserver's (olm-medic's) they are bounded by
  // times the apiserver stamped: the Job's creation, and its last status write (red team 32: a
  // controller-manager 10 min behind made a running Job look past its deadline, and cut the TTL short).
  const created = seconds(job.metadata.creationTimestamp);
  const finished = (t: string | undefined): number | undefined => (t === undefined ? undefined : latestOf(seconds(t), created, managedWriteTime(job, 'status')));
  const failed = condition(job, 'Failed');
  if (failed?.status === 'True') {
    return { kind: 'failed', why: `${failed.reason ?? 'Failed'}: ${failed.message ?? ''}`.trim(), finishedAt: finished(failed.lastTransitionTime) };
  }
  if (isTrue(job, 'Complete')) {
    const st = job.status as JobStatus | undefined;
    return { kind: 'complete', finishedAt: finished(st?.completionTime ?? condition(job, 'Complete')?.lastTransitionTime) };
  }
  const spec = job.spec as JobSpec | undefined;
  const st = job.status as JobStatus | undefined;
  // A suspended Job (e.g. queued by Kueue) has not started; its deadline counts from
  // status.startTime only (the job controller resets it on resume), never from creation.
  if (spec?.suspend === true) return { kind: 'suspended' };
  // A resumed Job's startTime is reset at the resume, long after its creation: its last status
  // write (apiserver-stamped) bounds it too (red team 37).
  const started = st?.startTime === undefined ? undefined : latestOf(seconds(st.startTime), created, managedWriteTime(job, 'status'));
  const deadline = spec?.activeDeadlineSeconds;
  return { kind: 'running', ...(deadline && started !== undefined ? { deadlineAt: started + deadline } : {}) };
}

/** What makes the job worth deleting, if anything. */
function staleness(f: JobFacts, o: Observed): { invisible?: string; staleOwner?: string } {
  const labels = f.job.metadata.labels ?? {};
  const missing = [
    o.olmLabelsObjects && labels[LABEL_MANAGED] !== 'true' && `${LABEL_MANAGED}=true`,
    o.olmLabelsObjects && labels[LABEL_UNPACK_REF] === undefined && LABEL_UNPACK_REF,
  ].filter(Boolean);
  const owner = configMapOwner(f.job)!;
  const staleOwner = !f.configMap
    ? `its owner ConfigMap ${owner.name} is gone`
    : f.configMap.metadata.uid !== owner.uid
      ? `its owner ConfigMap ${owner.name} was recreated (uid ${f.configMap.metadata.uid} != ${owner.uid})`
      : undefined;
  return {
    ...(missing.length ? { invisible: `it lacks ${missing.join(' and ')}, so OLM's cache cannot see it and OLM loops on "job already exists"` } : {}),
    ...(staleOwner ? { staleOwner } : {}),
  };
}

/**
 * The owners a finding about this Job hangs on (their opt-out and protection apply to acting on it):
 * its ConfigMap and the catalogs that own it. Without the ConfigMap, which catalog the Job is for is
 * unknown (red team 13, J3): the catalogs the stuck Subscriptions it would heal resolve from guard it
 * — one opted-out catalog of a shared namespace does not hold back the others' (red team 14, J5) —
 * or, if none names one, all of them.
 */
function jobGuards(f: JobFacts, o: Observed): { catalogs: KubeObject[]; guards: Guard[] } {
  const cm = f.configMap;
  const all = o.catalogSourceObjects ?? [];
  const namedByStuck = (): KubeObject[] => {
    const named = new Set(o.subscribers.filter(isStuckOnUnpack).map((s) => (s.spec as { source?: string } | undefined)?.source));
    const guarding = all.filter((c) => named.has(c.metadata.name));
    return guarding.length ? guarding : all;
  };
  const catalogs = cm ? all.filter((c) => cm.metadata.ownerReferences?.some((r) => r.kind === 'CatalogSource' && r.uid === c.metadata.uid)) : namedByStuck();
  return { catalogs, guards: [...(cm ? [target(cm)] : []), ...catalogs.map(target)] };
}

/**
 * Subscriber namespaces where a Subscription resolves from another catalog than the Job's (the
 * CatalogSource owning its ConfigMap; unknown: any namespace whose Subscriptions name two catalogs),
 * in this catalog namespace or another.
 */
function otherCatalogNamespaces(f: JobFacts, o: Observed): Set<string> {
  const mixed = new Set(o.foreignNamespaces ?? []);
  const source = (s: KubeObject): string | undefined => (s.spec as { source?: string } | undefined)?.source;
  const owners = new Set((f.configMap?.metadata.ownerReferences ?? []).filter((r) => r.kind === 'CatalogSource').map((r) => r.uid));
  const jobCatalogs = new Set((o.catalogSourceObjects ?? []).filter((c) => owners.has(c.metadata.uid ?? '')).map((c) => c.metadata.name));
  if (jobCatalogs.size) {
    for (const s of o.subscribers) if (!jobCatalogs.has(source(s) ?? '')) mixed.add(s.metadata.namespace!);
  } else {
    const seen = new Map<string, string | undefined>();
    for (const s of o.subscribers) {
      const ns = s.metadata.namespace!;
      if (seen.has(ns) && seen.get(ns) !== source(s)) mixed.add(ns);
      seen.set(ns, source(s));
    }
  }
  return mixed;
}

type JobDecision =
  | { act: Action[] }
  | { defer: string; requeueAfterSeconds?: number }
  /** OLM retries itself (retry interval) but only when it next resolves: nudge these namespaces' stuck Subscriptions not nudged since `since`. */
  | { nudge: string; namespaces: string[]; since: number; guards: Guard[] }
  | { refuse: string; reason: string; job: KubeObject }
  | { wait: number; why: string }
  | { skip: string };

export function decideJob(f: JobFacts, o: Observed, ctx: PlanContext): JobDecision {
  const now = ctx.now.getTime() / 1000;
  const margin = Number(ctx.options.marginSeconds ?? defaults.marginSeconds);
  const problem = identityProblem(f.job, o.catalogSources);
  if (problem) return { skip: `not an OLM unpack job: ${problem}` };
  // §1.9: the owner ConfigMap, if it exists, is OLM's only if a CatalogSource owns it.
  if (f.configMap && !f.configMap.metadata.ownerReferences?.some((r) => r.kind === 'CatalogSource' && r.apiVersion === V1ALPHA1)) {
    return { skip: `not an OLM unpack job: its ConfigMap ${f.configMap.metadata.name} is not owned by a CatalogSource` };
  }
  if (f.job.metadata.deletionTimestamp) return { skip: 'already being deleted' };
  const state = jobState(f.job);
  if (state.kind === 'suspended') return { skip: 'suspended (not started); never delete a suspended job' };
  const { invisible, staleOwner } = staleness(f, o);

  if (state.kind === 'running') {
    if (state.deadlineAt === undefined) return { skip: 'running with no deadline; never delete a running job' };
    if (now < state.deadlineAt + margin) return { wait: Math.ceil(state.deadlineAt + margin - now), why: 'running within its deadline' };
  }
  if (state.kind === 'complete' && !invisible && !staleOwner) return { skip: 'complete and visible to OLM' };

  const why = state.kind === 'failed' ? `it failed (${state.why})` : state.kind === 'running' ? 'it is past its deadline and still not finished' : undefined;
  const reasons = [why, invisible, staleOwner].filter(Boolean) as string[];
  if (reasons.length === 0) return { skip: 'nothing stale' };

  // OLM's own fixes for failed jobs: the retry-interval annotation (v0.26+) and the job TTL (v0.43+).
  if (state.kind === 'failed' && !invisible && !staleOwner) {
    const owner = configMapOwner(f.job)!;
    const legacy = o.legacyFailedPlans?.[owner.name];
    if (legacy?.length) {
      return {
        refuse: `OLM <= v0.24 keeps the failed unpack of this bundle in InstallPlan ${legacy.join(', ')}; deleting Job ${f.job.metadata.name} alone does not make it retry. OLM's documented steps: back up the Subscription; delete the failing InstallPlan, the CSV and the Subscription; delete the failing unpack Job and its ConfigMap ${owner.name} in ${o.namespace}; re-apply the Subscription.`,
        reason: 'UnpackRetryNeedsManualSteps',
        job: f.job,
      };
    }
    // OLM retries only while resolving a namespace that needs the bundle, reading that namespace's
    // OperatorGroup (§1.4): an annotation on a subscriber namespace that is not waiting retries nothing.
    const waiting = new Set(o.subscribers.filter(blockedOnUnpack).map((s) => s.metadata.namespace));
    const retrying = Object.keys(o.retryIntervals).filter((ns) => waiting.has(ns));
    // A waiting namespace without an interval gets no retry from OLM (it retries per namespace it
    // resolves, with that namespace's interval): then the Job is deleted as for no interval at all.
    // Only a namespace whose Subscription OLM marked as unpacking counts (OLM sets those conditions
    // only while resolving it): one it never resolves (its resolution fails, two OperatorGroups, a
    // malformed interval) waits on no unpack and must not cancel another's interval (red team 23, W1).
    // OLM's conditions count only before a plan for the next CSV exists (they linger on a Subscription
    // a resolution updated: red team 25, L1); an upgrade the Job blocks stays AtLatestKnown (U1).
    // Nor does one whose condition another catalog's failed unpack may have written: OLM marks every
    // Subscription of the namespace it failed to resolve, and an installed Subscription with nothing to
    // upgrade (AtLatestKnown) then looks like an upgrade this Job blocks (red team 26, C1). Such a
    // namespace waits behind the intervals instead; OLM's retry Job for them unblocks it too.
    const mixed = otherCatalogNamespaces(f, o);
    const unretried = [...new Set(o.subscribers.filter(marksUnpackWait).map((s) => s.metadata.namespace!))].filter((ns) => !(ns in o.retryIntervals) && !(o.unresolved ?? []).includes(ns) && !mixed.has(ns));
    if (retrying.length && unretried.length === 0) {
      const failedAt = state.finishedAt ?? now;
      const due = failedAt + Math.min(...retrying.map((ns) => o.retryIntervals[ns]!));
      // OLM creates the retry job itself, but only when it next resolves (its resync: up to ~18 min):
      // once the interval has passed, make it resolve now.
      if (now < due) return { defer: `OLM retries failed unpacks itself: ${retrying.join(', ')} set ${ANN_UNPACK_RETRY}; olm-medic nudges the Subscriptions when the interval has passed`, requeueAfterSeconds: Math.ceil(due - now) };
      // `since` is when the interval passed: a nudge before it (another Job's, inside the interval)
      // retried nothing and does not count (red team 26, N2/R2).
      // Guarded like the delete it stands in for, and by the Job itself: an opted-out or protected
      // Job, ConfigMap or catalog is not acted on by a nudge either (red team 29b, G1).
      return { nudge: `OLM retries failed unpacks itself (${retrying.join(', ')} set ${ANN_UNPACK_RETRY}) but only when it next resolves`, namespaces: retrying, since: due, guards: [target(f.job), ...jobGuards(f, o).guards] };
    }
    const ttl = (f.job.spec as JobSpec | undefined)?.ttlSecondsAfterFinished;
    if (ttl !== undefined && state.finishedAt !== undefined && now < state.finishedAt + ttl + margin) {
      return { defer: `the job has ttlSecondsAfterFinished=${ttl}; Kubernetes removes it and OLM (v0.43+) retries`, requeueAfterSeconds: Math.ceil(state.finishedAt + ttl + margin - now) };
    }
  }

  const job = target(f.job);
  const cm = f.configMap;
  const owner = configMapOwner(f.job)!;
  // The opt-out (and protection) of the owners this finding hangs on applies too (constants.ts).
  const { catalogs, guards } = jobGuards(f, o);
  const actions: Action[] = [
    { verb: 'delete', target: job, guards, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: `Deleted bundle-unpack Job ${job.name}: ${reasons.join('; ')}.` },
  ];
  if (state.kind === 'failed' && cm && cm.metadata.uid === owner.uid && isEmpty(cm) && !f.configMapInUse) {
    actions.push({
      verb: 'delete',
      target: target(cm),
      optional: true,
      guards: catalogs.map(target),
      propagationPolicy: 'Background',
      reason: 'UnpackConfigMapDeleted',
      note: `Deleted the empty unpack ConfigMap ${cm.metadata.name} of failed Job ${job.name}, as OLM's troubleshooting guide advises; no pending InstallPlan uses it.`,
    });
  }
  return { act: actions };
}

function isEmpty(cm: KubeObject): boolean {
  const d = cm as { data?: object; binaryData?: object };
  return Object.keys(d.data ?? {}).length === 0 && Object.keys(d.binaryData ?? {}).length === 0;
}

/**
 * A Subscription waiting on an unpack: failed, unpacking, or never got an InstallPlan (§1.6).
 * Real OLM (v0.28) leaves BundleUnpacking=True on Subscriptions that are AtLatestKnown: not stuck.
 */
export function isStuckOnUnpack(sub: KubeObject): boolean {
  if (sub.metadata.deletionTimestamp) return false;
  const st = sub.status as { installPlanRef?: unknown; currentCSV?: string; state?: string } | undefined;
  if (st?.state === 'AtLatestKnown') return false;
  return unpackConditioned(sub) || (!st?.installPlanRef && !st?.currentCSV);
}

/**
 * Waiting on an unpack as the retry-interval decision sees it: stuck (isStuckOnUnpack), or an
 * installed CSV's upgrade the failed Job blocks (OLM keeps it AtLatestKnown, with BundleUnpackFailed,
 * until a plan exists: red team 24 U1, 25 U2).
 */
export function blockedOnUnpack(sub: KubeObject): boolean {
  if (isStuckOnUnpack(sub)) return true;
  const st = sub.status as { state?: string } | undefined;
  return !sub.metadata.deletionTimestamp && st?.state === 'AtLatestKnown' && isTrue(sub, 'BundleUnpackFailed');
}

/**
 * OLM's own conditions say the Subscription waits on an unpack, in a state where they still mean it:
 * before a plan for the next CSV exists (no state, UpgradeAvailable) or, for BundleUnpackFailed, an
 * installed CSV's blocked upgrade (AtLatestKnown). Not once UpgradePending/UpgradeFailed: OLM leaves
 * both conditions on a Subscription its resolution updated (red team 13 J2, 25 L1).
 */
function marksUnpackWait(sub: KubeObject): boolean {
  return !sub.metadata.deletionTimestamp && unpackConditioned(sub, (state) => resolving(state) || state === 'AtLatestKnown');
}

/** No plan for the next CSV exists yet: no state, or UpgradeAvailable. */
const resolving = (state: string | undefined): boolean => !state || state === 'UpgradeAvailable';

/**
 * OLM itself says the Subscription waits on an unpack: BundleUnpackFailed in a state `failedIn`
 * accepts, or BundleUnpacking while resolving. BundleUnpacking lingers after resolution too: it
 * counts only before a plan for the next CSV exists, not once it is UpgradePending/UpgradeFailed
 * (red team 13, J2).
 */
function unpackConditioned(sub: KubeObject, failedIn: (state: string | undefined) => boolean = () => true): boolean {
  const state = (sub.status as { state?: string } | undefined)?.state;
  return (isTrue(sub, 'BundleUnpackFailed') && failedIn(state)) || (resolving(state) && isTrue(sub, 'BundleUnpacking'));
}

/**
 * The catalog a Subscription resolves from, as a guard (or, not found among the catalog namespace's,
 * that namespace): an opted-out catalog's Subscriptions are never nudged, whatever Job's finding the
 * nudge follows (red team 30, N1: one of a sibling catalog's failed Job was).
 */
function catalogGuards(sub: KubeObject, o: Observed): Guard[] {
  const source = (sub.spec as { source?: string } | undefined)?.source;
  const catalog = (o.catalogSourceObjects ?? []).filter((c) => c.metadata.name === source);
  return catalog.length ? catalog.map(target) : [{ apiVersion: 'v1', kind: 'Namespace', name: o.namespace }];
}

function nudge(sub: KubeObject, now: Date, note: string, o: Observed, guards: Guard[] = []): Action {
  return {
    verb: 'patch',
    target: { ...target(sub), resourceVersion: sub.metadata.resourceVersion! },
    // The nudge is optional: an opted-out or protected Subscription is left out, never blocking the fix.
    optional: true,
    guards: [...guards, ...catalogGuards(sub, o)],
    patch: { metadata: { annotations: { [MEDIC.nudge]: now.toISOString() } } },
    reason: 'SubscriptionNudged',
    note,
  };
}

export function plan(o: Observed, ctx: PlanContext): Plan {
  const actions: Action[] = [];
  const defers: { note: string; regarding: Target; requeueAfterSeconds?: number }[] = [];
  const nudges: Extract<JobDecision, { nudge: string }>[] = [];
  const refusals: Extract<JobDecision, { refuse: string }>[] = [];
  const waits: number[] = [];
  const skips: string[] = [];
  const held: Action[] = [];
  for (const f of o.jobs) {
    const d = decideJob(f, o, ctx);
    // A Job policy keeps (its catalog opted out, a protected namespace) does not hold back the
    // others of the namespace (red team 47's suspicion): its delete rides along as an optional one,
    // refused with its Warning Event, and with it goes nothing of its own (ConfigMap, nudges).
    if ('act' in d && d.act.length > 0 && policyRefusal(ctx.policy, d.act[0]!)) held.push(d.act[0]!);
    else if ('act' in d) actions.push(...d.act);
    else if ('defer' in d) defers.push({ note: d.defer, regarding: target(f.job), ...(d.requeueAfterSeconds ? { requeueAfterSeconds: d.requeueAfterSeconds } : {}) });
    else if ('nudge' in d) nudges.push(d);
    else if ('refuse' in d) refusals.push(d);
    else if ('wait' in d) waits.push(d.wait);
    else skips.push(`${f.job.metadata.name.slice(0, 12)}…: ${d.skip}`);
  }
  // Deleting a ConfigMap cascades (GC) to every Job it owns: keep it while any Job it owns stays
  // (e.g. a running retry job), and delete it once even if several failed Jobs asked for it.
  const deletedJobs = new Set(actions.filter((a) => a.reason === 'UnpackJobDeleted').map((a) => a.target.uid));
  const cmDeletes = new Set<string>();
  for (let i = actions.length - 1; i >= 0; i--) {
    const a = actions[i]!;
    if (a.reason !== 'UnpackConfigMapDeleted') continue;
    const staysOwned =
      o.jobs.some((f) => configMapOwner(f.job)?.uid === a.target.uid && !deletedJobs.has(f.job.metadata.uid ?? '') && !f.job.metadata.deletionTimestamp) ||
      // ... or any other Job it owns, even one olm-medic would never touch itself (red team 13, J1)
      (o.dependents ?? []).some((d) => d.owners.includes(a.target.uid) && !deletedJobs.has(d.uid) && !d.terminating);
    if (staysOwned || cmDeletes.has(a.target.uid)) actions.splice(i, 1);
    else cmDeletes.add(a.target.uid);
  }
  // What else this look decided rides along with whatever it does, so nothing blocks the others:
  // Jobs policy keeps (optional deletes the executor refuses with their Warning Events), Jobs
  // refused (OLM's manual steps) or deferred to OLM (their Events), and the soonest re-check any of
  // them asks for (a retry interval or TTL passing, a deadline) — red team 49, H1–H3.
  const kept = held.map((a) => ({ ...a, optional: true }));
  const refusedAsides: Aside[] = refusals.map((r) => ({ kind: 'refuse', reason: r.reason, note: r.refuse, regarding: target(r.job) }));
  const deferredAsides: Aside[] = defers.map((d) => ({ kind: 'defer', reason: 'DeferredToOlm', note: d.note, regarding: d.regarding }));
  const later = soonest([...defers.map((d) => d.requeueAfterSeconds), ...waits]);
  const beside = (p: Plan, asides: Aside[]): Plan => (asides.length ? { ...p, explained: asides } : p);
  const acting = (summary: string, acts: Action[]): Plan =>
    beside({ kind: 'act', summary, actions: [...acts, ...kept], ...(later ? { othersRecheckAfterSeconds: later } : {}) }, [...refusedAsides, ...deferredAsides]);

  if (actions.length) {
    const deleted = actions.filter((a) => a.reason === 'UnpackJobDeleted').map((a) => a.target.name);
    // ... and an upgrade the failed Job blocked (AtLatestKnown with BundleUnpackFailed, red team 24 U1).
    for (const sub of o.subscribers.filter(blockedOnUnpack)) {
      actions.push(nudge(sub, ctx.now, `Unpack Job ${deleted.map((n) => n.slice(0, 12) + '…').join(', ')} in ${o.namespace} was removed; touched the Subscription so OLM retries now.`, o));
    }
    return acting(`removed ${deleted.length} stale unpack job(s) in ${o.namespace}`, actions);
  }
  // The Jobs whose interval has passed for this Subscription's namespace. One that policy keeps
  // (its guards refuse the nudge) does not hold back the nudge another Job is owed (red team 52's
  // suspicion); kept Jobs alone still guard it, so it is refused with their Warning.
  const owedBy = (sub: KubeObject): Extract<JobDecision, { nudge: string }>[] => {
    const all = nudges.filter((d) => d.namespaces.includes(sub.metadata.namespace!));
    const free = all.filter((d) => !d.guards.some((g) => objectRefusal(ctx.policy, g)));
    return free.length ? free : all;
  };
  const toNudge = o.subscribers.filter((sub) => {
    // The same Subscriptions the deferral waited for, blocked upgrades included (red team 26, N1).
    if (!nudges.length || !blockedOnUnpack(sub)) return false;
    // The latest failure among the Jobs whose interval has passed (a retry Job's, after the first's).
    const since = owedBy(sub).map((d) => d.since);
    const nudged = seconds(sub.metadata.annotations?.[MEDIC.nudge]);
    return since.length > 0 && (nudged === undefined || nudged < Math.max(...since));
  });
  if (toNudge.length) {
    const guardsFor = (sub: KubeObject): Guard[] => owedBy(sub).flatMap((d) => d.guards);
    return acting(
      `nudged ${toNudge.length} Subscription(s) so OLM retries the failed unpack now`,
      toNudge.map((sub) => nudge(sub, ctx.now, `${nudges[0]!.nudge}; touched the Subscription so OLM resolves (and retries the unpack) now instead of at its next resync.`, o, guardsFor(sub))),
    );
  }
  // Only Jobs policy keeps to act on: nothing is written, and each kept Job gets its Warning Event.
  if (kept.length) return acting(`kept ${kept.length} unpack job(s) in ${o.namespace} that policy protects`, []);
  if (refusals.length) {
    const [first, ...more] = refusedAsides;
    return beside({ kind: 'refuse', reason: first!.reason, note: first!.note, regarding: first!.regarding, ...(later ? { requeueAfterSeconds: later } : {}) }, [...more, ...deferredAsides]);
  }
  // Already nudged since those failures; a later failure still inside its interval (or a running
  // Job) is waited for below.
  if (nudges.length && !defers.length && !waits.length) return { kind: 'noop', reason: `${nudges[0]!.nudge}; the waiting Subscriptions were already nudged since the failure` };
  if (defers.length) {
    // The soonest re-check among them (each Job's own interval or TTL, a running Job's deadline).
    const [first, ...more] = deferredAsides;
    return beside({ kind: 'defer', reason: first!.reason, note: first!.note, regarding: first!.regarding, ...(later ? { requeueAfterSeconds: later } : {}) }, more);
  }
  if (waits.length) return { kind: 'requeue', afterSeconds: Math.min(...waits), reason: 'unpack job still running within its deadline' };
  const owed = o.subscription && nudgeOwed(o.subscription, o, ctx);
  if (owed) return { kind: 'act', summary: `re-sent the nudge to ${o.subscription!.metadata.namespace}/${o.subscription!.metadata.name}`, actions: [owed] };
  return { kind: 'noop', reason: skips.join('; ') || `no unpack jobs in ${o.namespace}` };
}

/**
 * A nudge still owed: the Subscription reports BundleUnpackFailed, yet no failed unpack Job is
 * left in the catalog namespace (we, or OLM's TTL, removed it) and it was not nudged since the
 * failure — e.g. the nudge after our Job deletion was lost. Bounded: once nudged, never again
 * until the condition changes.
 */
function nudgeOwed(sub: KubeObject, o: Observed, ctx: PlanContext): Action | undefined {
  if (!mayBeOwedNudge(sub, ctx.now.getTime() / 1000)) return undefined;
  // Only when no failed unpack-named Job is left at all: a look-alike we refuse to touch may be the cause.
  if (o.failedUnpackNamedJob || o.jobs.some((f) => jobState(f.job).kind === 'failed')) return undefined;
  // Guarded by the catalog it resolves from (nudge()): an opted-out catalog or a protected catalog
  // namespace is not acted on by a nudge either (red team 29b, G1).
  return nudge(sub, ctx.now, `BundleUnpackFailed persists but no failed unpack Job remains in ${o.namespace}; touched the Subscription so OLM resolves again.`, o);
}

/**
 * The Subscription's own half of nudgeOwed, decided from the object alone (a sweep picks the
 * Subscriptions to look at with it): BundleUnpackFailed, not being deleted, not opted out, and not
 * nudged since the failure.
 */
export function mayBeOwedNudge(sub: KubeObject, now = Infinity): boolean {
  const failed = condition(sub, 'BundleUnpackFailed');
  if (failed?.status !== 'True') return false;
  if (sub.metadata.deletionTimestamp || sub.metadata.annotations?.[MEDIC.optOut] === 'true') return false;
  // OLM stamps the condition with its own clock. One ahead of the apiserver's (`now`) would make
  // every nudge look older than the failure: a nudge per update it causes (red team 31). A failure
  // dated in the future cannot be ordered against a nudge: any nudge counts (once, not again).
  const since = seconds(failed.lastTransitionTime);
  const nudged = seconds(sub.metadata.annotations?.[MEDIC.nudge]);
  if (since !== undefined && since > now) return nudged === undefined;
  return nudged === undefined || (since !== undefined && nudged < since);
}
