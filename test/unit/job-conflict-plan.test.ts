/**
 * job-conflict's pure plan(): a table of situations (olm-facts §1.5, §1.6, §1.9) and properties.
 * Objects come from the fixture builders (as OLM writes them) plus uid/resourceVersion.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { configMapOwner, plan, type JobFacts, type Observed } from '../../functions/job-conflict/plan.js';
import { NO_POLICY, type Action, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, HASH, IMAGE } from '../support/job-conflict-scene.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const ctx: PlanContext = { now: NOW, options: { marginSeconds: 60 }, policy: NO_POLICY };
const RETRY = olm.unpackRetryJobName(IMAGE, 'xk2vb');
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);

// Not the shared scene's k(): apply() below stamps patched Subscriptions from the same counter.
let rv = 0;
function k(o: olm.Obj, uid: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { ...o, metadata: { ...o.metadata, uid, resourceVersion: String(++rv), creationTimestamp: olm.rfc3339(ago(86400)), ...extra } } as KubeObject;
}

// ---------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------

function configMap(o: { uid?: string; managed?: boolean; extracted?: boolean; catalogOwned?: boolean } = {}): KubeObject {
  const cm = olm.unpackConfigMap({
    namespace: CAT,
    image: IMAGE,
    catalogSourceName: CATALOG,
    catalogSourceUid: 'catsrc-1',
    managedLabel: o.managed ?? true,
    ...(o.extracted ? { extractedPackage: 'etcd' } : {}),
  });
  if (o.catalogOwned === false) delete cm.metadata.ownerReferences;
  // opm writes the manifests (gzip+base64) into binaryData next to its annotations (§1.2).
  if (o.extracted) cm.binaryData = { 'etcdoperator.v0.9.4.clusterserviceversion.yaml': 'H4sIAAAAAAAA/wEAAP//AAAAAAAAAAA=' };
  return k(cm, o.uid ?? 'cm-1');
}

type State = { failed: number } | { complete: number } | { active: number } | 'new';

function job(state: State, o: {
  uid?: string;
  name?: string;
  cmUid?: string;
  variant?: olm.UnpackJobVariant;
  ttl?: number;
  deadline?: number | null;
  owned?: boolean;
  refLabel?: string;
  deleting?: boolean;
  createdSecondsAgo?: number;
} = {}): KubeObject {
  const j = olm.unpackJob({
    namespace: CAT,
    image: IMAGE,
    configMapUid: o.cmUid ?? 'cm-1',
    variant: o.variant ?? 'current',
    ...(o.name ? { name: o.name } : {}),
    ...(o.ttl !== undefined ? { ttlSecondsAfterFinished: o.ttl } : {}),
    ...(o.deadline !== undefined ? { activeDeadlineSeconds: o.deadline } : {}),
  });
  if (o.owned === false) delete j.metadata.ownerReferences;
  if (o.refLabel) j.metadata.labels = { ...j.metadata.labels, [olm.BUNDLE_UNPACK_REF_LABEL]: o.refLabel };
  if (state !== 'new') {
    j.status =
      'failed' in state
        ? olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(state.failed) })
        : 'complete' in state
          ? olm.jobStatusComplete({ at: ago(state.complete) })
          : olm.jobStatusActive({ startedAt: ago(state.active) });
  }
  return k(j, o.uid ?? 'job-1', {
    creationTimestamp: olm.rfc3339(ago(o.createdSecondsAgo ?? 86400)),
    ...(o.deleting ? { deletionTimestamp: olm.rfc3339(ago(5)) } : {}),
  });
}

type SubKind = 'unpack-failed' | 'unpacking' | 'new' | 'installed';

function sub(ns: string, kind: SubKind, name = 'etcd'): KubeObject {
  const s = olm.subscription({ namespace: ns, name, package: 'etcd', source: CATALOG, sourceNamespace: CAT });
  const ip = { name: 'install-abcde', namespace: ns, uid: `ip-${ns}` };
  s.status =
    kind === 'unpack-failed'
      ? olm.subscriptionStatus({ at: NOW, conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: NOW })] })
      : kind === 'unpacking'
        ? olm.subscriptionStatus({ at: NOW, conditions: [olm.bundleUnpackingCondition(NOW)] })
        : kind === 'new'
          ? olm.subscriptionStatus({ at: NOW, conditions: [olm.catalogSourcesHealthyCondition(NOW)] })
          : olm.subscriptionStatus({ at: NOW, currentCSV: 'etcdoperator.v0.9.4', installedCSV: 'etcdoperator.v0.9.4', installPlan: ip, state: 'AtLatestKnown' });
  return k(s, `sub-${ns}-${name}`);
}

/** One job with its owner ConfigMap as observed (null: the ConfigMap is gone). */
const facts = (j: KubeObject, cm: KubeObject | null = configMap(), configMapInUse = false): JobFacts => ({ job: j, ...(cm ? { configMap: cm } : {}), configMapInUse });

