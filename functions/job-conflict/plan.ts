/**
 * job-conflict: the pure decision. A bundle-unpack Job (olm-facts §1) that is Failed, invisible to
 * OLM's label-filtered cache, or owned by a missing/recreated ConfigMap blocks every Subscription
 * that needs that bundle. Delete it (and its empty ConfigMap when nothing in flight needs it), then
 * nudge the stuck Subscriptions so OLM resolves again at once. Defer where OLM cleans up itself.
 */
import type { Action, Plan, PlanContext, Target } from '../../shared/core/types.js';
import { target } from '../../shared/core/types.js';
import type { KubeObject, OwnerReference } from '../../shared/kube/types.js';
import { LABEL_MANAGED, LABEL_UNPACK_REF, MEDIC, V1ALPHA1 } from '../../shared/olm/constants.js';
import { condition, isTrue, isUnpackJobName, jobBelongsToConfigMap, seconds } from '../../shared/olm/olm.js';

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
  /** OLM here labels what it creates (olm.managed, v0.26+), so an unlabelled job is invisible to it. */
  olmLabelsObjects: boolean;
  jobs: JobFacts[];
  /** Subscriptions (any namespace) resolving from this catalog namespace. */
  subscribers: KubeObject[];
  /** Subscriber namespaces whose OperatorGroup sets bundle-unpack-min-retry-interval (§1.4). */
  retryIntervalNamespaces: string[];
  /** The Subscription whose event this is (Subscription-triggered checks). */
  subscription?: KubeObject;
  /** Any Failed Job with an unpack-hash name exists in the namespace, ours or a look-alike. */
  failedUnpackNamedJob?: boolean;
}

export const defaults = {
  /** Extra time past a deadline or TTL before acting where OLM or Kubernetes should have. */
  marginSeconds: 60,
};

interface JobSpec {
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
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
  | { kind: 'running'; deadlineAt?: number };

export function jobState(job: KubeObject): JobState {
  const failed = condition(job, 'Failed');
  if (failed?.status === 'True') {
    return { kind: 'failed', why: `${failed.reason ?? 'Failed'}: ${failed.message ?? ''}`.trim(), finishedAt: seconds(failed.lastTransitionTime) };
  }
  if (isTrue(job, 'Complete')) {
    const st = job.status as JobStatus | undefined;
    return { kind: 'complete', finishedAt: seconds(st?.completionTime ?? condition(job, 'Complete')?.lastTransitionTime) };
  }
  const spec = job.spec as JobSpec | undefined;
  const st = job.status as JobStatus | undefined;
  const started = seconds(st?.startTime ?? job.metadata.creationTimestamp);
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

type JobDecision = { act: Action[] } | { defer: string; requeueAfterSeconds?: number } | { wait: number; why: string } | { skip: string };

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
    // OLM retries only while resolving a namespace that needs the bundle, reading that namespace's
    // OperatorGroup (§1.4): an annotation on a subscriber namespace that is not waiting retries nothing.
    const waiting = new Set(o.subscribers.filter(isStuckOnUnpack).map((s) => s.metadata.namespace));
    const retrying = o.retryIntervalNamespaces.filter((ns) => waiting.has(ns));
    if (retrying.length) {
      return { defer: `OLM retries failed unpacks itself: ${retrying.join(', ')} set ${'operatorframework.io/bundle-unpack-min-retry-interval'}` };
    }
    const ttl = (f.job.spec as JobSpec | undefined)?.ttlSecondsAfterFinished;
    if (ttl !== undefined && state.finishedAt !== undefined && now < state.finishedAt + ttl + margin) {
      return { defer: `the job has ttlSecondsAfterFinished=${ttl}; Kubernetes removes it and OLM (v0.43+) retries`, requeueAfterSeconds: Math.ceil(state.finishedAt + ttl + margin - now) };
    }
  }

