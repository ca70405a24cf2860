/**
 * Seed 5 against real OLM: uninstall leftovers listed by the Operator object, for the package whose
 * `<pkg>.<ns>` is longer than 63 characters, installed in two namespaces whose keys collide (the
 * same first 63 characters), so OLM names ONE Operator object after the truncated key for both.
 *   1. OLM's own naming, checked: the Operator is named by the truncated key (not `.<ns>`), and its
 *      status.components.refs span both namespaces.
 *   2. Namespace A is uninstalled the way users leave it half done (Subscription deleted, CSV and
 *      the rest left) and the Operator annotated olm-medic.io/uninstall=true. ONE `olm-medic sweep
 *      --namespace A` (the CLI, as the shipped ServiceAccount) removes A's leftovers and returns
 *      "acted, finished" (exit 3): it follows its own re-checks (the CSV's deletion, OLM's finalizer on
 *      v0.28+) instead of leaving work behind. Namespace B, which still subscribes under the same key,
 *      is untouched (no write names it) and stays Succeeded; the Operator object stays. OLM, left
 *      running, recreates none of A's parts (OLM recreates OperatorConditions while a CSV is held by
 *      its finalizer: the CSV must go first).
 *   3. With olm-medic's server and Knative's real adapter running, B's Subscription is deleted: the
 *      events alone finish the uninstall (the annotation stays on the Operator) and the Operator object
 *      goes, and OLM does not recreate it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { csvPhase, forgetInstalls, LONG_PACKAGE, startOlm, subscribe, type OlmBed } from './bed.js';
import { until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { cli, describeWrite, runVersions, startMedic, writesBy, type Medic } from './support.js';

const cp = inject('controlPlane');
const versions = runVersions(['v0.25.0', 'v0.28.0', 'v0.46.0']);
const CSV = `${LONG_PACKAGE}.v0.1.0`;

interface Ref {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}
const refsOf = (op: Obj | undefined): Ref[] => (op?.status?.components?.refs ?? []) as Ref[];

/** Cluster RBAC OLM made for the CSV in `ns` (olm.owner labels). */
async function clusterRbacOf(olm: OlmBed, ns: string): Promise<string[]> {
  const sel = encodeURIComponent(`olm.owner=${CSV},olm.owner.namespace=${ns}`);
  const out: string[] = [];
  for (const plural of ['clusterroles', 'clusterrolebindings'] as const) {
    for (const o of await olm.admin.list<Obj>(`${paths.rbac(plural)}?labelSelector=${sel}`)) out.push(`${plural}/${o.metadata.name}`);
  }
  return out;
}

/** What still carries the key in `ns`, by the kinds a test can list without reading Secrets. */
async function labelledIn(olm: OlmBed, ns: string, key: string): Promise<string[]> {
  const sel = `?labelSelector=${encodeURIComponent(key)}`;
  const out: string[] = [];
  const lists: [string, string][] = [
    ['clusterserviceversions', paths.olm(ns, 'clusterserviceversions')],
    ['installplans', paths.olm(ns, 'installplans')],
    ['subscriptions', paths.olm(ns, 'subscriptions')],
    ['operatorconditions', `/apis/operators.coreos.com/v2/namespaces/${ns}/operatorconditions`],
    ['deployments', paths.apps(ns, 'deployments')],
    ['serviceaccounts', paths.core(ns, 'serviceaccounts')],
    ['configmaps', paths.core(ns, 'configmaps')],
    ['services', paths.core(ns, 'services')],
    ['roles', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`],
    ['rolebindings', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`],
  ];
  for (const [kind, p] of lists) for (const o of await olm.admin.list<Obj>(`${p}${sel}`)) out.push(`${kind}/${o.metadata.name}`);
  return out;
}

