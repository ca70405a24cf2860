/**
 * Seed 4, produced by real OLM: the operator is uninstalled the documented way (Subscription, then
 * CSV) while olm-operator is down, so OLM misses the CSV's deletion.
 *   v0.25 (no CSV finalizer): the CSV is gone at once and its cluster-scoped RBAC (olm.owner labels)
 *     is orphaned; olm-medic removes it, and OLM, back up, has nothing left to do.
 *   v0.28 (finalizer operators.coreos.com/csv-cleanup): the CSV waits for OLM; olm-medic must defer
 *     (zero writes), and OLM, back up, finishes the cleanup itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { csvPhase, namespace, startOlm, subscribe, type OlmBed, forgetInstalls } from './bed.js';
import { until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { cli, describeWrite, olmAddsCsvFinalizer, runVersions, startMedic, writesBy, type Medic } from './support.js';

const cp = inject('controlPlane');
const versions = runVersions(['v0.25.0', 'v0.28.0', 'v0.46.0']);
const CSV = 'medic-beta.v0.1.0';

async function ownedClusterRbac(olm: OlmBed, ns: string): Promise<string[]> {
  const sel = `olm.owner=${CSV},olm.owner.namespace=${ns}`;
  const out: string[] = [];
  for (const plural of ['clusterroles', 'clusterrolebindings'] as const) {
    for (const o of await olm.admin.list<Obj>(`${paths.rbac(plural)}?labelSelector=${encodeURIComponent(sel)}`)) out.push(`${plural}/${o.metadata.name}`);
  }
  return out;
}

describe.each(versions)('real OLM %s: CSV deleted while olm-operator is down', (version) => {
  let olm: OlmBed;
  let medic: Medic;
  beforeAll(async () => {
    olm = await startOlm(version);
    medic = await startMedic({ OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
  });
  const made: string[] = [];
  afterAll(async () => {
    // The next file must find a cluster without this file's installs (a later OLM version would adopt
    // them: v0.46 adds its CSV finalizer to v0.25's CSVs, and a cluster-wide sweep then acts on them).
    if (olm) await forgetInstalls(olm.admin, made);
    await medic?.stop();
    await olm?.stop();
  });

  it(!olmAddsCsvFinalizer(version) ? 'orphans cluster RBAC; olm-medic cleans it; OLM has nothing left to do' : 'olm-medic defers to OLM\'s finalizer (zero writes); OLM cleans up when back', async () => {
    const ns = await namespace(olm.admin, 'csv-del');
    made.push(ns);
    await subscribe(olm.admin, ns, 'medic-beta');
    await until(async () => (await csvPhase(olm.admin, ns, CSV)) === 'Succeeded', `${ns}: ${CSV} Succeeded`, 240_000, olm.procs());
    const csv = (await olm.admin.get<Obj>(paths.olm(ns, 'clusterserviceversions', CSV)))!;
    const rbac = await ownedClusterRbac(olm, ns);
    process.stderr.write(`[findings ${version}] installed CSV finalizers=${JSON.stringify(csv.metadata.finalizers)} cluster RBAC=${JSON.stringify(rbac)}\n`);
    expect(rbac.length).toBeGreaterThanOrEqual(2);
    const medicFinalizer = (csv.metadata.finalizers ?? []).filter((f) => f !== 'operators.coreos.com/csv-cleanup');

    // The documented uninstall, with olm-operator down.
    await olm.admin.delete(paths.olm(ns, 'subscriptions', 'medic-beta'));
    await olm.stopOlmOperator();
    const since = Date.now();
    await olm.admin.delete(paths.olm(ns, 'clusterserviceversions', CSV));

    if (!olmAddsCsvFinalizer(version)) {
      expect(csv.metadata.finalizers ?? []).not.toContain('operators.coreos.com/csv-cleanup');
      // olm-medic cleans the orphaned cluster RBAC (from the CSV's delete event).
      await until(async () => (await ownedClusterRbac(olm, ns)).length === 0, 'olm-medic to delete the orphaned cluster RBAC', 60_000);
      const writes = writesBy(cp.shippedUser, since).filter((e) => (e.responseStatus?.code ?? 500) < 300);
      process.stderr.write(`[findings ${version}] olm-medic writes: ${writes.map(describeWrite).join('; ')} (its own finalizer on the CSV before: ${JSON.stringify(medicFinalizer)})\n`);
      expect(writes.some((e) => e.verb === 'delete' && e.objectRef?.resource === 'clusterroles')).toBe(true);
    } else {
      expect(csv.metadata.finalizers).toContain('operators.coreos.com/csv-cleanup');
      const held = await olm.admin.get<Obj>(paths.olm(ns, 'clusterserviceversions', CSV));
      expect(held?.metadata.deletionTimestamp, 'the CSV is held by OLM\'s finalizer').toBeTruthy();
      await new Promise((r) => setTimeout(r, 15_000));
      const sweep = await cli(['sweep', '--namespace', ns, '-o', 'json']);
      process.stderr.write(`[findings ${version}] sweep while OLM's finalizer holds the CSV: exit ${sweep.code} ${sweep.stdout.slice(0, 600)}\n`);
      expect(writesBy(cp.shippedUser, since).map(describeWrite)).toEqual([]);
      expect(await ownedClusterRbac(olm, ns)).toEqual(rbac);
    }

    // OLM back up: it finishes (v0.28+: runs its finalizer) and, either way, nothing is left.
    await olm.startOlmOperator();
    await until(async () => !(await olm.admin.get(paths.olm(ns, 'clusterserviceversions', CSV))), `${ns}: the CSV to be gone`, 120_000, olm.procs());
    await until(async () => (await ownedClusterRbac(olm, ns)).length === 0, 'no cluster RBAC left for the CSV', 120_000, olm.procs());
  });
});
