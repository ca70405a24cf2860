/**
 * Seed 1, produced by real OLM: a shared unpack Job fails (its pod never runs: the bundle image is
 * "unpullable", so the Job hits activeDeadlineSeconds for real) for one namespace; the image comes back
 * and another namespace subscribes to the same bundle. OLM keeps reusing the failed Job: both
 * Subscriptions are stuck. olm-medic (server + real adapter, and a CLI sweep, as the shipped SAs) deletes the Job and nudges;
 * OLM then unpacks again and BOTH installs reach CSV Succeeded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CATALOG, csvPhase, startOlm, type OlmBed, forgetInstalls } from './bed.js';
import { cond, failedSharedJob } from './scenes.js';
import { until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { cli, describeWrite, runVersions, startMedic, writesBy, type Medic } from './support.js';

const cp = inject('controlPlane');
// v0.25-v0.42: a failed unpack Job stays until someone deletes it (v0.43+ sets a 300 s TTL, after
// which Kubernetes removes it and OLM retries: olm-medic defers, covered by the fixture suites).
// Passes on v0.25.0 (Jobs unlabelled, found by name) and v0.28.0 (label-filtered Job cache).
const versions = runVersions(['v0.25.0', 'v0.28.0']);

describe.each(versions)('real OLM %s: a failed shared unpack Job', (version) => {
  let olm: OlmBed;
  let medic: Medic | undefined;
  beforeAll(async () => {
    olm = await startOlm(version);
  });
  const made: string[] = [];
  afterAll(async () => {
    // The next file must find a cluster without this file's installs (a later OLM version would adopt
    // them: v0.46 adds its CSV finalizer to v0.25's CSVs, and a cluster-wide sweep then acts on them).
    if (olm) await forgetInstalls(olm.admin, made);
    await medic?.stop();
    await olm?.stop();
  });

  it('blocks a second namespace until olm-medic deletes it; then OLM installs both', async () => {
    const scene = await failedSharedJob(olm, made);
    const { ns1, job: failed } = scene;
    expect(cond(failed, 'Failed')?.reason).toBe('DeadlineExceeded');
    // The image is back; a second namespace subscribes to the same bundle.
    const ns2 = await scene.fault();
    // Stuck: OLM reuses the failed Job for both (give it well past a resolve cycle).
    await new Promise((r) => setTimeout(r, 30_000));
    for (const ns of [ns1, ns2]) {
      const sub = await olm.admin.get<Obj>(paths.olm(ns, 'subscriptions', 'medic-beta'));
      expect(sub?.status?.installedCSV, `${ns} is not stuck: ${JSON.stringify(sub?.status)}`).toBeUndefined();
      expect(await olm.admin.list(paths.olm(ns, 'installplans'))).toEqual([]);
    }
    const sub2 = await olm.admin.get<Obj>(paths.olm(ns2, 'subscriptions', 'medic-beta'));
    process.stderr.write(`[findings ${version}] second subscriber while the shared Job is Failed: ${JSON.stringify(sub2?.status?.conditions)}\n`);
    expect((await olm.admin.get<Obj>(paths.batch(CATALOG.namespace, failed.metadata.name)))?.metadata.uid).toBe(failed.metadata.uid);

    // olm-medic arrives after the fact: the adapter emits nothing for objects that predate its watches
    // and OLM writes nothing more while stuck, so no event comes; a sweep (CLI, shipped SA) finds it.
    const since = Date.now();
    medic = await startMedic();
    const sweep = await cli(['sweep']);
    process.stderr.write(`[findings ${version}] sweep: exit ${sweep.code}\n${sweep.stdout}\n`);
    expect(sweep.code, sweep.stdout + sweep.stderr).toBe(3);
    await until(async () => (await olm.admin.get<Obj>(paths.batch(CATALOG.namespace, failed.metadata.name)))?.metadata.uid !== failed.metadata.uid, 'olm-medic to delete the failed Job', 60_000, olm.procs());
    await until(async () => (await csvPhase(olm.admin, ns1, 'medic-beta.v0.1.0')) === 'Succeeded', `${ns1}: CSV Succeeded`, 240_000, olm.procs());
    await until(async () => (await csvPhase(olm.admin, ns2, 'medic-beta.v0.1.0')) === 'Succeeded', `${ns2}: CSV Succeeded`, 240_000, olm.procs());
    const writes = writesBy(cp.shippedUser, since).filter((e) => e.responseStatus?.code && e.responseStatus.code < 300);
    process.stderr.write(`[findings ${version}] olm-medic writes for the heal:\n  ${writes.map(describeWrite).join('\n  ')}\n`);
    expect(writes.some((e) => e.verb === 'delete' && e.objectRef?.resource === 'jobs' && e.objectRef.name === failed.metadata.name)).toBe(true);
  });
});
