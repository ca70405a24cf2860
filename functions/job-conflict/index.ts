/**
 * job-conflict — stale or invisible bundle-unpack Jobs block new Subscriptions (olm-facts §1).
 *   listens   Job add/update (unpack-hash names), Subscription add/update (stuck on unpack), sweeps
 *             (unpack Jobs, and Subscriptions still BundleUnpackFailed that were not nudged since)
 *   reads     the job(s) and owner ConfigMaps; then, only if one looks stale: CatalogSources in the
 *             namespace, Subscriptions and OperatorGroups of subscribers, pending InstallPlans, and
 *             (for a failed job's event) the other jobs its ConfigMap owns
 *   writes    delete Job / empty ConfigMap (uid+rv preconditions), annotate stuck Subscriptions
 */
import type { ResourceTrigger } from '../../shared/events/types.js';
import type { ObserveContext, RemediationFunction, SweepScope } from '../../shared/core/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { ANN_UNPACK_RETRY, ANN_UNPACK_TIMEOUT, LABEL_MANAGED, LABEL_UNPACK_REF, V1, V1ALPHA1 } from '../../shared/olm/constants.js';
import { goDurationSeconds, isUnpackJobName, unpackHash } from '../../shared/olm/olm.js';
import { collect } from '../../shared/kube/collect.js';
import { forEachLimited } from '../../shared/core/scheduling.js';
import { hasLabels, isDnsLabel, isDnsSubdomain } from '../../shared/kube/validate.js';
import { configMapOwner, decideJob, defaults, identityProblem, isStuckOnUnpack, jobState, mayBeOwedNudge, plan, type JobFacts, type Observed } from './plan.js';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };

function targets(t: ResourceTrigger): Ref[] {
  if (t.verb === 'delete') return [];
  const { kind, apiVersion, name } = t.ref;
  if (kind === 'Job' && apiVersion === 'batch/v1') {
    if (!isUnpackJobName(name)) return [];
    return !t.object || !identityProblem(t.object) ? [t.ref] : [];
  }
  if (kind === 'Subscription' && apiVersion === V1ALPHA1) return !t.object || isStuckOnUnpack(t.object) ? [t.ref] : [];
  return [];
}

async function* sweep(read: Reader, scope: SweepScope): AsyncIterable<Ref> {
  // No label selector: the jobs that matter most are the ones missing OLM's labels.
  for await (const job of read.list(JOB.apiVersion, JOB.kind, scope.namespace ? { namespace: scope.namespace } : {})) {
    if (!isUnpackJobName(job.metadata.name) || identityProblem(job)) continue;
    // A Complete job carrying OLM's labels is the healthy common case: skip it without reads. (One
    // whose ConfigMap owner vanished is garbage-collected by Kubernetes; events cover the rest.)
    const l = job.metadata.labels ?? {};
    if (jobState(job).kind === 'complete' && l[LABEL_MANAGED] === 'true' && l[LABEL_UNPACK_REF]) continue;
    yield { ...JOB, name: job.metadata.name, namespace: job.metadata.namespace! };
  }
  // A nudge can be lost (olm-medic stopped between the Job's delete and the nudge, or someone else
  // removed the Job): the stuck Subscription then has no Job left to send an event about it. The
  // sweep, the durable fallback, looks at each one still failed and not nudged since.
  for await (const sub of read.list(V1ALPHA1, 'Subscription', scope.namespace ? { namespace: scope.namespace } : {})) {
    if (mayBeOwedNudge(sub)) yield { apiVersion: V1ALPHA1, kind: 'Subscription', name: sub.metadata.name, namespace: sub.metadata.namespace! };
  }
}

/**
 * Subscriber namespaces up to which a reconcile lists each one's OperatorGroups (all at once);
 * beyond, it reads one cluster-wide list instead of one request per namespace.
 */
const PER_NAMESPACE_OPERATOR_GROUP_LISTS = 4;

