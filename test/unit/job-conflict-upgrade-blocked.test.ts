/**
 * Red team 24 (U1; failed on 16a5f40 and before): an UPGRADE blocked by a failed unpack Job is not "waiting" for job-conflict.
 * Real OLM keeps an installed Subscription at state AtLatestKnown while it resolves and unpacks the
 * next bundle: ensureSubscriptionCSVState sets AtLatestKnown whenever status.currentCSV exists
 * (catalog/operator.go v0.46.0:1694-1714, v0.28.0:1547-1566), and a failed unpack only adds
 * BundleUnpackFailed=True to every Subscription of the namespace (v0.46.0:1399-1467). Only a
 * successful plan (setIPReference) moves it to UpgradePending. isStuckOnUnpack (plan.ts) returns
 * false for any AtLatestKnown Subscription, so such a namespace is neither `waiting` nor `unretried`.
 *
 * ns-b (retry interval 5m) waits on its OWN broken bundle (red team 22's J1 setting); ns-c (no
 * interval) is an upgrade blocked by THIS failed Job (OLM v0.26-v0.42: no TTL). OLM retries per
 * namespace it resolves, with that namespace's interval: ns-c's resolution re-reads the same failed
 * Job forever (interval 0), ns-b's retries never touch this bundle. job-conflict defers to ns-b's
 * interval, nudges ns-b once, then noops forever: ns-c's upgrade is never retried.
 */
import { describe, expect, it } from 'vitest';
import { plan, type JobFacts, type Observed } from '../../functions/job-conflict/plan.js';
import type { Plan } from '../../shared/core/types.js';
import { CAT, CATALOG, scene } from '../support/job-conflict-scene.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const { ago, configMap, failedJob: failed, waitingSub, blockedUpgrade, ctx } = scene(NOW);

const cm = configMap();
const failedJob = failed(3000, { olmVersion: 'v0.28.0' });
/** ns-b: a new install waiting on its own broken bundle (nudged after this Job's interval passed). */
const newInstallB = (nudgedAt?: Date) => waitingSub('ns-b', 'broken-operator', 3000, nudgedAt);
/** ns-c: etcd v0.9.2 installed; its upgrade to v0.9.4 is blocked by this failed unpack Job. */
const upgradeC = () => blockedUpgrade('ns-c', 3000);
const facts: JobFacts = { job: failedJob, configMap: cm, configMapInUse: false };
const observed = (nudgedB?: Date): Observed => ({
  namespace: CAT,
  catalogSources: [CATALOG],
  olmLabelsObjects: true,
  jobs: [facts],
  subscribers: [newInstallB(nudgedB), upgradeC()],
  retryIntervals: { 'ns-b': 300 },
});
const said = (p: Plan): string[] => (p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace ?? ''}/${a.target.name.slice(0, 8)}`) : [`${p.kind}: ${'reason' in p ? p.reason : ''}`]);

describe('redteam24 U1: an upgrade blocked by the failed Job in a namespace without a retry interval', () => {
  it('is not stranded behind another namespace\'s interval: the Job is deleted (OLM never retries it for ns-c)', () => {
    expect(said(plan(observed(), ctx))).toContain(`delete Job/${CAT}/${failedJob.metadata.name.slice(0, 8)}`);
  });

  it('is not left alone forever once ns-b was nudged', () => {
    expect(said(plan(observed(ago(10)), ctx)).join(' | ')).toContain(`delete Job/${CAT}/${failedJob.metadata.name.slice(0, 8)}`);
  });

  it('without any retry interval, the Job\'s deletion also nudges the blocked upgrade (else OLM waits for its resync)', () => {
    const p = plan({ ...observed(), subscribers: [upgradeC()], retryIntervals: {} }, ctx);
    expect(said(p)).toContain('patch Subscription/ns-c/etcd');
  });
});
