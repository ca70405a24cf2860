/**
 * Red team 23 (W2; failed on 991b03d and before): with OLM's retry interval (every waiting namespace sets it), OLM v0.26-v0.42
 * keeps failed unpack Jobs (no TTL; ensureJob deletes only beyond 5 retained: bundle_unpacker.go
 * v0.46.0:739-759, same shape since v0.26). After one retry, the catalog namespace holds the first
 * failed Job (`<hash>`, its interval long passed and its nudge done) and the failed retry Job
 * (`<hash[:58]><suffix>`, still inside its interval). OLM's next retry is due at the retry Job's
 * failure + interval (sortUnpackJobs picks the newest failed one). job-conflict's plan lets the first
 * Job's already-done nudge win over the retry Job's defer: a noop with no re-check, so nothing looks
 * again when the retry Job's interval passes (no event comes: OLM writes nothing new on a persisting
 * failure); only the next sweep does, up to 5 minutes late.
 */
import { describe, expect, it } from 'vitest';
import { plan, type Observed } from '../../functions/job-conflict/plan.js';
import type { Plan, PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import * as olm from '../fixtures/olm-objects.js';
import { CAT, CATALOG, IMAGE, scene } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { ago, configMap, failedJob, waitingSub, ctx } = scene(NOW);
const RETRY = olm.unpackRetryJobName(IMAGE, 'x7k2p');

const cm = configMap();
// Interval 300 s. First Job failed 1000 s ago; olm-medic nudged at -700 (its interval passed);
// OLM created the retry Job, which failed 100 s ago: OLM's next retry is due in 200 s.
const first = failedJob(1000, { olmVersion: 'v0.28.0', uid: 'job-1' });
const retry = failedJob(100, { olmVersion: 'v0.28.0', uid: 'job-2', name: RETRY });
const sub = waitingSub('ns-b', 'etcd', 1000, ago(700));
const observed = (jobs: KubeObject[]): Observed => ({
  namespace: CAT,
  catalogSources: [CATALOG],
  olmLabelsObjects: true,
  jobs: jobs.map((job) => ({ job, configMap: cm, configMapInUse: false })),
  subscribers: [sub],
  retryIntervals: { 'ns-b': 300 },
});
/** When the plan looks again, in seconds (undefined: never, until some event or sweep). */
const recheck = (p: Plan): number | undefined =>
  p.kind === 'defer' || p.kind === 'refuse' ? p.requeueAfterSeconds : p.kind === 'requeue' ? p.afterSeconds : p.kind === 'act' ? p.requeueAfterSeconds : undefined;

describe('redteam23 W2: the retry Job\'s interval is re-checked although the first failed Job\'s nudge is done', () => {
  it('the retry Job\'s own Failed event (it comes first: facts [retry, first]) plans a re-check when its interval passes (~200 s)', () => {
    const p = plan(observed([retry, first]), ctx);
    expect({ kind: p.kind, recheck: recheck(p) }).toMatchObject({ recheck: 200 });
  });

  it('once the retry Job\'s interval has passed, the Subscription (nudged before that failure) is nudged again, whatever order the Jobs were listed in', () => {
    const later: PlanContext = { ...ctx, now: new Date(NOW.getTime() + 250_000) };
    const p = plan(observed([first, retry]), later);
    expect(p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace}/${a.target.name}`) : [p.kind]).toContain('patch Subscription/ns-b/etcd');
  });
});
