/**
 * One unpack Job policy keeps does not hold back the others of the catalog namespace (red team 47's
 * suspicion, fixed). README: "Nothing blocks the fix for others" — yet every Job delete of a look at
 * the catalog namespace was a required action, and the executor refuses a whole plan when a required
 * action is refused: one opted-out Job (or one guarded by an opted-out catalog) kept every other
 * stale Job of the namespace, and the nudges of the Subscriptions they block, until each Job's own
 * event came. Now a Job policy keeps rides along as an optional delete (refused by the executor with
 * its Warning Event) and takes nothing of its own with it (its ConfigMap, nudges naming it); alone,
 * it refuses the plan as before.
 */
import { describe, expect, it } from 'vitest';
import { plan, type JobFacts, type Observed } from '../../functions/job-conflict/plan.js';
import { policyRefusal } from '../../shared/core/policy.js';
import { NO_POLICY, type Plan, type PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, twoBundles } from '../support/job-conflict-scene.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const ctx: PlanContext = { now: NOW, options: { marginSeconds: 60 }, policy: { ...NO_POLICY } };
const { IMAGES, ago, stamp } = twoBundles(NOW);

/** A failed unpack Job of image i (opted out if asked) and its empty ConfigMap. */
function failed(i: number, optedOut = false): JobFacts {
  const cm = stamp(olm.unpackConfigMap({ namespace: CAT, image: IMAGES[i]!, catalogSourceName: CATALOG, catalogSourceUid: 'catsrc-1', managedLabel: true }), `cm-${i}`);
  const j = olm.unpackJob({ namespace: CAT, image: IMAGES[i]!, configMapUid: `cm-${i}`, variant: 'current' });
  j.status = olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: ago(3000) });
  return { job: stamp(j, `job-${i}`, optedOut ? { 'olm-medic.io/ignore': 'true' } : undefined), configMap: cm, configMapInUse: false };
}

function observed(jobs: JobFacts[]): Observed {
  const s = olm.subscription({ namespace: 'ns-b', name: 'etcd', package: 'etcd', source: CATALOG, sourceNamespace: CAT });
  s.status = olm.subscriptionStatus({ at: NOW, conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: NOW })] });
  return { namespace: CAT, catalogSources: [CATALOG], olmLabelsObjects: true, subscribers: [stamp(s, 'sub-b')], retryIntervals: {}, jobs };
}
const acts = (p: Plan) => (p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.uid}${a.optional ? ' (optional)' : ''}`) : [p.kind]);

describe('job-conflict: a Job policy keeps does not hold back the others', () => {
  it('two failed Jobs, the first opted out: the second and its ConfigMap are deleted (required), the first rides along optional, its ConfigMap stays', () => {
    expect(acts(plan(observed([failed(0, true), failed(1)]), ctx))).toEqual([
      'delete Job/job-1',
      'delete ConfigMap/cm-1 (optional)',
      'patch Subscription/sub-b (optional)',
      'delete Job/job-0 (optional)',
    ]);
  });

  it('twin: the opted-out Job alone: nothing else in the plan, its delete optional (the executor refuses it with its Warning Event)', () => {
    expect(acts(plan(observed([failed(0, true)]), ctx))).toEqual(['delete Job/job-0 (optional)']);
  });

  it('two opted-out Jobs alone: both in the plan, so each gets its Warning Event (before: the first refusal ended the plan)', () => {
    expect(acts(plan(observed([failed(0, true), failed(1, true)]), ctx))).toEqual(['delete Job/job-0 (optional)', 'delete Job/job-1 (optional)']);
  });

  it('twin: neither opted out: both Jobs, both ConfigMaps', () => {
    expect(acts(plan(observed([failed(0), failed(1)]), ctx))).toEqual([
      'delete Job/job-0', 'delete ConfigMap/cm-0 (optional)', 'delete Job/job-1', 'delete ConfigMap/cm-1 (optional)', 'patch Subscription/sub-b (optional)',
    ]);
  });
});

describe('job-conflict: a refusal beside the actions is kept', () => {
  // OLM <= v0.24 keeps the failed unpack of Job 0's bundle in an InstallPlan: deleting that Job
  // alone retries nothing, so it is refused with OLM's manual steps. Job 1 is deleted.
  const legacy = (jobs: JobFacts[]): Observed => ({ ...observed(jobs), legacyFailedPlans: { [jobs[0]!.configMap!.metadata.name]: ['ns-b/install-abc'] } });

  it('another Job of the namespace deleted: the UnpackRetryNeedsManualSteps refusal about Job 0 rides along (before: dropped until Job 0 was looked at alone)', () => {
    const p = plan(legacy([failed(0), failed(1)]), ctx);
    expect(acts(p)).toEqual(['delete Job/job-1', 'delete ConfigMap/cm-1 (optional)', 'patch Subscription/sub-b (optional)']);
    expect(p.explained?.map((r) => `${r.kind} ${r.reason} ${r.regarding.kind}/${r.regarding.uid}`)).toEqual(['refuse UnpackRetryNeedsManualSteps Job/job-0']);
  });

  it('twin: Job 0 alone: the plan is the refusal, as before', () => {
    expect(plan(legacy([failed(0)]), ctx)).toMatchObject({ kind: 'refuse', reason: 'UnpackRetryNeedsManualSteps', regarding: { uid: 'job-0' } });
  });

  it('twin: no legacy InstallPlan: both Jobs deleted, no refusal', () => {
    const p = plan(observed([failed(0), failed(1)]), ctx);
    expect(p.explained).toBeUndefined();
  });
});

describe('job-conflict: a Job policy keeps does not hold back the nudge another Job is owed', () => {
  // ns-b's OperatorGroup sets a 10-minute retry interval; both Jobs failed 50 minutes ago, so OLM
  // retries only when it next resolves and olm-medic owes sub-b a nudge (red team 52's suspicion:
  // the nudge carried the guards of every Job, the opted-out one's too, and was refused).
  const withInterval = (jobs: JobFacts[]): Observed => ({ ...observed(jobs), retryIntervals: { 'ns-b': 600 } });
  const allowed = (p: Plan): string[] => (p.kind === 'act' ? p.actions.filter((a) => !policyRefusal(ctx.policy, a)).map((a) => `${a.verb} ${a.target.kind}/${a.target.uid}`) : []);

  it('Job 0 opted out, Job 1 not: sub-b is nudged (the write passes policy)', () => {
    expect(allowed(plan(withInterval([failed(0, true), failed(1)]), ctx))).toEqual(['patch Subscription/sub-b']);
  });

  it('twin: Job 0 (opted out) alone: the nudge is planned but refused by policy (its Warning)', () => {
    const p = plan(withInterval([failed(0, true)]), ctx);
    expect(acts(p)).toEqual(['patch Subscription/sub-b (optional)']);
    expect(allowed(p)).toEqual([]);
  });

  it('twin: neither opted out: sub-b is nudged', () => {
    expect(allowed(plan(withInterval([failed(0), failed(1)]), ctx))).toEqual(['patch Subscription/sub-b']);
  });
});
