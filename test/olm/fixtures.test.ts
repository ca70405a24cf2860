/**
 * The fixture builders (test/fixtures/olm-objects.ts), which every fast suite builds its OLM objects
 * with, checked against what the real OLM version they claim to mirror wrote: after OLM installs a
 * package, its unpack Job, the Job's ConfigMap, the InstallPlan, the Subscription's status and the
 * CSV are compared with the builders' output for the same identity and OLM version — on what
 * olm-medic decides by (names, labels, ownerReferences, the annotations it reads, finalizers, the
 * Job's deadline/TTL/backoff, installPlanRef, the catalog-health condition). A builder that drifts
 * from OLM fails here, not in a cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fx from '../fixtures/olm-objects.js';
import { MEDIC } from '../../shared/olm/constants.js';
import { CATALOG, csvPhase, forgetInstalls, namespace, startOlm, subscribe, UNPACK_TIMEOUT_SECONDS, type OlmBed } from './bed.js';
import { until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { runVersions } from './support.js';

const versions = runVersions(['v0.25.0', 'v0.28.0', 'v0.46.0']);
const PKG = 'medic-beta';
const CSV = 'medic-beta.v0.1.0';

/** Any object, real (rest.ts) or built (fixtures). */
type Any = fx.Obj;
const owners = (o: Any): Any[] =>
  (o.metadata.ownerReferences ?? []).map((r: Any) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid, controller: r.controller ?? false, blockOwnerDeletion: r.blockOwnerDeletion ?? false }));
/** Labels Kubernetes' job controller adds to every Job and its template (not OLM's, not modelled). */
const ours = (labels: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => !k.startsWith('batch.kubernetes.io/') && k !== 'controller-uid' && k !== 'job-name'));
const jobShape = (j: Any): Any => ({
  name: j.metadata.name,
  labels: ours(j.metadata.labels),
  owners: owners(j),
  backoffLimit: j.spec.backoffLimit,
  activeDeadlineSeconds: j.spec.activeDeadlineSeconds ?? null,
  ttlSecondsAfterFinished: j.spec.ttlSecondsAfterFinished ?? null,
  templateLabels: ours(j.spec.template.metadata?.labels),
  serviceAccountName: j.spec.template.spec.serviceAccountName ?? null,
});
const pick = (m: Record<string, string> | undefined, keys: string[]): Record<string, string> => Object.fromEntries(keys.flatMap((k) => (m?.[k] !== undefined ? [[k, m[k]!]] : [])));