async function observe(ref: Ref, read: Reader, ctx: ObserveContext): Promise<Observed | undefined> {
  let namespace: string;
  let jobs: KubeObject[];
  let subscription: KubeObject | undefined;
  let failedUnpackNamedJob = false;
  let dependents: NonNullable<Observed['dependents']> | undefined;
  if (ref.kind === 'Subscription') {
    const sub = await read.get(ref);
    if (!sub) return undefined;
    subscription = sub;
    namespace = (sub.spec as { sourceNamespace?: string } | undefined)?.sourceNamespace ?? '';
    // A value read from an object still goes into a URL: it must be a namespace name.
    if (!isDnsLabel(namespace)) return undefined;
    const all = await collect(read.list(JOB.apiVersion, JOB.kind, { namespace }));
    dependents = all.flatMap(dependent);
    const named = all.filter((j) => isUnpackJobName(j.metadata.name));
    failedUnpackNamedJob = named.some((j) => jobState(j).kind === 'failed');
    jobs = named.filter((j) => !identityProblem(j));
  } else {
    const job = await read.get(ref);
    if (!job) return undefined;
    namespace = ref.namespace!;
    jobs = [job];
  }
  const facts: JobFacts[] = [];
  for (const job of jobs) {
    const owner = configMapOwner(job);
    const configMap = owner ? await read.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: owner.name }) : undefined;
    facts.push({ job, ...(configMap ? { configMap } : {}), configMapInUse: false });
  }
  const base: Observed = { namespace, catalogSources: [], olmLabelsObjects: false, jobs: facts, subscribers: [], retryIntervals: {}, ...(subscription ? { subscription, failedUnpackNamedJob } : {}) };
  // Cheap first pass with no further reads: stop here when every job is certainly fine.
  const optimistic = { ...base, catalogSources: ['?'], olmLabelsObjects: true };
  if (facts.every((f) => 'skip' in decideJob(f, optimistic, ctx))) {
    // A nudge may still be owed: it is guarded by the catalog the Subscription resolves from (its
    // opt-out; red team 29b G1), so read that one CatalogSource.
    const source = (subscription?.spec as { source?: string } | undefined)?.source;
    if (!subscription || !mayBeOwedNudge(subscription, ctx.clock().getTime() / 1000) || !isDnsSubdomain(source)) return base;
    const catalog = await read.get({ apiVersion: V1ALPHA1, kind: 'CatalogSource', namespace, name: source });
    return { ...base, catalogSourceObjects: catalog ? [catalog] : [] };
  }

  // The reads below do not depend on one another: run them side by side (a heal under load waits
  // for the slowest, not for their sum).
  const catalogFacts = (async () => {
    const catalogSourceObjects = await collect(read.list(V1ALPHA1, 'CatalogSource', { namespace }));
    return { catalogSourceObjects, olmLabelsObjects: await labelsItsJobs(read, namespace, jobs, catalogSourceObjects) };
  })();
  const subscriberFacts = (async () => {
    // Filtered while streaming the (paginated) list: only this catalog's subscribers are kept in memory.
    // Shared with concurrent stuck reconciles (a burst): read through, nothing awaited in the loop.
    const subscribers: KubeObject[] = [];
    // Namespaces with a Subscription of another catalog namespace (its failed unpack marks them too).
    const foreign = new Set<string>();
    for await (const s of read.list(V1ALPHA1, 'Subscription', { shared: true })) {
      if ((s.spec as { sourceNamespace?: string } | undefined)?.sourceNamespace === namespace) subscribers.push(s);
      else foreign.add(s.metadata.namespace!);
    }
    const retryIntervals: Record<string, number> = {};
    const namespaces = new Set(subscribers.map((s) => s.metadata.namespace!));
    const groups = new Map<string, KubeObject[]>();
    if (namespaces.size > PER_NAMESPACE_OPERATOR_GROUP_LISTS) {
      // A global catalog has subscribers in many namespaces: one (shared) cluster-wide list.
      for await (const og of read.list(V1, 'OperatorGroup', { shared: true })) {
        const ns = og.metadata.namespace!;
        if (!namespaces.has(ns)) continue;
        const list = groups.get(ns);
        if (list) list.push(og);
        else groups.set(ns, [og]);
      }
    } else {
      await forEachLimited(namespaces, PER_NAMESPACE_OPERATOR_GROUP_LISTS, async (ns) => void groups.set(ns, await collect(read.list(V1, 'OperatorGroup', { namespace: ns }))));
    }
    const unresolved: string[] = [];
    for (const ns of namespaces) {
      const ogs = groups.get(ns) ?? [];
      // OLM resolves a namespace only with exactly one OperatorGroup, and reads the annotation only
      // then (§1.4); one it cannot parse stops the namespace's resolution too.
      const ann = ogs.length === 1 ? ogs[0]!.metadata.annotations?.[ANN_UNPACK_RETRY] : undefined;
      const retry = goDurationSeconds(ann);
      // ... and so does an unpack timeout it cannot parse, read just before (red team 25, T1).
      const timeout = ogs.length === 1 ? ogs[0]!.metadata.annotations?.[ANN_UNPACK_TIMEOUT] : undefined;
      if (ogs.length !== 1 || (ann !== undefined && retry === undefined) || (timeout !== undefined && goDurationSeconds(timeout) === undefined)) unresolved.push(ns);
      // An interval OLM never reads (the namespace is not resolved) sets no deadline (red team 26, R1).
      else if (retry !== undefined && retry > 0) retryIntervals[ns] = retry;
    }
    const foreignNamespaces = [...namespaces].filter((ns) => foreign.has(ns));
    return { subscribers, retryIntervals, unresolved, foreignNamespaces };
  })();
  const cascade = (async () => {
    if (!(ref.kind === 'Job' && jobState(facts[0]!.job).kind === 'failed' && facts[0]!.configMap)) return;
    // The plan may delete this failed Job's ConfigMap, which cascades to every Job it owns: see them too.
    const [first] = facts as [JobFacts];
    const ownerUid = configMapOwner(first.job)!.uid;
    const all: NonNullable<Observed['dependents']> = [];
    for await (const j of read.list(JOB.apiVersion, JOB.kind, { namespace })) {
      all.push(...dependent(j));
      if (j.metadata.uid !== first.job.metadata.uid && isUnpackJobName(j.metadata.name) && !identityProblem(j) && configMapOwner(j)?.uid === ownerUid) {
        facts.push({ job: j, configMap: first.configMap, configMapInUse: false });
      }
    }
    dependents = all;
  })();
  // Failed Jobs (including any the cascade adds, whose ConfigMap is the first one's) need the InstallPlans.
  const plans = facts.some((f) => jobState(f.job).kind === 'failed') ? installPlanFacts(read, namespace) : undefined;
  // One Promise.all for all of them: a failure of one never leaves another's rejection unhandled.
  const [{ catalogSourceObjects, olmLabelsObjects }, { subscribers, retryIntervals, unresolved, foreignNamespaces }, , p] = await Promise.all([catalogFacts, subscriberFacts, cascade, plans]);
  const catalogSources = catalogSourceObjects.map((c) => c.metadata.name);
  let legacyFailedPlans: Record<string, string[]> | undefined;
  if (p) {
    legacyFailedPlans = p.legacyFailed;
    for (const f of facts) f.configMapInUse = f.configMap ? p.inUse.has(f.configMap.metadata.name) : false;
  }
  return { ...base, catalogSources, catalogSourceObjects, olmLabelsObjects, subscribers, retryIntervals, ...(unresolved.length ? { unresolved } : {}), ...(foreignNamespaces.length ? { foreignNamespaces } : {}), ...(legacyFailedPlans ? { legacyFailedPlans } : {}), ...(dependents ? { dependents } : {}) };
}

