/**
 * Red team 49 (fixed): a Job policy keeps held back the others of its catalog namespace when the
 * others' findings are not deletes. plan() returns the "only Jobs policy keeps" act as soon as
 * `held` is non-empty and nothing else is deleted, before it looks at `nudges`, `defers` or `waits`:
 *  - H1: another Job whose retry interval has passed (OLM retries only when it next resolves, so
 *    olm-medic owes the waiting Subscription a nudge) gets no nudge: not on this look, not on any
 *    later one while the kept Job stays (a sweep plans the same), so the Subscription waits for OLM's
 *    resync instead — "Nothing blocks the fix for others" broken by one opted-out Job.
 *  - H2: another Job still inside its retry interval is deferred: its DeferredToOlm Event (README:
 *    an Event for every deferral) and its re-check when the interval passes are dropped.
 * Twins: without the opted-out Job the same nudge / deferral is planned.
 */
import { describe, expect, it } from 'vitest';
import { plan, type JobFacts, type Observed } from '../../functions/job-conflict/plan.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget, type Policy } from '../../shared/core/policy.js';
import type { EventRecord, Recorder } from '../../shared/core/recorder.js';
import { NO_POLICY, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, twoBundles } from '../support/job-conflict-scene.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const ctx: PlanContext = { now: NOW, options: { marginSeconds: 60 }, policy: { ...NO_POLICY } };
const { IMAGES, ago, stamp } = twoBundles(NOW);

/** Job 0: failed long ago, its owner ConfigMap gone (stale owner: deleted, not left to the interval); opted out if asked. */
function orphaned(optedOut: boolean): JobFacts {
  const j = olm.unpackJob({ namespace: CAT, image: IMAGES[0]!, configMapUid: 'cm-0', variant: 'current' });
  j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(7200) });
  return { job: stamp(j, 'job-0', optedOut ? { 'olm-medic.io/ignore': 'true' } : undefined), configMapInUse: false };
}

/** Job 1: failed `secondsAgo` ago, its ConfigMap in place (OLM's retry interval applies to it). */
function failed(secondsAgo: number): JobFacts {
  const cm = stamp(olm.unpackConfigMap({ namespace: CAT, image: IMAGES[1]!, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true }), 'cm-1');
  const j = olm.unpackJob({ namespace: CAT, image: IMAGES[1]!, configMapUid: 'cm-1', variant: 'current' });
  j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(secondsAgo) });
  return { job: stamp(j, 'job-1'), configMap: cm, configMapInUse: false };
}

function observed(jobs: JobFacts[]): Observed {
  const s = olm.subscription({ namespace: 'ns-b', name: 'redis', package: 'redis', source: CATALOG, sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: ago(100), conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: ago(100) })] });
  // ns-b's OperatorGroup sets bundle-unpack-min-retry-interval=10m.
  return { namespace: CAT, catalogSources: [CATALOG], olmLabelsObjects: true, subscribers: [stamp(s, 'sub-b')], retryIntervals: { 'ns-b': 600 }, jobs };
}

const acts = (p: Plan): string[] => (p.kind === 'act' ? p.actions.map((a) => `${a.reason} ${a.target.kind}/${a.target.uid}`) : [p.kind]);

async function execute(p: Plan): Promise<{ events: string[]; writes: string[]; requeue?: number }> {
  const events: EventRecord[] = [];
  const writes: string[] = [];
  const writer = {
    delete: async (t: { kind: string; name: string }) => (writes.push(`delete ${t.kind}/${t.name}`), 'deleted'),
    mergePatch: async (t: { kind: string; name: string }) => (writes.push(`patch ${t.kind}/${t.name}`), 'patched'),
    create: async (x: KubeObject) => x,
  } as unknown as Writer;
  const recorder: Recorder = { record: async (e) => void events.push(e) };
  const policy: Policy = { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 10, windowSeconds: 60 };
  const r = await createExecutor({ writer, recorder, policy, budget: new ActionBudget(10, 60_000, () => NOW.getTime()) })('job-conflict', p, `${CAT}`);
  return { events: events.map((e) => `${e.type} ${e.reason} ${e.regarding.kind}/${e.regarding.uid}`), writes, ...('requeueAfterSeconds' in r && r.requeueAfterSeconds ? { requeue: r.requeueAfterSeconds } : {}) };
}