async function makeNamespace(olm: OlmBed, name: string): Promise<string> {
  await olm.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

describe.each(versions)('real OLM %s: uninstall leftovers of a long-named package under one truncated key', (version) => {
  let olm: OlmBed;
  let medic: Medic | undefined;
  // Both names start with the same 10 characters: LONG_PACKAGE (52) + '.' + 10 = 63.
  const stem = `lc${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}xx`;
  const [nsA, nsB] = [`${stem}-a`, `${stem}-b`];
  const opName = `${LONG_PACKAGE}.${stem}`;
  const key = `operators.coreos.com/${opName}`;
  const made: string[] = [];
  beforeAll(async () => {
    olm = await startOlm(version);
  });
  afterAll(async () => {
    if (olm) {
      // v0.25 CSVs carry olm-medic's finalizer once its server ran: forget them while it still runs.
      medic ??= await startMedic();
      await forgetInstalls(olm.admin, made);
      // The next version's run must find no Operator of this package (its naming check counts them).
      await olm.admin.delete(paths.operators(opName));
      await until(async () => !(await olm.admin.get(paths.operators(opName))), `Operator ${opName} gone`, 60_000);
    }
    await medic?.stop();
    await olm?.stop();
  });

  /**
   * Subscribes `ns` and waits until its CSV is Succeeded and the Operator object lists it. Real OLM
   * v0.25.0 sometimes never takes the last step (CI 2026-11-23, -24, -25): the CSV is Succeeded but
   * never labelled with the key, so the Operator never lists it. Seen in two forms: B's
   * installedCSV set and the adoption controller silent (a Subscription update or an olm-operator
   * restart helped), and B's Subscription without installedCSV, catalog-operator then failing every
   * resolution of B with "clusterserviceversion ... exists and is not referenced by a subscription"
   * (nothing but a reinstall helped). So, what a user does, one step at a time, each reported as a
   * finding: update the Subscription, restart olm-operator, then reinstall (delete the Subscription
   * and the CSV, subscribe again). olm-medic is not running yet; none of this involves it.
   */
  async function installListed(ns: string): Promise<Obj> {
    await subscribe(olm.admin, ns, LONG_PACKAGE);
    let started = Date.now();
    let step = 0;
    const say = (m: string) => process.stderr.write(`[findings ${version}] ${ns}: ${m}\n`);
    return until(async () => {
      const phase = await csvPhase(olm.admin, ns, CSV);
      const o = await olm.admin.get<Obj>(paths.operators(opName));
      if (phase === 'Succeeded' && refsOf(o).some((r) => r.kind === 'ClusterServiceVersion' && r.namespace === ns)) return o;
      const age = Date.now() - started;
      if (age < 40_000 * (step + 1)) return undefined;
      const sub = await olm.admin.get<Obj>(paths.olm(ns, 'subscriptions', LONG_PACKAGE));
      const st = `CSV phase ${phase ?? 'absent'}; Subscription state=${sub?.status?.state ?? ''} currentCSV=${sub?.status?.currentCSV ?? ''} installedCSV=${sub?.status?.installedCSV ?? ''}`;
      step++;
      if (step === 1) {
        say(`${st}; not listed by Operator ${opName} after 40 s: updating the Subscription`);
        await olm.admin.mergePatch(paths.olm(ns, 'subscriptions', LONG_PACKAGE), { metadata: { annotations: { 'olm-medic-test/nudge': '1' } } });
      } else if (step === 2) {
        say(`${st}; still not listed: restarting olm-operator`);
        await olm.stopOlmOperator();
        await olm.startOlmOperator();
      } else if (step === 3) {
        say(`${st}; still not listed: reinstalling (Subscription and CSV deleted, subscribed again)`);
        await olm.admin.delete(paths.olm(ns, 'subscriptions', LONG_PACKAGE));
        await olm.admin.delete(paths.olm(ns, 'clusterserviceversions', CSV));
        await until(async () => !(await olm.admin.get(paths.olm(ns, 'clusterserviceversions', CSV))), `${ns}: ${CSV} gone before the reinstall`, 60_000, olm.procs());
        await subscribe(olm.admin, ns, LONG_PACKAGE);
        started = Date.now() - 40_000 * step;
      }
      return undefined;
    }, `${ns}: ${CSV} Succeeded and listed by Operator ${opName}`, 420_000, olm.procs());
  }

  it("OLM names one Operator object for both installs by the truncated key, its refs spanning both namespaces", async () => {
    expect(opName.length).toBe(63);
    // One namespace after the other: the second install finds the Operator object the first made.
    made.push(await makeNamespace(olm, nsA));
    await installListed(nsA);
    made.push(await makeNamespace(olm, nsB));
    await installListed(nsB);
    // Both listed at once (B's install must not have dropped A).
    const op = await until(async () => {
      const o = await olm.admin.get<Obj>(paths.operators(opName));
      const csvs = refsOf(o).filter((r) => r.kind === 'ClusterServiceVersion').map((r) => r.namespace);
      return csvs.includes(nsA) && csvs.includes(nsB) ? o : undefined;
    }, `Operator ${opName} listing both CSVs`, 60_000, olm.procs());
    expect(op.status?.components?.labelSelector?.matchExpressions).toEqual([{ key, operator: 'Exists' }]);
    // Neither `<pkg>.<nsA>` nor `<pkg>.<nsB>` exists as an Operator: the name is the key's.
    const names = (await olm.admin.list<Obj>(paths.operators())).map((o) => o.metadata.name).filter((n) => n.startsWith(LONG_PACKAGE));
    expect(names).toEqual([opName]);
    process.stderr.write(`[findings ${version}] Operator ${opName} refs: ${refsOf(op).map((r) => `${r.kind} ${r.namespace ?? ''}/${r.name}`).join(', ')}\n`);
  }, 900_000);

  it("one CLI sweep of namespace A removes A's leftovers and returns finished (exit 3); B and the Operator are untouched; OLM recreates nothing", async () => {
    const bBefore = await labelledIn(olm, nsB, key);
    expect(bBefore).toContain(`clusterserviceversions/${CSV}`);
    const bRbac = await clusterRbacOf(olm, nsB);
    expect(bRbac.length).toBeGreaterThanOrEqual(2);
    expect((await clusterRbacOf(olm, nsA)).length).toBeGreaterThanOrEqual(2);

    await olm.admin.delete(paths.olm(nsA, 'subscriptions', LONG_PACKAGE));
    await olm.admin.mergePatch(paths.operators(opName), { metadata: { annotations: { [MEDIC.uninstall]: 'true' } } });
    const since = Date.now() - 1000;
    const sweep = await cli(['sweep', '--namespace', nsA, '-o', 'json']);
    process.stderr.write(`[findings ${version}] sweep exit ${sweep.code}: ${sweep.stdout.slice(0, 1500)}\n${sweep.stderr.slice(-1500)}\n`);
    expect(sweep.code, sweep.stderr.slice(-2000)).toBe(3);

    // When the sweep returns, A's parts are gone (the ones OLM deletes with the CSV are gone too).
    expect(await olm.admin.get(paths.olm(nsA, 'clusterserviceversions', CSV))).toBeUndefined();
    expect(await labelledIn(olm, nsA, key)).toEqual([]);
    expect(await clusterRbacOf(olm, nsA)).toEqual([]);

    // OLM keeps running: A stays empty, B stays installed, the shared Operator stays (B claims it).
    await new Promise((r) => setTimeout(r, 20_000));
    expect(await labelledIn(olm, nsA, key)).toEqual([]);
    expect(await csvPhase(olm.admin, nsB, CSV)).toBe('Succeeded');
    expect(await labelledIn(olm, nsB, key)).toEqual(bBefore);
    expect(await clusterRbacOf(olm, nsB)).toEqual(bRbac);
    const op = await olm.admin.get<Obj>(paths.operators(opName));
    expect(op, 'the Operator object B still uses').toBeTruthy();
    await until(async () => {
      const refs = refsOf(await olm.admin.get<Obj>(paths.operators(opName)));
      return !refs.some((r) => r.namespace === nsA) && refs.some((r) => r.namespace === nsB);
    }, `OLM to list only ${nsB}'s parts on Operator ${opName}`, 60_000, olm.procs());

    // No olm-medic write names B or anything outside A but the Events it records.
    const writes = writesBy(cp.shippedUser, since).filter((e) => (e.responseStatus?.code ?? 500) < 300);
    process.stderr.write(`[findings ${version}] olm-medic writes for A:\n  ${writes.map(describeWrite).join('\n  ')}\n`);
    expect(writes.filter((e) => e.objectRef?.namespace === nsB && e.objectRef?.resource !== 'events').map(describeWrite)).toEqual([]);
    expect(writes.some((e) => e.verb === 'delete' && e.objectRef?.resource === 'clusterserviceversions' && e.objectRef?.namespace === nsA)).toBe(true);
    expect(writes.filter((e) => e.verb === 'delete' && e.objectRef?.resource === 'operators').map(describeWrite)).toEqual([]);
  });

  it("with the server and the real adapter running, deleting B's Subscription is enough: the events remove B's leftovers and the Operator object, and OLM does not recreate it", async () => {
    medic = await startMedic();
    const since = Date.now() - 1000;
    await olm.admin.delete(paths.olm(nsB, 'subscriptions', LONG_PACKAGE));
    await until(async () => !(await olm.admin.get(paths.operators(opName))), `olm-medic to remove Operator ${opName}`, 180_000, olm.procs());
    expect(await olm.admin.get(paths.olm(nsB, 'clusterserviceversions', CSV))).toBeUndefined();
    expect(await labelledIn(olm, nsB, key)).toEqual([]);
    await new Promise((r) => setTimeout(r, 20_000));
    expect(await olm.admin.get(paths.operators(opName)), 'OLM recreated the Operator').toBeUndefined();
    expect(await clusterRbacOf(olm, nsB)).toEqual([]);
    const writes = writesBy(cp.shippedUser, since).filter((e) => (e.responseStatus?.code ?? 500) < 300);
    process.stderr.write(`[findings ${version}] olm-medic writes for B:\n  ${writes.map(describeWrite).join('\n  ')}\n`);
    expect(writes.filter((e) => e.objectRef?.namespace === nsA && e.objectRef?.resource !== 'events').map(describeWrite)).toEqual([]);
  });
});