/** A Job as a dependent the garbage collector would find by its owners' uids (none: not one). */
function dependent(j: KubeObject): NonNullable<Observed['dependents']> {
  const owners = (j.metadata.ownerReferences ?? []).map((r) => r.uid);
  return owners.length ? [{ uid: j.metadata.uid ?? '', owners, terminating: !!j.metadata.deletionTimestamp }] : [];
}

/**
 * Whether this OLM (v0.26+) labels its unpack Jobs, so an unlabelled one is invisible to it. Evidence
 * (olm-facts §1.2 correction): the catalog registry pod carries olm.managed=true (v0.26+), or another
 * unpack Job in the namespace carries OLM's labels. The ConfigMap's olm.managed label proves nothing:
 * OLM v0.19-v0.25 label the ConfigMap and not the Job (and find the Job by name).
 */
async function labelsItsJobs(read: Reader, namespace: string, known: KubeObject[], catalogs: KubeObject[]): Promise<boolean> {
  // Evidence must itself be OLM's, or any user could fake it (a bare labelled pod, a look-alike Job).
  const catalogUids = new Set(catalogs.map((c) => c.metadata.uid));
  const olmPod = (p: KubeObject): boolean => {
    const ctrl = p.metadata.ownerReferences?.find((o) => o.controller === true);
    return hasLabels(p, { [LABEL_MANAGED]: 'true' }) && ctrl?.kind === 'CatalogSource' && ctrl.apiVersion === V1ALPHA1 && catalogUids.has(ctrl.uid) && p.metadata.labels?.['olm.catalogSource'] === ctrl.name;
  };
  const labelled = (j: KubeObject): boolean => j.metadata.labels?.[LABEL_MANAGED] === 'true' || j.metadata.labels?.[LABEL_UNPACK_REF] !== undefined;
  const olmJob = async (j: KubeObject): Promise<boolean> => {
    if (!labelled(j) || identityProblem(j)) return false;
    const owner = configMapOwner(j)!;
    const cm = await read.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: owner.name });
    return cm?.metadata.uid === owner.uid && (cm.metadata.ownerReferences ?? []).some((r) => r.kind === 'CatalogSource' && r.apiVersion === V1ALPHA1 && catalogUids.has(r.uid));
  };
  for (const j of known) if (await olmJob(j)) return true;
  for await (const p of read.list('v1', 'Pod', { namespace, labelSelector: `olm.catalogSource,${LABEL_MANAGED}=true` })) if (olmPod(p)) return true;
  for await (const j of read.list(JOB.apiVersion, JOB.kind, { namespace, labelSelector: LABEL_UNPACK_REF })) if (await olmJob(j)) return true;
  return false;
}