function observed(jobs: JobFacts[], o: Partial<Omit<Observed, 'jobs'>> = {}): Observed {
  return {
    namespace: CAT,
    catalogSources: [CATALOG],
    olmLabelsObjects: true,
    subscribers: [sub('ns-a', 'installed'), sub('ns-b', 'unpack-failed')],
    retryIntervals: {},
    ...o,
    jobs,
  };
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

const short = (name: string): string => (name === HASH ? 'hash' : name === RETRY ? 'retry' : name);
function summary(p: Plan): string[] {
  switch (p.kind) {
    case 'act':
      return p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace === CAT ? '' : `${a.target.namespace}/`}${short(a.target.name)}`);
    case 'defer':
    case 'refuse':
      return [`${p.kind} ${p.reason}`];
    case 'requeue':
      return [`requeue ${p.afterSeconds}s`];
    case 'noop':
      return ['noop'];
  }
}

const DEL_JOB = 'delete Job/hash';
const DEL_CM = 'delete ConfigMap/hash';
const NUDGE_B = 'patch Subscription/ns-b/etcd';

describe('job-conflict plan()', () => {
  it.each<[string, Observed, string[]]>([
    // OLM ≤ v0.42 keeps a failed job forever: delete it and its empty ConfigMap, nudge only the stuck Subscription.
    ['failed job', observed([facts(job({ failed: 3000 }))]), [DEL_JOB, DEL_CM, NUDGE_B]],
    // An Installing InstallPlan still dereferences the ConfigMap (§1.6): keep it.
    ['failed job, ConfigMap in use', observed([facts(job({ failed: 3000 }), configMap(), true)]), [DEL_JOB, NUDGE_B]],
    // The ConfigMap holds extracted content: not the empty leftover of a failed unpack, keep it.
    ['failed job, ConfigMap extracted', observed([facts(job({ failed: 3000 }), configMap({ extracted: true }))]), [DEL_JOB, NUDGE_B]],
    // The stuck namespace's OperatorGroup sets the retry interval: OLM retries itself.
    ['failed job, retry interval on the stuck namespace, interval passed', observed([facts(job({ failed: 3000 }))], { retryIntervals: { 'ns-b': 300 } }), [NUDGE_B]],
    // ... not passed yet: OLM's own retry comes later; look again then
    ['failed job, retry interval on the stuck namespace, not passed', observed([facts(job({ failed: 3000 }))], { retryIntervals: { 'ns-b': 3600 } }), ['defer DeferredToOlm']],
    // Only the settled namespace A sets it: nothing resolves there, so OLM never retries for B.
    ['failed job, retry interval only on a settled namespace', observed([facts(job({ failed: 3000 }))], { retryIntervals: { 'ns-a': 300 } }), [DEL_JOB, DEL_CM, NUDGE_B]],
    // v0.43+ job with a 300 s TTL that finished a minute ago: Kubernetes removes it, OLM retries.
    ['failed job within its TTL', observed([facts(job({ failed: 60 }, { ttl: 300 }))]), ['defer DeferredToOlm']],
    // Past TTL + margin and still there (TTL controller not running): act.
    ['failed job past its TTL', observed([facts(job({ failed: 600 }, { ttl: 300 }))]), [DEL_JOB, DEL_CM, NUDGE_B]],
    // Complete and visible to OLM: OLM re-reads the ConfigMap; nothing stale.
    ['complete, visible', observed([facts(job({ complete: 3000 }), configMap({ extracted: true }))]), ['noop']],
    // Complete but without OLM's labels while OLM filters on them: the AlreadyExists loop (#3210).
    ['complete, invisible (no labels)', observed([facts(job({ complete: 3000 }, { variant: 'no-ref-label' }), configMap({ extracted: true }))]), [DEL_JOB, NUDGE_B]],
    // Only olm.managed missing: still invisible to the label-filtered cache.
    ['complete, missing olm.managed', observed([facts(job({ complete: 3000 }, { variant: 'no-managed-label' }))]), [DEL_JOB, NUDGE_B]],
    // This OLM does not label objects: an unlabelled job is visible to it.
    ['complete, unlabelled, OLM does not label', observed([facts(job({ complete: 3000 }, { variant: 'no-ref-label' }))], { olmLabelsObjects: false }), ['noop']],
    // Owner ConfigMap gone: the job is orphaned.
    ['complete, ConfigMap gone', observed([facts(job({ complete: 3000 }), null)]), [DEL_JOB, NUDGE_B]],
    // Owner ConfigMap recreated: delete the job, never the new ConfigMap.
    ['complete, ConfigMap recreated', observed([facts(job({ complete: 3000 }, { cmUid: 'cm-0' }))]), [DEL_JOB, NUDGE_B]],
    // Failed and the ConfigMap recreated: the new empty ConfigMap belongs to the next unpack, keep it.
    ['failed, ConfigMap recreated', observed([facts(job({ failed: 3000 }, { cmUid: 'cm-0' }))]), [DEL_JOB, NUDGE_B]],
    // Running within its deadline (even invisible): never delete; look again after deadline + margin.
    ['running within deadline, invisible', observed([facts(job({ active: 30 }, { variant: 'no-ref-label' }))]), ['requeue 630s']],
    // Running past deadline + margin: the Job controller should have failed it; act.
    ['running past deadline + margin', observed([facts(job({ active: 700 }))]), [DEL_JOB, NUDGE_B]],
    // No deadline at all (timeout 0): never delete a running job.
    ['running with no deadline', observed([facts(job({ active: 99999 }, { deadline: null }))]), ['noop']],
    // A job without status yet counts as running from its creation.
    // no status.startTime yet: deadlines count from startTime only, so there is none to pass
    ['just created, no status', observed([facts(job('new', { createdSecondsAgo: 10 }))]), ['noop']],
    // Not an unpack hash name.
    ['name not a hash', observed([facts(job({ failed: 3000 }, { name: 'my-batch-job' }))]), ['noop']],
    // No ConfigMap ownerReference: not OLM's.
    ['no ConfigMap owner', observed([facts(job({ failed: 3000 }, { owned: false }))]), ['noop']],
    // bundle-unpack-ref names another ConfigMap: not provably this unpack.
    ['ref label mismatch', observed([facts(job({ failed: 3000 }, { refLabel: 'f'.repeat(63) }))]), ['noop']],
    // No CatalogSource in the namespace: OLM never unpacks here.
    ['no CatalogSource', observed([facts(job({ failed: 3000 }))], { catalogSources: [] }), ['noop']],
    // The owner ConfigMap is not owned by a CatalogSource (§1.9): not OLM's.
    ['ConfigMap not catalog-owned', observed([facts(job({ failed: 3000 }), configMap({ catalogOwned: false }))]), ['noop']],
    // Already being deleted.
    ['job being deleted', observed([facts(job({ failed: 3000 }, { deleting: true }))]), ['noop']],
    // A running retry job shares the ConfigMap: delete the failed job, keep the ConfigMap (cascade).
    ['failed job + running retry sibling', observed([facts(job({ failed: 3000 })), facts(job({ active: 30 }, { name: RETRY, uid: 'job-2' }))]), [DEL_JOB, NUDGE_B]],
    // Two failed jobs of one ConfigMap: both go, the ConfigMap once, after them.
    ['two failed jobs of one ConfigMap', observed([facts(job({ failed: 3000 })), facts(job({ failed: 9000 }, { name: RETRY, uid: 'job-2' }))]), [DEL_JOB, 'delete Job/retry', DEL_CM, NUDGE_B]],
    // Nobody waits: clean up the failed job, nudge no one.
    ['failed job, no stuck subscriber', observed([facts(job({ failed: 3000 }))], { subscribers: [sub('ns-a', 'installed')] }), [DEL_JOB, DEL_CM]],
    // Every kind of stuck Subscription is nudged (failed, unpacking, brand new); the installed one is not.
    ['nudges every stuck subscriber', observed([facts(job({ failed: 3000 }))], { subscribers: [sub('ns-a', 'installed'), sub('ns-b', 'unpack-failed'), sub('ns-c', 'unpacking'), sub('ns-d', 'new')] }),
      [DEL_JOB, DEL_CM, NUDGE_B, 'patch Subscription/ns-c/etcd', 'patch Subscription/ns-d/etcd']],
    // No jobs at all.
    ['no jobs', observed([]), ['noop']],
  ])('%s', (_name, o, want) => {
    expect(summary(plan(o, ctx))).toEqual(want);
  });

  it('deletes with uid + resourceVersion preconditions and nudges with the Subscription resourceVersion and the time', () => {
    const j = job({ failed: 3000 });
    const p = plan(observed([facts(j)]), ctx);
    if (p.kind !== 'act') throw new Error(p.kind);
    expect(p.actions[0]).toMatchObject({ verb: 'delete', target: { uid: 'job-1', resourceVersion: j.metadata.resourceVersion }, propagationPolicy: 'Background', reason: 'UnpackJobDeleted' });
    const nudge = p.actions.at(-1)!;
    expect(nudge).toMatchObject({ verb: 'patch', reason: 'SubscriptionNudged', patch: { metadata: { annotations: { 'olm-medic.io/nudged-at': NOW.toISOString() } } } });
    expect(nudge.target.resourceVersion).toBeDefined();
  });

  it('nudges are optional (an opted-out or protected Subscription is skipped by the executor, never blocking the fix)', () => {
    const optedOut = sub('ns-c', 'unpack-failed');
    optedOut.metadata.annotations = { 'olm-medic.io/ignore': 'true' };
    const o = observed([facts(job({ failed: 3000 }))], { subscribers: [sub('ns-b', 'unpack-failed'), optedOut] });
    const p = plan(o, ctx) as Extract<Plan, { kind: 'act' }>;
    expect(p.actions[0]).toMatchObject({ reason: 'UnpackJobDeleted' });
    expect(p.actions[0]!.optional).toBeUndefined(); // the Job delete is required
    for (const a of p.actions.filter((x) => x.reason === 'SubscriptionNudged')) expect(a.optional).toBe(true);
  });

  it('a suspended Job (queued, no startTime) is never deleted, however old', () => {
    const j = job('new', { createdSecondsAgo: 86_400 });
    (j.spec as { suspend?: boolean }).suspend = true;
    expect(plan(observed([facts(j)]), ctx)).toMatchObject({ kind: 'noop', reason: expect.stringContaining('suspended') });
  });

  it('OLM <= v0.24 (the failed lookup lives in an InstallPlan): refuses with the documented steps instead of deleting', () => {
    const o = observed([facts(job({ failed: 3000 }))], { legacyFailedPlans: { [HASH]: ['ns-b/install-abc'] } });
    expect(plan(o, ctx)).toMatchObject({ kind: 'refuse', reason: 'UnpackRetryNeedsManualSteps', note: expect.stringContaining('delete the failing InstallPlan') });
  });

  it('a Job is guarded by its owner ConfigMap and the CatalogSource owning it', () => {
    const p = plan(observed([facts(job({ failed: 3000 }))]), ctx) as Extract<Plan, { kind: 'act' }>;
    expect(p.actions[0]!.guards?.map((g) => g.kind)).toContain('ConfigMap');
  });

  it('re-sends a lost nudge: BundleUnpackFailed, no failed Job left, not nudged since the failure — once', () => {
    const stuck = sub('ns-b', 'unpack-failed'); // condition lastTransitionTime = NOW
    const later = new Date(NOW.getTime() + 60_000);
    const o = observed([], { subscribers: [], subscription: stuck });
    const p = plan(o, { ...ctx, now: later });
    expect(summary(p)).toEqual([NUDGE_B]);
    // nudged after the failure: nothing more
    stuck.metadata.annotations = { 'olm-medic.io/nudged-at': later.toISOString() };
    expect(plan(o, { ...ctx, now: new Date(later.getTime() + 60_000) }).kind).toBe('noop');
    // nudged before the failure (an older episode): owed again
    stuck.metadata.annotations = { 'olm-medic.io/nudged-at': ago(3600).toISOString() };
    expect(summary(plan(o, { ...ctx, now: later }))).toEqual([NUDGE_B]);
    // a failed look-alike Job (not provably OLM's) may be the cause: never nudged on its account
    stuck.metadata.annotations = {};
    expect(plan({ ...o, failedUnpackNamedJob: true }, { ...ctx, now: later }).kind).toBe('noop');
    // a failed job still exists: the job path decides, not this rule
    const withJob = observed([facts(job({ failed: 3000 }))], { subscription: stuck });
    expect(summary(plan(withJob, ctx))).toContain(DEL_JOB);
  });

  it('honours the marginSeconds option', () => {
    const o = observed([facts(job({ active: 620 }))]);
    expect(summary(plan(o, { now: NOW, options: { marginSeconds: 60 }, policy: NO_POLICY }))).toEqual(['requeue 40s']);
    expect(summary(plan(o, { now: NOW, options: { marginSeconds: 0 }, policy: NO_POLICY }))).toEqual([DEL_JOB, NUDGE_B]);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/** Mostly true (3 in 4): biases the search towards the states where something gets deleted. */
const mostly = (v: boolean) => fc.constantFrom(v, v, v, !v);
/** Seconds ago: often around the 600 s deadline / 300 s TTL, sometimes weeks. */
const age = fc.oneof(fc.integer({ min: 0, max: 900 }), fc.integer({ min: 0, max: 30 * 86400 }));

const jobModel = fc.record({
  state: fc.constantFrom('failed', 'complete', 'active', 'new'),
  ageSeconds: age,
  variant: fc.constantFrom<olm.UnpackJobVariant>('current', 'current', 'no-managed-label', 'no-ref-label'),
  ttl: fc.constantFrom(undefined, undefined, 0, 300, 3600),
  deadline: fc.constantFrom<number | null>(60, 600, null),
  /** Owned by the current ConfigMap (cm-1) or a previous one (cm-0). */
  owner: fc.constantFrom('cm-1', 'cm-1', 'cm-1', 'cm-0'),
});

const worldModel = fc.record({
  jobs: fc.array(jobModel, { minLength: 1, maxLength: 4 }),
  cmExists: mostly(true),
  cmExtracted: mostly(false),
  cmInUse: mostly(false),
  cmCatalogOwned: mostly(true),
  olmLabelsObjects: fc.boolean(),
  hasCatalog: mostly(true),
  subs: fc.array(fc.record({ ns: fc.constantFrom('ns-a', 'ns-b', 'ns-c'), kind: fc.constantFrom<SubKind>('unpack-failed', 'unpacking', 'new', 'installed') }), { maxLength: 3 }),
  retryNs: fc.subarray(['ns-a', 'ns-b', 'ns-c']),
});

type ArbValue<A> = A extends fc.Arbitrary<infer T> ? T : never;
const RETRY_SUFFIXES = ['bcdfg', 'hjklm', 'npqrs', 'tvwxz'];

function build(m: ArbValue<typeof worldModel>): Observed {
  const cm = m.cmExists ? configMap({ extracted: m.cmExtracted, catalogOwned: m.cmCatalogOwned }) : null;
  const jobs = m.jobs.map((j, i) => {
    const state: State = j.state === 'failed' ? { failed: j.ageSeconds } : j.state === 'complete' ? { complete: j.ageSeconds } : j.state === 'active' ? { active: j.ageSeconds } : 'new';
    const name = i === 0 ? HASH : olm.unpackRetryJobName(IMAGE, RETRY_SUFFIXES[i]!);
    return facts(job(state, { uid: `job-${i}`, name, cmUid: j.owner, variant: j.variant, ttl: j.ttl, deadline: j.deadline, createdSecondsAgo: j.ageSeconds }), cm, !!cm && m.cmInUse);
  });
  const subs = m.subs.map((s, i) => sub(s.ns, s.kind, `sub-${i}`));
  return { namespace: CAT, catalogSources: m.hasCatalog ? [CATALOG] : [], olmLabelsObjects: m.olmLabelsObjects, jobs, subscribers: subs, retryIntervals: Object.fromEntries(m.retryNs.map((n: string) => [n, 300])) };
}

/** The cluster after the actions: deletes (with the GC cascade from a ConfigMap to the Jobs it owns), patches. */
function apply(o: Observed, actions: Action[]): Observed {
  let jobs = o.jobs;
  let subscribers = o.subscribers;
  for (const a of actions) {
    if (a.verb === 'delete' && a.target.kind === 'Job') jobs = jobs.filter((f) => f.job.metadata.uid !== a.target.uid);
    if (a.verb === 'delete' && a.target.kind === 'ConfigMap') {
      jobs = jobs.filter((f) => configMapOwner(f.job)?.uid !== a.target.uid).map((f) => ({ job: f.job, configMapInUse: false }));
    }
    if (a.verb === 'patch') {
      subscribers = subscribers.map((s) =>
        s.metadata.uid === a.target.uid
          ? { ...s, metadata: { ...s.metadata, resourceVersion: String(++rv), annotations: { ...s.metadata.annotations, ...((a.patch.metadata?.annotations ?? {}) as Record<string, string>) } } }
          : s,
      );
    }
  }
  return { ...o, jobs, subscribers };
}

function runningWithinDeadline(f: JobFacts): boolean {
  const st = f.job.status as { conditions?: { type: string; status: string }[]; startTime?: string } | undefined;
  if ((st?.conditions ?? []).some((c) => (c.type === 'Failed' || c.type === 'Complete') && c.status === 'True')) return false;
  const deadline = (f.job.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds;
  if (!deadline) return true; // no deadline: running forever, never to be deleted either
  const started = Date.parse(st?.startTime ?? f.job.metadata.creationTimestamp!) / 1000;
  return NOW.getTime() / 1000 < started + deadline + 60;
}

describe('job-conflict plan() properties', () => {
  it('applying the planned actions to the observed state and re-planning yields noop (or only waits/defers for jobs it left alone on purpose)', () => {
    fc.assert(
      fc.property(worldModel, (m) => {
        const o = build(m);
        const first = plan(o, ctx);
        // Pure: the same input gives the same plan.
        expect(plan(o, ctx)).toEqual(first);
        if (first.kind !== 'act') return;
        const after = apply(o, first.actions);
        const again = plan(after, ctx);
        if (after.jobs.length === 0) {
          expect(again).toEqual({ kind: 'noop', reason: `no unpack jobs in ${CAT}` });
        } else {
          // The jobs still there were skipped (noop), are running within their deadline (requeue) or
          // are OLM's to clean up (defer) — never a second round of writes.
          expect(['noop', 'requeue', 'defer']).toContain(again.kind);
          if (after.jobs.every((f) => !runningWithinDeadline(f)) && Object.keys(after.retryIntervals).length === 0 && after.jobs.every((f) => (f.job.spec as { ttlSecondsAfterFinished?: number }).ttlSecondsAfterFinished === undefined)) {
            expect(again.kind).toBe('noop');
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('a running job within its deadline is never deleted, neither by an action nor through its ConfigMap', () => {
    fc.assert(
      fc.property(worldModel, (m) => {
        const o = build(m);
        const p = plan(o, ctx);
        if (p.kind !== 'act') return;
        for (const f of o.jobs.filter(runningWithinDeadline)) {
          const owner = configMapOwner(f.job)?.uid;
          const hits = p.actions.filter((a) => a.verb === 'delete' && (a.target.uid === f.job.metadata.uid || (a.target.kind === 'ConfigMap' && a.target.uid === owner)));
          expect(hits).toEqual([]);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