describe.each(versions)('fixture builders vs real OLM %s', (version) => {
  let olm: OlmBed;
  let ns: string;
  beforeAll(async () => {
    olm = await startOlm(version);
    ns = await namespace(olm.admin, 'fixtures');
    await subscribe(olm.admin, ns, PKG);
    await until(async () => (await csvPhase(olm.admin, ns, CSV)) === 'Succeeded', `${ns}: ${CSV} Succeeded`, 240_000, olm.procs());
  });
  afterAll(async () => {
    if (olm && ns) await forgetInstalls(olm.admin, [ns]);
    await olm?.stop();
  });

  it('unpack Job and its ConfigMap: names (the image hash), labels, owners, deadline, TTL, backoff, pod SA', async () => {
    const catalog = (await olm.admin.get<Obj>(paths.olm(CATALOG.namespace, 'catalogsources', CATALOG.name)))!;
    const jobs = await olm.admin.list<Obj>(paths.batch(CATALOG.namespace));
    expect(jobs.length).toBeGreaterThan(0);
    for (const real of jobs) {
      const image = [...(real.spec.template.spec.initContainers ?? []), ...real.spec.template.spec.containers].find((c: Any) => c.name === 'pull')?.image as string;
      const cm = (await olm.admin.get<Obj>(paths.core(CATALOG.namespace, 'configmaps', real.metadata.name)))!;
      const built = fx.unpackJob({ namespace: CATALOG.namespace, image, configMapUid: cm.metadata.uid!, olmVersion: version, activeDeadlineSeconds: UNPACK_TIMEOUT_SECONDS });
      expect(jobShape(real), `Job ${real.metadata.name} (${image})`).toEqual(jobShape(built));
      const builtCm = fx.unpackConfigMap({ namespace: CATALOG.namespace, image, catalogSourceName: CATALOG.name, catalogSourceUid: catalog.metadata.uid! });
      expect({ name: cm.metadata.name, labels: cm.metadata.labels ?? {}, owners: owners(cm) }, `ConfigMap ${cm.metadata.name}`).toEqual({ name: builtCm.metadata.name, labels: builtCm.metadata.labels ?? {}, owners: owners(builtCm) });
    }
  });

  it("InstallPlan: generateName, owners (every Subscription of the namespace), component label, approval, CSV names", async () => {
    const [sub] = await olm.admin.list<Obj>(paths.olm(ns, 'subscriptions'));
    const [real] = await olm.admin.list<Obj>(paths.olm(ns, 'installplans'));
    const built = fx.installPlan({ namespace: ns, csvNames: [CSV], ownerSubs: [{ name: sub!.metadata.name, uid: sub!.metadata.uid! }], labels: fx.componentLabels(PKG, ns) });
    const shape = (ip: Any): Any => ({
      generateName: ip.metadata.generateName,
      owners: owners(ip),
      componentLabels: pick(ip.metadata.labels, Object.keys(fx.componentLabels(PKG, ns))),
      approval: ip.spec.approval,
      approved: ip.spec.approved,
      // As a set: OLM v0.25.0 lists a bundle's CSV twice (a CSV step and the bundle lookup's identifier,
      // catalog/operator.go v0.25.0:1358-1368; v0.46.0 only the steps, :1795-1800). olm-medic reads it
      // with includes().
      clusterServiceVersionNames: [...new Set(ip.spec.clusterServiceVersionNames as string[])].sort(),
    });
    expect(shape(real!)).toEqual(shape(built));
  });

  it("Subscription status: installPlanRef and installplan as setIPReference writes them; the catalog-health condition", async () => {
    // OLM v0.25.0 can drop installPlanRef after the CSV Succeeded (seen in CI on 2026-11-25: its
    // updateSubscriptionStatuses writes back a whole in-memory status, catalog/operator.go
    // v0.25.0:1454-1487, the same clobber as uninstall.test.ts's flake). This test is about the
    // shape OLM writes, not when: wait for it, and after 20 s touch the Subscription so OLM syncs it.
    const t0 = Date.now();
    let nudged = false;
    const real = await until(async () => {
      const [s] = await olm.admin.list<Obj>(paths.olm(ns, 'subscriptions'));
      if (s?.status?.installPlanRef) return s;
      if (s && !nudged && Date.now() - t0 > 20_000) {
        nudged = true;
        process.stderr.write(`[findings ${version}] Subscription ${ns}/${s.metadata.name} has no installPlanRef 20 s after its CSV Succeeded (status ${JSON.stringify(s.status)}): touched it\n`);
        await olm.admin.mergePatch(paths.olm(ns, 'subscriptions', s.metadata.name), { metadata: { annotations: { 'olm-medic.io/test-touch': String(Date.now()) } } });
      }
      return undefined;
    }, `${ns}: the Subscription's installPlanRef`, 90_000, olm.procs());
    const [ip] = await olm.admin.list<Obj>(paths.olm(ns, 'installplans'));
    const st = real!.status;
    const ref = { name: ip!.metadata.name, namespace: ns, uid: ip!.metadata.uid!, resourceVersion: st.installPlanRef?.resourceVersion };
    expect(st.installPlanRef).toEqual(fx.installPlanRef(ref));
    expect(st.installplan).toEqual(fx.installPlanReference(ref));
    const health = (c: Any | undefined): Any | undefined => c && { type: c.type, status: c.status, reason: c.reason, message: c.message };
    expect(health(st.conditions?.find((c: Any) => c.type === 'CatalogSourcesUnhealthy'))).toEqual(health(fx.catalogSourcesHealthyCondition()));
  });

  it("CSV: OLM's finalizers and labels (olm-medic's own aside), the OperatorGroup annotations olm-medic reads", async () => {
    const real = (await olm.admin.get<Obj>(paths.olm(ns, 'clusterserviceversions', CSV)))!;
    const og = real.metadata.annotations?.['olm.operatorGroup'];
    const built = fx.csv({ namespace: ns, name: CSV, olmVersion: version, ...(og ? { operatorGroup: og } : {}) });
    const component = Object.keys(fx.componentLabels(PKG, ns));
    const shape = (c: Any): Any => ({
      finalizers: (c.metadata.finalizers ?? []).filter((f: string) => f !== MEDIC.finalizer),
      labels: Object.fromEntries(Object.entries(c.metadata.labels ?? {}).filter(([k]) => !component.includes(k))),
      annotations: pick(c.metadata.annotations, ['olm.operatorGroup', 'olm.operatorNamespace', 'olm.targetNamespaces']),
    });
    expect(shape(real)).toEqual(shape(built));
  });
});