  const job = target(f.job);
  const actions: Action[] = [
    { verb: 'delete', target: job, propagationPolicy: 'Background', reason: 'UnpackJobDeleted', note: `Deleted bundle-unpack Job ${job.name}: ${reasons.join('; ')}.` },
  ];
  const cm = f.configMap;
  const owner = configMapOwner(f.job)!;
  if (state.kind === 'failed' && cm && cm.metadata.uid === owner.uid && isEmpty(cm) && !f.configMapInUse) {
    actions.push({
      verb: 'delete',
      target: target(cm),
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

/** A Subscription waiting on an unpack: failed, unpacking, or never got an InstallPlan (§1.6). */
export function isStuckOnUnpack(sub: KubeObject): boolean {
  if (sub.metadata.deletionTimestamp) return false;
  const st = sub.status as { installPlanRef?: unknown; currentCSV?: string } | undefined;
  return isTrue(sub, 'BundleUnpackFailed') || isTrue(sub, 'BundleUnpacking') || (!st?.installPlanRef && !st?.currentCSV);
}

export function plan(o: Observed, ctx: PlanContext): Plan {
  const actions: Action[] = [];
  const defers: { note: string; regarding: Target; requeueAfterSeconds?: number }[] = [];
  const waits: number[] = [];
  const skips: string[] = [];
  for (const f of o.jobs) {
    const d = decideJob(f, o, ctx);
    if ('act' in d) actions.push(...d.act);
    else if ('defer' in d) defers.push({ note: d.defer, regarding: target(f.job), ...(d.requeueAfterSeconds ? { requeueAfterSeconds: d.requeueAfterSeconds } : {}) });
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
    const staysOwned = o.jobs.some((f) => configMapOwner(f.job)?.uid === a.target.uid && !deletedJobs.has(f.job.metadata.uid ?? '') && !f.job.metadata.deletionTimestamp);
    if (staysOwned || cmDeletes.has(a.target.uid)) actions.splice(i, 1);
    else cmDeletes.add(a.target.uid);
  }
  if (actions.length) {
    const deleted = actions.filter((a) => a.reason === 'UnpackJobDeleted').map((a) => a.target.name);
    // The nudge is optional: an opted-out Subscription is simply not touched (and must not block the fix).
    for (const sub of o.subscribers.filter((x) => isStuckOnUnpack(x) && x.metadata.annotations?.[MEDIC.optOut] !== 'true')) {
      actions.push({
        verb: 'patch',
        target: { ...target(sub), resourceVersion: sub.metadata.resourceVersion! },
        patch: { metadata: { annotations: { [MEDIC.nudge]: ctx.now.toISOString() } } },
        reason: 'SubscriptionNudged',
        note: `Unpack Job ${deleted.map((n) => n.slice(0, 12) + '…').join(', ')} in ${o.namespace} was removed; touched the Subscription so OLM retries now.`,
      });
    }
    return { kind: 'act', actions, summary: `removed ${deleted.length} stale unpack job(s) in ${o.namespace}` };
  }
  if (defers.length) {
    const d = defers[0]!;
    return { kind: 'defer', reason: 'DeferredToOlm', note: d.note, regarding: d.regarding, ...(d.requeueAfterSeconds ? { requeueAfterSeconds: d.requeueAfterSeconds } : {}) };
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
  const failed = condition(sub, 'BundleUnpackFailed');
  if (failed?.status !== 'True') return undefined;
  if (sub.metadata.deletionTimestamp || sub.metadata.annotations?.[MEDIC.optOut] === 'true') return undefined;
  // Only when no failed unpack-named Job is left at all: a look-alike we refuse to touch may be the cause.
  if (o.failedUnpackNamedJob || o.jobs.some((f) => jobState(f.job).kind === 'failed')) return undefined;
  const since = seconds(failed.lastTransitionTime);
  const nudged = seconds(sub.metadata.annotations?.[MEDIC.nudge]);
  if (nudged !== undefined && (since === undefined || nudged >= since)) return undefined;
  return {
    verb: 'patch',
    target: { ...target(sub), resourceVersion: sub.metadata.resourceVersion! },
    patch: { metadata: { annotations: { [MEDIC.nudge]: ctx.now.toISOString() } } },
    reason: 'SubscriptionNudged',
    note: `BundleUnpackFailed persists but no failed unpack Job remains in ${o.namespace}; touched the Subscription so OLM resolves again.`,
  };
}