interface BundleLookup {
  path?: string;
  catalogSourceRef?: { namespace?: string };
  conditions?: { type?: string; status?: string }[];
}

/**
 * From one list of InstallPlans: the ConfigMaps in `namespace` that a plan awaiting approval or
 * installing still references (§1.6), and (OLM <= v0.24) plans holding a failed lookup of a bundle
 * unpacked in `namespace`, by unpack hash.
 */
async function installPlanFacts(read: Reader, namespace: string): Promise<{ inUse: Set<string>; legacyFailed: Record<string, string[]> }> {
  const used = new Set<string>();
  const legacyFailed: Record<string, string[]> = {};
  for await (const ip of read.list(V1ALPHA1, 'InstallPlan', { shared: true })) {
    const st = ip.status as { phase?: string; plan?: { resource?: { manifest?: string } }[]; bundleLookups?: BundleLookup[] } | undefined;
    for (const l of st?.bundleLookups ?? []) {
      const failed = st?.phase === 'Failed' || l.conditions?.some((c) => c.type === 'BundleLookupFailed' && c.status === 'True');
      if (!failed || !l.path || (l.catalogSourceRef?.namespace ?? namespace) !== namespace) continue;
      (legacyFailed[unpackHash(l.path)] ??= []).push(`${ip.metadata.namespace}/${ip.metadata.name}`);
    }
    if (st?.phase !== 'RequiresApproval' && st?.phase !== 'Installing') continue;
    for (const step of st.plan ?? []) {
      const m = step.resource?.manifest;
      if (!m || !m.includes('"ConfigMap"')) continue;
      try {
        const r = JSON.parse(m) as { kind?: string; name?: string; namespace?: string };
        if (r.kind === 'ConfigMap' && r.namespace === namespace && r.name) used.add(r.name);
      } catch {
        /* an inline manifest, not a reference */
      }
    }
  }
  return { inUse: used, legacyFailed };
}

export const jobConflict: RemediationFunction<Observed> = {
  name: 'job-conflict',
  kinds: ['batch/v1/Job', 'operators.coreos.com/v1alpha1/Subscription'],
  summary: 'removes failed, stale or OLM-invisible bundle-unpack Jobs and nudges the Subscriptions they block',
  defaults,
  targets,
  sweep,
  observe,
  plan,
};
