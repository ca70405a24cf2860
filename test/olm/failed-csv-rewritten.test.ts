/**
 * Real OLM rewrites the status of a CSV that stays Failed, and the automatic uninstall still counts
 * its grace from the failure. An installed CSV whose install strategy stops parsing (here: its
 * strategy name patched to one OLM does not know) goes Failed (reason InvalidInstallStrategy); olm-operator then
 * calls SetPhaseWithEvent(Failed, CSVReasonInvalidStrategy, …) on every sync of it
 * (parseStrategiesAndUpdateStatus): a status write with a new lastUpdateTime and the same
 * lastTransitionTime. Shown here on real olm-operator (each sync triggered by touching the CSV).
 * Until b8082f5, olm-medic bounded the Failed time by the last status write, so such a CSV never
 * became "Failed for over failedCsvGraceSeconds"; now OLM's clock skew (the write's apiserver stamp
 * against its lastUpdateTime) moves the transition time instead. With the Subscription deleted and
 * autoUninstall opted in (grace 5 s): while the operator's Deployment is still available (OLM leaves a
 * CSV it cannot parse alone), a sweep starts no automatic uninstall; once the user has taken the
 * Deployment down, one CLI sweep uninstalls it while OLM keeps rewriting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { csvPhase, forgetInstalls, namespace, startOlm, subscribe, type OlmBed } from './bed.js';
import { until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { cli, describeWrite, runVersions, writesBy } from './support.js';

const cp = inject('controlPlane');
const versions = runVersions(['v0.28.0', 'v0.46.0']);
const PKG = 'medic-beta';
const CSV = 'medic-beta.v0.1.0';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface CsvStatus {
  phase?: string;
  reason?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
}
const statusWrite = (csv: Obj): string | undefined =>
  ((csv.metadata as { managedFields?: { subresource?: string; time?: string }[] }).managedFields ?? [])
    .filter((m) => m.subresource === 'status')
    .map((m) => m.time ?? '')
    .sort()
    .pop();

describe.each(versions)('real OLM %s: a CSV that stays Failed gets its status rewritten; the automatic uninstall counts from the failure', (version) => {
  let olm: OlmBed;
  const made: string[] = [];
  let opName = '';
  beforeAll(async () => {
    olm = await startOlm(version);
  });
  afterAll(async () => {
    if (olm) {
      await forgetInstalls(olm.admin, made);
      if (opName && (await olm.admin.get(paths.operators(opName)))) await olm.admin.delete(paths.operators(opName));
    }
    await olm?.stop();
  });

  it('OLM rewrites the Failed CSV (new lastUpdateTime, same lastTransitionTime); with its Deployment available no automatic uninstall; once it is down, one sweep uninstalls it meanwhile', async () => {
    const ns = await namespace(olm.admin, 'failrw');
    made.push(ns);
    opName = `${PKG}.${ns}`;
    await subscribe(olm.admin, ns, PKG);
    await until(async () => (await csvPhase(olm.admin, ns, CSV)) === 'Succeeded', `${ns}: ${CSV} Succeeded`, 240_000, olm.procs());
    await until(
      async () => ((await olm.admin.get<Obj>(paths.operators(opName)))?.status?.components?.refs ?? []).some((r: { kind: string }) => r.kind === 'ClusterServiceVersion'),
      `Operator ${opName} listing the CSV`,
      120_000,
      olm.procs(),
    );
    // Uninstalled the way users leave it half done: the Subscription deleted; then the CSV breaks.
    await olm.admin.delete(paths.olm(ns, 'subscriptions', PKG));
    const csvPath = paths.olm(ns, 'clusterserviceversions', CSV);
    await olm.admin.mergePatch(csvPath, { spec: { install: { strategy: 'olm-medic-test-unknown' } } });
    const failed = await until(async () => {
      const c = await olm.admin.get<Obj>(csvPath);
      const st = c?.status as CsvStatus | undefined;
      return st?.phase === 'Failed' && st.reason === 'InvalidInstallStrategy' ? c : undefined;
    }, `${ns}: ${CSV} Failed/InvalidInstallStrategy`, 120_000, olm.procs());
    const first = failed.status as CsvStatus;

    // Every sync of it (one per change of the CSV) rewrites its status while it stays Failed.
    let touches = 0;
    const touch = async (): Promise<void> => {
      await olm.admin.mergePatch(csvPath, { metadata: { annotations: { 'olm-medic-test/touch': String(++touches) } } });
    };
    const seen = new Set<string>();
    await until(async () => {
      await touch();
      await sleep(1_100);
      const st = (await olm.admin.get<Obj>(csvPath))?.status as CsvStatus;
      expect(st.phase).toBe('Failed');
      expect(st.lastTransitionTime, 'the transition time stays').toBe(first.lastTransitionTime);
      if (st.lastUpdateTime !== first.lastUpdateTime) seen.add(st.lastUpdateTime!);
      return seen.size >= 2;
    }, 'olm-operator to rewrite the Failed CSV twice', 60_000, olm.procs());
    const rewritten = (await olm.admin.get<Obj>(csvPath))!;
    process.stderr.write(
      `[findings ${version}] Failed CSV rewritten: lastTransitionTime ${first.lastTransitionTime}, lastUpdateTime ${first.lastUpdateTime} -> ${[...seen].join(', ')}; status write stamped ${statusWrite(failed)} -> ${statusWrite(rewritten)} (${touches} touches)\n`,
    );
    expect(statusWrite(rewritten)! > statusWrite(failed)!, 'the apiserver stamped a later status write').toBe(true);

    // OLM keeps rewriting it while olm-medic looks (a touch a second): the grace counts from the failure.
    const env = { OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true', OLM_MEDIC_FINALIZER_CLEANUP_FAILED_CSV_GRACE_SECONDS: '5' };
    await until(async () => Date.parse(first.lastTransitionTime!) + 6_000 < Date.now(), 'the 5 s grace to pass', 30_000);
    // Its Deployment still runs (OLM cannot parse the strategy, so it leaves it alone): the operator
    // runs whatever the CSV says, and no automatic uninstall starts.
    const key = `operators.coreos.com/${opName}`;
    const deployments = await olm.admin.list<Obj>(`${paths.apps(ns, 'deployments')}?labelSelector=${encodeURIComponent(key)}`);
    expect(deployments.map((d) => d.status?.availableReplicas ?? 0), 'premise: the operator Deployment is available').toEqual([1]);
    const before = Date.now() - 1000;
    const refused = await cli(['sweep', '--function', 'finalizer-cleanup', '-o', 'json'], env);
    process.stderr.write(`[findings ${version}] sweep while the Deployment is available: exit ${refused.code}: ${refused.stdout.slice(0, 800)}\n`);
    expect(writesBy(cp.shippedUser, before).filter((e) => e.objectRef?.resource !== 'events' && (e.responseStatus?.code ?? 500) < 300).map(describeWrite), 'no write but Events').toEqual([]);
    // The user takes the operator's Deployment down; OLM, unable to parse the strategy, does not bring it back.
    for (const d of deployments) await olm.admin.delete(paths.apps(ns, 'deployments', d.metadata.name));
    await until(async () => (await olm.admin.list<Obj>(`${paths.apps(ns, 'deployments')}?labelSelector=${encodeURIComponent(key)}`)).length === 0, 'the Deployment gone', 60_000, olm.procs());
    let touching = true;
    const toucher = (async () => {
      while (touching) {
        await touch().catch(() => undefined);
        await sleep(1_000);
      }
    })();
    const since = Date.now() - 1000;
    try {
      const sweep = await cli(['sweep', '--function', 'finalizer-cleanup', '-o', 'json'], env);
      process.stderr.write(`[findings ${version}] sweep exit ${sweep.code}: ${sweep.stdout.slice(0, 1500)}\n${sweep.stderr.slice(-1000)}\n`);
      const writes = writesBy(cp.shippedUser, since).filter((e) => (e.responseStatus?.code ?? 500) < 300);
      process.stderr.write(`[findings ${version}] olm-medic writes:\n  ${writes.map(describeWrite).join('\n  ')}\n`);
      expect(sweep.code, sweep.stderr.slice(-2000)).toBe(3);
      expect(writes.some((e) => e.verb === 'delete' && e.objectRef?.resource === 'clusterserviceversions' && e.objectRef?.namespace === ns)).toBe(true);
    } finally {
      touching = false;
      await toucher;
    }
    await until(async () => !(await olm.admin.get(csvPath)), `${ns}: ${CSV} gone`, 60_000, olm.procs());
  }, 600_000);
});
