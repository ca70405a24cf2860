/**
 * The safe side, against real OLM: a healthy install (Jobs Complete, plans owned, CSV Succeeded) and
 * an upgrade v0.1.0 -> v0.2.0, both produced by the real OLM controllers, must cause ZERO olm-medic
 * writes (audit log), through real events (Knative's ApiServerSource adapter -> the production server,
 * as the shipped ServiceAccounts) and through a CLI sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CATALOG, csvPhase, forgetInstalls, namespace, startOlm, subscribe, type OlmBed } from './bed.js';
import { isLoopbackOrUnset, sockets, until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { cli, describeWrite, olmAddsCsvFinalizer, pathOf, startMedic, writesBy, type Medic } from './support.js';

const cp = inject('controlPlane');
const bed = inject('olmBed');
const versions = Object.keys(bed.versions);

let medic: Medic;
beforeAll(async () => {
  medic = await startMedic();
});
afterAll(async () => {
  await medic?.stop();
});

describe.each(versions)('real OLM %s, healthy', (version) => {
  let olm: OlmBed;
  const made: string[] = [];
  beforeAll(async () => {
    olm = await startOlm(version);
  });
  afterAll(async () => {
    // The next version's install must be a healthy one on a fresh cluster, not an OLM upgrade that
    // inherits this version's unpack Jobs (bed.ts forgetInstalls).
    if (olm) await forgetInstalls(olm.admin, made);
    await olm?.stop();
  });

  it('OLM and the catalog server listen and connect on loopback only', async () => {
    const procs = olm.procs();
    expect(procs.map((p) => p.name)).toEqual(['catalog-server', `catalog-operator ${version}`, `olm-operator ${version}`]);
    for (const p of procs) {
      // Each of them talks (to the apiserver, or serves OLM): wait until the check sees real sockets.
      const socks = await until(async () => {
        const s = sockets(p.proc.pid!);
        return s.some((x) => !x.listening) && s;
      }, `${p.name} to hold connected sockets`, 60_000);
      const offending = socks.filter((s) => !isLoopbackOrUnset(s.local, !s.listening) || !isLoopbackOrUnset(s.remote, true));
      expect(offending, `${p.name}: ${JSON.stringify(socks)}`).toEqual([]);
    }
  });

  let since = 0;
  // (Until the bed's kwok Nodes renewed their Leases, this stalled whenever it outlived the Nodes' first
  // 55 s, on every version: medic-alpha v0.1.0 looped in Installing, v0.2.0 waited for it to be
  // Replacing; test/olm/nodes.test.ts.)
  it('a fresh install and an upgrade v0.1.0 -> v0.2.0 reach CSV Succeeded through completed unpack Jobs and owned InstallPlans', async () => {
    since = Date.now() - 1000;
    const [nsA, nsB] = [await namespace(olm.admin, 'healthy-a'), await namespace(olm.admin, 'healthy-b')];
    made.push(nsA, nsB);
    await subscribe(olm.admin, nsA, 'medic-beta');
    await subscribe(olm.admin, nsB, 'medic-alpha', { startingCSV: 'medic-alpha.v0.1.0' });
    await until(async () => (await csvPhase(olm.admin, nsA, 'medic-beta.v0.1.0')) === 'Succeeded', `${nsA}: medic-beta.v0.1.0 Succeeded`, 240_000, olm.procs());
    // The upgrade: OLM installs v0.1.0, then replaces it with v0.2.0.
    await until(async () => (await csvPhase(olm.admin, nsB, 'medic-alpha.v0.2.0')) === 'Succeeded', `${nsB}: medic-alpha.v0.2.0 Succeeded`, 240_000, olm.procs());
    await until(async () => !(await olm.admin.get(paths.olm(nsB, 'clusterserviceversions', 'medic-alpha.v0.1.0'))), `${nsB}: v0.1.0 replaced`, 120_000, olm.procs());

    // OLM got there through unpack Jobs that completed and InstallPlans it owns.
    const jobs = await olm.admin.list<Obj>(paths.batch(CATALOG.namespace));
    expect(olm.unpacker.played.length).toBeGreaterThanOrEqual(3);
    for (const j of jobs) expect(j.status?.conditions?.find((c: { type: string }) => c.type === 'Complete')?.status, j.metadata.name).toBe('True');
    for (const ns of [nsA, nsB]) {
      const subs = await olm.admin.list<Obj>(paths.olm(ns, 'subscriptions'));
      for (const ip of await olm.admin.list<Obj>(paths.olm(ns, 'installplans'))) {
        for (const s of subs) expect(ip.metadata.ownerReferences?.map((o) => o.uid), `${ns}/${ip.metadata.name}`).toContain(s.metadata.uid);
      }
    }
    // Let the adapter deliver everything OLM wrote, then a sweep over the whole cluster.
    await new Promise((r) => setTimeout(r, 5_000));
    const sweep = await cli(['sweep', '-o', 'json']);
    expect(sweep.code, sweep.stdout + sweep.stderr).toBe(0);
    // The audit log records writes by user: OLM's controllers wrote plenty (the check below can see writes).
    expect(writesBy(bed.users.catalog, since).length).toBeGreaterThan(0);
    expect(writesBy(bed.users.olm, since).length).toBeGreaterThan(0);
  });

  // This suite found olm-medic writing during a healthy v0.28.0 install before main's fixes (finalizer-cleanup
  // patched brand-new CSVs before OLM's first sync, ownerref-repair labelled fresh InstallPlans before
  // OLM's adoption controller; /work/notes/olm-findings.md). After merging them: zero write requests.
  it.runIf(olmAddsCsvFinalizer(version))('olm-medic made zero write requests through all of it (events and the sweep)', () => {
    expect(since).toBeGreaterThan(0);
    expect(writesBy(cp.shippedUser, since).map(describeWrite)).toEqual([]);
  });

  // On v0.25.0, by design (lead's call), not zero: OLM < v0.27 adds no CSV finalizer, so olm-medic adds its
  // own to every CSV, and when OLM deletes the replaced v0.1.0 it deletes that CSV's cluster RBAC and
  // releases it (test/olm/FINDINGS.md) - work OLM v0.25's own GC queue would also do while it is up.
  // Pinned to exactly that: finalizer patches of this test's CSVs, deletes of v0.1.0's ClusterRole/Binding,
  // Events. Anything else (a Job, an InstallPlan, a Subscription, another CSV's RBAC) fails.
  it.skipIf(olmAddsCsvFinalizer(version))('olm-medic wrote only its own CSV finalizers, the replaced CSV\'s cluster RBAC deletes and Events', () => {
    expect(since).toBeGreaterThan(0);
    const writes = writesBy(cp.shippedUser, since);
    const csvs = /^\/apis\/operators\.coreos\.com\/v1alpha1\/namespaces\/healthy-[ab][\w-]*\/clusterserviceversions\/medic-(alpha|beta)\.v0\.[12]\.0$/;
    const rbac = /^\/apis\/rbac\.authorization\.k8s\.io\/v1\/(clusterroles|clusterrolebindings)\/medic-alpha\.v0\.1\.0-[\w.-]+$/;
    const events = /^\/(api\/v1|apis\/events\.k8s\.io\/v1)\/namespaces\/[\w-]+\/events(\/[\w.-]+)?$/;
    const allowed = (e: (typeof writes)[number]): boolean => {
      const path = pathOf(e);
      if (e.verb === 'patch' || e.verb === 'update') return csvs.test(path);
      if (e.verb === 'delete') return rbac.test(path);
      if (e.verb === 'create') return events.test(path);
      return false;
    };
    expect(writes.filter((e) => !allowed(e)).map(describeWrite)).toEqual([]);
    // The pin is not vacuous: olm-medic's finalizer went onto the CSVs (and came off the replaced one).
    expect(writes.filter((e) => e.verb === 'patch' && csvs.test(pathOf(e))).length).toBeGreaterThan(0);
  });
});
