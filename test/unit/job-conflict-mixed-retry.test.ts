/**
 * Red team 22 (failed on 420070f and before), J1: a failed unpack Job is deferred to OLM's retry interval because ONE waiting
 * subscriber namespace (ns-b) sets bundle-unpack-min-retry-interval, although another waiting
 * namespace (ns-c) sets none. OLM retries only while resolving a namespace, and only the bundles
 * THAT namespace needs (catalog operator.go v0.46.0:1375 unpackBundles(namespace, ...) with that
 * namespace's OperatorGroup interval). If ns-b waits on another bundle (its own broken one, retried
 * forever), ns-c's failed unpack is never retried: olm-medic nudges ns-b once, then noops forever.
 */
import { describe, expect, it } from 'vitest';
import { plan, type JobFacts, type Observed } from '../../functions/job-conflict/plan.js';
import type { Plan } from '../../shared/core/types.js';
import { CAT, CATALOG, scene } from '../support/job-conflict-scene.js';

const NOW = new Date('2025-06-01T12:00:00Z');
const { ago, configMap, failedJob: failed, waitingSub, ctx } = scene(NOW);

const cm = configMap();
const failedJob = failed(3000, { variant: 'current' });
const stuck = (ns: string, pkg: string, nudgedAt?: Date) => waitingSub(ns, pkg, 3000, nudgedAt);
const facts: JobFacts = { job: failedJob, configMap: cm, configMapInUse: false };
const observed = (nudgedB?: Date): Observed => ({
  namespace: CAT,
  catalogSources: [CATALOG],
  olmLabelsObjects: true,
  jobs: [facts],
  // ns-b (interval 300 s) waits on its own bundle; ns-c (no interval) waits on this failed one.
  subscribers: [stuck('ns-b', 'broken-operator', nudgedB), stuck('ns-c', 'etcd')],
  retryIntervals: { 'ns-b': 300 },
});
const said = (p: Plan): string[] => (p.kind === 'act' ? p.actions.map((a) => `${a.verb} ${a.target.kind}/${a.target.namespace ?? ''}/${a.target.name.slice(0, 8)}`) : [`${p.kind}: ${'reason' in p ? p.reason : ''}`]);

describe('redteam22 J1: a retry interval on one waiting namespace does not strand another waiting namespace', () => {
  it('ns-c (no retry interval) waits on the failed Job: it is deleted (OLM never retries it for ns-c), not only ns-b nudged', () => {
    expect(said(plan(observed(), ctx))).toContain(`delete Job/${CAT}/${failedJob.metadata.name.slice(0, 8)}`);
  });

  it('after ns-b was nudged once, the failed Job blocking ns-c is not left alone forever', () => {
    expect(said(plan(observed(ago(10)), ctx)).join(" | ")).toContain(`delete Job/${CAT}/${failedJob.metadata.name.slice(0, 8)}`);
  });
});