describe('red team 49 H1: an opted-out Job drops the nudge another Job owes (its retry interval passed)', () => {
  it('job-0 opted out, job-1 failed 50 min ago (interval 10 min passed): sub-b is still nudged, job-0 refused beside it', async () => {
    const p = plan(observed([orphaned(true), failed(3000)]), ctx);
    expect(acts(p)).toContain('SubscriptionNudged Subscription/sub-b');
    const r = await execute(p);
    expect(r.writes).toEqual(['patch Subscription/redis']);
    expect(r.events).toContain('Warning OptedOut Job/job-0');
  });

  it('twin: job-0 not opted out: deleted, and sub-b nudged', async () => {
    const p = plan(observed([orphaned(false), failed(3000)]), ctx);
    expect(acts(p)).toEqual(['UnpackJobDeleted Job/job-0', 'SubscriptionNudged Subscription/sub-b']);
  });

  it('twin: job-1 alone: sub-b nudged', () => {
    expect(acts(plan(observed([failed(3000)]), ctx))).toEqual(['SubscriptionNudged Subscription/sub-b']);
  });
});

describe('red team 49 H2: an opted-out Job drops another Job\'s deferral (its Event and its re-check)', () => {
  it('job-0 opted out, job-1 failed 100 s ago (interval 10 min): the look is re-checked when job-1\'s interval passes', async () => {
    const r = await execute(plan(observed([orphaned(true), failed(100)]), ctx));
    expect(r.writes).toEqual([]);
    expect(r.events).toContain('Warning OptedOut Job/job-0');
    expect(r.requeue, 'looked at again once the interval has passed').toBeGreaterThan(0);
  });

  it('job-0 opted out, job-1 failed 100 s ago (interval 10 min): job-1\'s deferral gets its Event', async () => {
    const r = await execute(plan(observed([orphaned(true), failed(100)]), ctx));
    expect(r.events, 'the deferral of job-1 recorded').toContain('Normal DeferredToOlm Job/job-1');
  });

  it('twin: job-1 alone: deferred, Event and re-check', async () => {
    const r = await execute(plan(observed([failed(100)]), ctx));
    expect(r.events).toEqual(['Normal DeferredToOlm Job/job-1']);
    expect(r.requeue).toBeGreaterThan(0);
  });
});

describe('red team 49 H3: two Jobs refused for OLM <= v0.24, nothing else: only the first gets its Warning Event', () => {
  // Both Jobs' failed lookups live in an InstallPlan (OLM <= v0.24): each is refused with OLM's manual steps.
  const legacy = (): Observed => {
    const a = failed(3000);
    const b: JobFacts = (() => {
      const cm = stamp(olm.unpackConfigMap({ namespace: CAT, image: IMAGES[0]!, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true }), 'cm-0');
      const j = olm.unpackJob({ namespace: CAT, image: IMAGES[0]!, configMapUid: 'cm-0', variant: 'current' });
      j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(3000) });
      return { job: stamp(j, 'job-0'), configMap: cm, configMapInUse: false };
    })();
    return { ...observed([b, a]), retryIntervals: {}, legacyFailedPlans: { [b.configMap!.metadata.name]: ['ns-b/install-a'], [a.configMap!.metadata.name]: ['ns-b/install-b'] } };
  };

  it('a Subscription\'s look at the catalog namespace: both Jobs get UnpackRetryNeedsManualSteps (as they do beside a deleted or a kept Job)', async () => {
    const r = await execute(plan(legacy(), ctx));
    expect(r.writes).toEqual([]);
    expect(r.events.sort()).toEqual(['Warning UnpackRetryNeedsManualSteps Job/job-0', 'Warning UnpackRetryNeedsManualSteps Job/job-1']);
  });

  it('twin: beside a Job policy keeps, both refusals ride along', async () => {
    const o = legacy();
    const kept = orphaned(true);
    const r = await execute(plan({ ...o, jobs: [...o.jobs, { ...kept, job: { ...kept.job, metadata: { ...kept.job.metadata, name: kept.job.metadata.name.slice(0, -1) + 'z', uid: 'job-2' } } }] }, ctx));
    expect(r.events).toEqual(expect.arrayContaining(['Warning UnpackRetryNeedsManualSteps Job/job-0', 'Warning UnpackRetryNeedsManualSteps Job/job-1']));
  });
});
