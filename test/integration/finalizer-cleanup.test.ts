/**
 * finalizer-cleanup on the real control plane (olm-facts §4, §5).
 *
 * A. CSV cleanup that survives downtime: OLM < v0.27 has no CSV finalizer, so a CSV deleted while
 *    olm-operator is down orphans its cluster-scoped RBAC and webhooks (issue #3143). olm-medic adds
 *    its own finalizer, deletes the objects labelled olm.owner*=<csv> on deletion, waits until they
 *    are gone, and only then removes its finalizer. Orphans of CSVs that are already gone are swept.
 * B. Uninstall leftovers listed by the Operator object <pkg>.<ns>: removed only on request (an
 *    annotation) or, opted in, when there is no Subscription and the CSV has failed for long. CRDs
 *    are kept (only the component label is removed); the Operator object is deleted last.
 *
 * Every situation has a twin in which exactly one safety condition fails and nothing is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { Kube, KubeObject, Ref } from '../../shared/kube/types.js';
import { createRuntime, type Runtime } from '../../shared/wiring.js';
import type { AuditEntry } from '../control-plane/control-plane.js';
import { eventually, testCluster, type MedicEvent } from '../support/cluster.js';
import { restFromKubeconfig } from '../olm/rest.js';
import { apiServerEvent } from '../support/events.js';
import {
  COMPONENT_LABEL_PREFIX,
  CSV_CLEANUP_FINALIZER,
  componentLabelKey,
  componentLabels,
  csv,
  csvClusterRole,
  csvClusterRoleBinding,
  csvComponentConditions,
  csvOwnerLabels,
  csvRole,
  csvStatus,
  csvWebhook,
  installPlan,
  installPlanStatus,
  nonBlockingOwnerRef,
  operatorObject,
  OPERATORS_V1ALPHA1,
  subscription,
  type ComponentRef,
  type CsvOptions,
  type Obj,
} from '../fixtures/olm-objects.js';

const c = testCluster();
const MEDIC_FINALIZER = 'olm-medic.io/csv-cleanup';
const HOLD = 'test.olm-medic.io/hold';
const HOUR = 3_600_000;

const runtimes: Runtime[] = [];
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.engine.close();
});

function runtime(env: Record<string, string> = {}, now?: () => Date): Runtime {
  const rt = c.runtime([finalizerCleanup], env, now ? { now } : {});
  runtimes.push(rt);
  return rt;
}

/** olm-medic's clock 2 h after the apiserver's: for scenes that need an object to be old. */
const twoHoursLater = (): Date => new Date(Date.now() + 2 * HOUR);

const asObj = (o: Obj): KubeObject => o as KubeObject;
const refOf = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
const live = (o: KubeObject) => c.get(refOf(o));
const related = (e: MedicEvent) => (e as unknown as { related?: { kind: string; name: string; namespace?: string } }).related;

async function send(rt: Runtime, verb: 'add' | 'update' | 'delete', obj: KubeObject): Promise<Outcome[]> {
  return rt.engine.handle(decodeEvent(apiServerEvent(verb, obj)));
}

async function sweep(rt: Runtime, namespace: string): Promise<Outcome[]> {
  return rt.engine.handle({ kind: 'sweep', namespace, functions: ['finalizer-cleanup'], meta: { id: `sweep-${namespace}`, source: 'test', type: 'io.olm-medic.sweep' } });
}

const WRITES = ['delete', 'deletecollection', 'patch', 'update'];
/** Writes olm-medic made to objects in `ns` or to the named cluster-scoped objects. */
function writesTo(ns: string | undefined, clusterNames: string[] = []): AuditEntry[] {
  const writes = c.audit().filter((e) => WRITES.includes(e.verb) && ((ns !== undefined && e.objectRef?.namespace === ns) || (!e.objectRef?.namespace && clusterNames.includes(e.objectRef?.name ?? ''))));
  return withoutRetryEchoes(writes);
}

/**
 * The client retries a write whose answer was lost (timeout, cut connection, 5xx) on a loaded
 * machine; the apiserver may have done the first one. The retry then changes nothing: its
 * preconditions make it a 404 (delete) or a 409 (patch) on the object the first one wrote. Those
 * echoes are dropped; any other repeated write stays and fails the exact-request assertions.
 */
function withoutRetryEchoes(writes: AuditEntry[]): AuditEntry[] {
  const done = new Set<string>();
  return writes.filter((e) => {
    const key = `${e.verb}/${e.objectRef?.resource}/${e.objectRef?.namespace ?? ''}/${e.objectRef?.name}`;
    const code = e.responseStatus?.code ?? 0;
    if (done.has(key) && code === (e.verb === 'delete' ? 404 : 409)) return false;
    if (code >= 200 && code < 300) done.add(key);
    return true;
  });
}

/** Same uid and resourceVersion as the snapshot. */
async function expectSame(objs: KubeObject[]): Promise<void> {
  for (const o of objs) {
    const l = await live(o);
    expect(l, `${o.kind} ${o.metadata.name} still exists`).toBeDefined();
    expect([l!.metadata.uid, l!.metadata.resourceVersion], `${o.kind} ${o.metadata.name} unchanged`).toEqual([o.metadata.uid, o.metadata.resourceVersion]);
  }
}

/** Events olm-medic wrote about a cluster-scoped object (they live in "default"). */
async function clusterEvents(regardingName: string, kind?: string): Promise<MedicEvent[]> {
  return (await c.medicEvents('default')).filter((e) => e.regarding.name === regardingName && (!kind || e.regarding.kind === kind));
}

// ---------------------------------------------------------------------------------------------
// Situation A
// ---------------------------------------------------------------------------------------------

interface CsvWithRbac {
  ns: string;
  csv: KubeObject;
  clusterRole: KubeObject;
  clusterRoleBinding: KubeObject;
  webhook: KubeObject;
  owned: KubeObject[];
}

/** An original CSV as OLM writes it (finalizers per version) plus the cluster-scoped RBAC and webhook it labels as its own. */
async function csvWithClusterRbac(ns: string, o: Partial<CsvOptions> & { holdBinding?: boolean } = {}): Promise<CsvWithRbac> {
  const name = o.name ?? 'etcdoperator.v0.9.4';
  const built = csv({ namespace: ns, name, ...o });
  const created = await c.create(asObj(built));
  await c.setStatus(created, built.status);
  const clusterRole = await c.create(asObj(csvClusterRole({ csvName: name, csvNamespace: ns, name: `${name}-${ns}-cr` })));
  const crb = csvClusterRoleBinding({ csvName: name, csvNamespace: ns, roleName: clusterRole.metadata.name, serviceAccountName: 'etcd-operator' });
  if (o.holdBinding) crb.metadata.finalizers = [HOLD];
  const clusterRoleBinding = await c.create(asObj(crb));
  const webhook = await c.create(asObj(csvWebhook('Validating', { csvName: name, csvNamespace: ns, deploymentName: 'etcd-operator' })));
  return { ns, csv: (await live(created))!, clusterRole, clusterRoleBinding, webhook, owned: [clusterRole, clusterRoleBinding, webhook] };
}

describe('finalizer-cleanup A: CSV cleanup that survives controller downtime', () => {
  it('adds its finalizer to an original CSV without one, and after a delete while controllers are down removes the labelled objects, confirms them gone, then lets the CSV go', async () => {
    const ns = await c.namespace('fca');
    const s = await csvWithClusterRbac(ns, { holdBinding: true });
    // A namespaced Role owned by the CSV via ownerRef: Kubernetes GC's job, not ours.
    const role = await c.create(asObj(csvRole({ csvName: s.csv.metadata.name, csvNamespace: ns, csvUid: s.csv.metadata.uid! })));
    expect(s.csv.metadata.finalizers).toBeUndefined(); // OLM < v0.27
    const rt = runtime();

    // 1. The CSV add event: our finalizer is added.
    const added = await send(rt, 'add', s.csv);
    expect(added).toMatchObject([{ status: 'acted', actions: [{ verb: 'patch', reason: 'CsvFinalizerAdded', result: 'done' }] }]);
    expect((await live(s.csv))?.metadata.finalizers).toEqual([MEDIC_FINALIZER]);

    // 2. Controllers are down and the CSV is deleted the kubectl way: it stays, held by our finalizer.
    await c.admin.delete(refOf(s.csv), { uid: s.csv.metadata.uid!, propagationPolicy: 'Background', dryRun: false });
    const deleting = (await live(s.csv))!;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.finalizers).toEqual([MEDIC_FINALIZER]);
    for (const o of s.owned) expect(await live(o)).toBeDefined();

    // 3. The update event (deletionTimestamp set): every labelled object is deleted.
    const cleaned = await send(rt, 'update', deleting);
    expect(cleaned).toHaveLength(1);
    expect(cleaned[0]).toMatchObject({ status: 'acted', requeueAfterSeconds: 2 });
    expect(cleaned[0]!.actions?.map((a) => [a.verb, a.target, a.result]).sort()).toEqual(
      [
        ['delete', `ClusterRole/${s.clusterRole.metadata.name}`, 'done'],
        ['delete', `ClusterRoleBinding/${s.clusterRoleBinding.metadata.name}`, 'done'],
        ['delete', `ValidatingWebhookConfiguration/${s.webhook.metadata.name}`, 'done'],
      ].sort(),
    );
    expect(await live(s.clusterRole)).toBeUndefined();
    expect(await live(s.webhook)).toBeUndefined();

    // 4. Not confirmed gone yet (the binding is still finalizing): the CSV keeps our finalizer.
    expect((await live(s.clusterRoleBinding))?.metadata.deletionTimestamp).toBeDefined();
    expect((await sweep(rt, ns)).map((o) => o.status)).toContain('requeued');
    expect((await live(s.csv))?.metadata.finalizers).toEqual([MEDIC_FINALIZER]);
    const csvPatches = () => writesTo(ns).filter((e) => e.objectRef?.resource === 'clusterserviceversions' && e.verb === 'patch');
    expect(csvPatches()).toHaveLength(1); // only the add

    // 5. The binding finishes deleting; olm-medic's own re-check removes the finalizer and the CSV goes.
    await c.admin.mergePatch(refOf(s.clusterRoleBinding), { metadata: { finalizers: null } }, { dryRun: false });
    await eventually(async () => (await live(s.csv)) === undefined, 'the CSV to be deleted');
    expect(csvPatches()).toHaveLength(2);
    for (const o of s.owned) expect(await live(o)).toBeUndefined();
    // Namespaced objects are Kubernetes GC's (ownerRef to the CSV), never olm-medic's.
    expect(role.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ClusterServiceVersion', uid: s.csv.metadata.uid });
    expect(writesTo(ns).filter((e) => e.objectRef?.resource === 'roles')).toEqual([]);
    // Each labelled object was deleted by olm-medic exactly once.
    const names = s.owned.map((o) => o.metadata.name);
    expect(writesTo(undefined, names).map((e) => [e.objectRef?.name, e.verb, e.responseStatus?.code]).sort()).toEqual(names.map((n) => [n, 'delete', 200]).sort());

    const events = (await c.medicEvents(ns)).filter((e) => e.regarding.uid === s.csv.metadata.uid);
    expect(events.map((e) => e.reason).sort()).toEqual(['CsvCleanupCompleted', 'CsvFinalizerAdded', 'CsvOwnedObjectDeleted', 'CsvOwnedObjectDeleted', 'CsvOwnedObjectDeleted']);
    expect(events.filter((e) => e.reason === 'CsvOwnedObjectDeleted').map((e) => related(e)?.name).sort()).toEqual([...names].sort());
    expect(events.every((e) => e.type === 'Normal' && e.reportingController === 'olm-medic.io/finalizer-cleanup')).toBe(true);
  });

  it('survives a crash between steps: the finalizer stays until a later event finishes the cleanup', async () => {
    const ns = await c.namespace('fca');
    const s = await csvWithClusterRbac(ns);
    await send(runtime(), 'add', s.csv);
    await c.admin.delete(refOf(s.csv), { uid: s.csv.metadata.uid!, propagationPolicy: 'Background', dryRun: false });
    const deleting = (await live(s.csv))!;

    // The first olm-medic process dies after its first delete: a writer that fails on the second.
    const kube = createKube(loadKubeConfig(c.kubeconfig.medic));
    let deletes = 0;
    const dying: Kube = {
      get: (r) => kube.get(r),
      list: (a, k, o) => kube.list(a, k, o),
      create: (o, w) => kube.create(o, w),
      mergePatch: (r, p, w) => kube.mergePatch(r, p, w),
      serverNow: () => kube.serverNow(),
      delete: async (r, o) => {
        if (++deletes > 1) throw new Error('olm-medic was killed');
        return kube.delete(r, o);
      },
    };
    const config = loadConfig({ LOG_LEVEL: 'silent', KUBECONFIG: c.kubeconfig.medic }, [finalizerCleanup]);
    const first = createRuntime(config, [finalizerCleanup], { kube: dying, log: pino({ level: 'silent' }) });
    runtimes.push(first);
    const out = await send(first, 'update', deleting);
    expect(out.map((o) => o.status)).toEqual(['failed']);
    first.engine.close(); // the process is gone, and its requeue timers with it

    // Half done: one object deleted, two left, and the CSV still held by our finalizer.
    const left = [];
    for (const o of s.owned) if (await live(o)) left.push(o);
    expect(left).toHaveLength(2);
    const held = (await live(s.csv))!;
    expect(held.metadata.finalizers).toEqual([MEDIC_FINALIZER]);

    // A fresh process gets the (redelivered) event and finishes.
    const second = runtime();
    const again = await send(second, 'update', held);
    expect(again[0]).toMatchObject({ status: 'acted' });
    // (the engine may already have looked again and removed the finalizer within the same outcome)
    expect(again[0]!.actions?.filter((a) => a.verb === 'delete').map((a) => a.target).sort()).toEqual(left.map((o) => `${o.kind}/${o.metadata.name}`).sort());
    await eventually(async () => (await live(s.csv)) === undefined, 'the CSV to be deleted');
    for (const o of s.owned) expect(await live(o)).toBeUndefined();
    const reasons = (await c.medicEvents(ns)).filter((e) => e.regarding.uid === s.csv.metadata.uid).map((e) => e.reason).sort();
    expect(reasons).toEqual(['CsvCleanupCompleted', 'CsvFinalizerAdded', 'CsvOwnedObjectDeleted', 'CsvOwnedObjectDeleted', 'CsvOwnedObjectDeleted']);
  });

  it('a cleanup delete the apiserver refuses for good (a ValidatingAdmissionPolicy protecting the ClusterRole) is sent once: a Warning names it, the rest goes, the CSV is released (red team 28a F1)', async () => {
    const ns = await c.namespace('fca');
    const s = await csvWithClusterRbac(ns);
    const rt = runtime();
    await send(rt, 'add', s.csv);
    const PROTECTED = 'test.olm-medic.io/protected';
    await c.admin.mergePatch(refOf(s.clusterRole), { metadata: { labels: { [PROTECTED]: 'true' } } }, { dryRun: false });
    const rest = restFromKubeconfig(c.kubeconfig.admin);
    const policyName = `protect-${ns}`;
    await rest.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: policyName },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: ['rbac.authorization.k8s.io'], apiVersions: ['v1'], operations: ['DELETE'], resources: ['clusterroles'] }] },
        validations: [{ expression: `!has(oldObject.metadata.labels) || !('${PROTECTED}' in oldObject.metadata.labels)`, message: 'protected ClusterRoles are not deleted' }],
      },
    });
    await rest.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: policyName },
      spec: { policyName, validationActions: ['Deny'] },
    });
    try {
      // The policy is in force once a dry-run delete (admission runs for it too) is refused.
      const crPath = `/apis/rbac.authorization.k8s.io/v1/clusterroles/${s.clusterRole.metadata.name}`;
      // (A policy's denial is a 422 Invalid unless its validation names another reason.)
      await eventually(async () => (await rest.request('DELETE', `${crPath}?dryRun=All`)).status === 422, 'the ValidatingAdmissionPolicy to be in force');

      await c.admin.delete(refOf(s.csv), { uid: s.csv.metadata.uid!, propagationPolicy: 'Background', dryRun: false });
      const deleting = (await live(s.csv))!;
      const out = await send(rt, 'update', deleting);
      // The binding and webhook are deleted; the ClusterRole's delete is refused (a Warning) and not retried.
      // (the engine may already have looked again and released the CSV within the same outcome)
      expect(out[0]!.actions?.filter((a) => a.verb === 'delete').map((a) => a.target).sort()).toEqual([`ClusterRoleBinding/${s.clusterRoleBinding.metadata.name}`, `ValidatingWebhookConfiguration/${s.webhook.metadata.name}`].sort());
      await eventually(async () => (await live(s.csv)) === undefined, 'the CSV to be released and deleted');
      expect(await live(s.clusterRole), 'the protected ClusterRole is kept').toBeDefined();
      const crDeletes = writesTo(undefined, [s.clusterRole.metadata.name]).filter((e) => e.verb === 'delete' && e.objectRef?.resource === 'clusterroles');
      expect(crDeletes.map((e) => e.responseStatus?.code), 'one refused delete, not one per look').toEqual([422]);
      const events = (await c.medicEvents(ns)).filter((e) => e.regarding.uid === s.csv.metadata.uid);
      const refused = events.filter((e) => e.reason === 'WriteRefused');
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ type: 'Warning', action: 'Refuse' });
      expect(related(refused[0]!)?.name).toBe(s.clusterRole.metadata.name);
      expect(refused[0]!.note).toContain('protected ClusterRoles are not deleted');
      const released = events.filter((e) => e.reason === 'CsvCleanupIncomplete');
      expect(released).toHaveLength(1);
      expect(released[0]!.note).toContain(s.clusterRole.metadata.name);
    } finally {
      await rest.delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${policyName}`);
      await rest.delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${policyName}`);
    }
  });

  it('twin: a copied CSV (label olm.copiedFrom) gets no finalizer', async () => {
    const operatorNs = await c.namespace('fca');
    const targetNs = await c.namespace('fca-target');
    const built = csv({ namespace: targetNs, name: 'etcdoperator.v0.9.4', copiedFrom: operatorNs });
    const created = await c.create(asObj(built));
    const copy = await c.setStatus(created, built.status);
    expect(copy.metadata.labels?.['olm.copiedFrom']).toBe(operatorNs);
    const rt = runtime();
    expect((await send(rt, 'add', copy)).map((o) => o.status)).toEqual(['ignored']);
    expect((await sweep(rt, targetNs)).map((o) => o.status)).toEqual(['noop']);
    await expectSame([copy]);
    expect((await live(copy))?.metadata.finalizers).toBeUndefined();
    expect(writesTo(targetNs)).toEqual([]);
    expect(await c.medicEvents(targetNs)).toEqual([]);
  });

  it("twin: a CSV with OLM's operators.coreos.com/csv-cleanup finalizer gets none, and its deletion is left to OLM", async () => {
    const ns = await c.namespace('fca');
    const s = await csvWithClusterRbac(ns, { finalizers: [CSV_CLEANUP_FINALIZER] });
    const rt = runtime();
    expect((await send(rt, 'add', s.csv)).map((o) => o.status)).toEqual(['ignored']);
    await c.admin.delete(refOf(s.csv), { uid: s.csv.metadata.uid!, propagationPolicy: 'Background', dryRun: false });
    const deleting = (await live(s.csv))!;
    expect((await send(rt, 'update', deleting)).map((o) => o.status)).toEqual(['ignored']);
    expect((await live(s.csv))?.metadata.finalizers).toEqual([CSV_CLEANUP_FINALIZER]);
    await expectSame([deleting, ...s.owned]);
    expect(writesTo(ns, s.owned.map((o) => o.metadata.name))).toEqual([]);
    expect(await c.medicEvents(ns)).toEqual([]);
  });
});

describe('finalizer-cleanup A: orphan sweep', () => {
  /** A CSV from before olm-medic: no finalizer at all, deleted while OLM was down, leaving its labelled objects. */
  async function orphans(ns: string) {
    const s = await csvWithClusterRbac(ns);
    await c.admin.delete(refOf(s.csv), { uid: s.csv.metadata.uid!, propagationPolicy: 'Background', dryRun: false });
    expect(await live(s.csv)).toBeUndefined();
    const unrelated = await c.create(asObj({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `unrelated-${ns}` }, rules: [] }));
    return { ...s, unrelated };
  }

  it('deletes labelled objects whose CSV never had our finalizer and is gone (orphanGraceSeconds 0); unrelated ClusterRoles untouched', async () => {
    const ns = await c.namespace('fco');
    const s = await orphans(ns);
    for (const o of s.owned) expect(await live(o)).toBeDefined(); // the orphaned state
    const out = await sweep(runtime({ OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' }), ns);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'acted', target: `ClusterServiceVersion/${ns}/${s.csv.metadata.name}` });
    for (const o of s.owned) expect(await live(o)).toBeUndefined();
    await expectSame([s.unrelated]);
    expect(writesTo(undefined, [s.unrelated.metadata.name])).toEqual([]);
    for (const o of s.owned) {
      const ev = await clusterEvents(o.metadata.name, o.kind);
      expect(ev.map((e) => [e.reason, e.type, e.action, e.regarding.kind])).toEqual([['CsvLeftoverDeleted', 'Normal', 'Delete', o.kind]]);
      expect(ev[0]!.note).toContain(`CSV ${ns}/${s.csv.metadata.name}, which no longer exists`);
    }
    expect(await clusterEvents(s.unrelated.metadata.name)).toEqual([]);
  });

  it('twin: the same orphans younger than orphanGraceSeconds (default 120 s) are left alone for now', async () => {
    const ns = await c.namespace('fco');
    const s = await orphans(ns);
    const out = await sweep(runtime(), ns);
    expect(out).toMatchObject([{ status: 'requeued', requeueAfterSeconds: 120 }]);
    await expectSame([...s.owned, s.unrelated]);
    expect(writesTo(undefined, [...s.owned, s.unrelated].map((o) => o.metadata.name))).toEqual([]);
  });

  it('twin: a labelled ClusterRole whose CSV still exists is never deleted by the sweep', async () => {
    const ns = await c.namespace('fco');
    const s = await csvWithClusterRbac(ns);
    const out = await sweep(runtime({ OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' }), ns);
    expect(out.map((o) => o.status)).not.toContain('failed');
    await expectSame(s.owned);
    const names = s.owned.map((o) => o.metadata.name);
    expect(writesTo(undefined, names)).toEqual([]);
    expect(c.audit().filter((e) => e.verb === 'delete' && (e.objectRef?.namespace === ns || names.includes(e.objectRef?.name ?? '')))).toEqual([]);
    // The living CSV only gains our finalizer (so its own deletion is cleaned up later).
    expect((await live(s.csv))?.metadata.finalizers).toEqual([MEDIC_FINALIZER]);
    for (const o of s.owned) expect(await clusterEvents(o.metadata.name, o.kind)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Situation B
// ---------------------------------------------------------------------------------------------

const PKG = 'widget-operator';
const CSV_NAME = 'widget-operator.v1.2.0';

interface Leftovers {
  ns: string;
  opName: string;
  labelKey: string;
  operator: KubeObject;
  csv: KubeObject;
  crd: KubeObject;
  /** Deletable leftovers other than the CSV. */
  others: KubeObject[];
  /** Listed in refs but no longer labelled (someone took it over). */
  unlabelled?: KubeObject;
  subscription?: KubeObject;
  /** The install's InstallPlan (Complete, labelled, listed), when asked for. */
  installPlan?: KubeObject;
}

/**
 * An operator removed through OLM's documented path that left things behind: the CSV is Failed, and
 * its Deployment, ServiceAccount, Role, RoleBinding, a ConfigMap and the owned CRD all carry the
 * component label operators.coreos.com/<pkg>.<ns>; the Operator object lists them in
 * status.components.refs.
 */
async function leftovers(ns: string, o: { annotate?: boolean; subscription?: boolean; phase?: 'Failed' | 'Succeeded'; since?: Date; unlabelledRef?: boolean; secret?: boolean; installPlan?: boolean } = {}): Promise<Leftovers> {
  const labels = componentLabels(PKG, ns);
  const labelKey = componentLabelKey(PKG, ns);
  const group = `${ns}.example.com`;
  const crd = await c.create(asObj({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}`, labels },
    spec: {
      group,
      names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
      scope: 'Namespaced',
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
        subresources: { status: {} },
      }],
    },
  }));
  const phase = o.phase ?? 'Failed';
  const built = csv({ namespace: ns, name: CSV_NAME, phase, at: o.since ?? new Date(Date.now() - 2 * HOUR), labels, ownedCRDs: [{ name: crd.metadata.name, version: 'v1', kind: 'Widget' }] });
  const created = await c.create(asObj(built));
  const theCsv = await c.setStatus(created, built.status);
  const owner = nonBlockingOwnerRef({ apiVersion: OPERATORS_V1ALPHA1, kind: 'ClusterServiceVersion', name: CSV_NAME, uid: theCsv.metadata.uid! });
  const ownerLabels = { ...csvOwnerLabels(CSV_NAME, ns), ...labels };
  const deployment = await c.create(asObj({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${PKG}-controller-manager`, namespace: ns, labels: { ...ownerLabels, 'olm.deployment-spec-hash': '7bd8f9c8d6' }, ownerReferences: [owner] },
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'control-plane': 'controller-manager' } },
      template: { metadata: { labels: { 'control-plane': 'controller-manager' } }, spec: { serviceAccountName: `${PKG}-controller-manager`, containers: [{ name: 'manager', image: 'quay.io/example/widget-operator:v1.2.0' }] } },
    },
  }));
  const sa = await c.create(asObj({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `${PKG}-controller-manager`, namespace: ns, labels: { 'olm.managed': 'true', ...labels }, ownerReferences: [owner] } }));
  const builtRole = csvRole({ csvName: CSV_NAME, csvNamespace: ns, csvUid: theCsv.metadata.uid! });
  builtRole.metadata.labels = { ...builtRole.metadata.labels, ...labels };
  const role = await c.create(asObj(builtRole));
  const roleBinding = await c.create(asObj({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: role.metadata.name, namespace: ns, labels: { ...role.metadata.labels }, ownerReferences: [owner] },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name },
    subjects: [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: ns }],
  }));
  const configMap = await c.create(asObj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${PKG}-manager-config`, namespace: ns, labels }, data: { 'controller_manager_config.yaml': 'apiVersion: v1\n' } }));
  const unlabelled = o.unlabelledRef
    ? await c.create(asObj({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared-settings', namespace: ns, labels: { app: 'someone-else' } }, data: { a: '1' } }))
    : undefined;
  const secret = o.secret
    ? await c.create(asObj({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${PKG}-webhook-cert`, namespace: ns, labels }, stringData: { 'tls.key': 'private' } }))
    : undefined;
  const sub = o.subscription
    ? await c.create(asObj(subscription({ namespace: ns, name: PKG, package: PKG, source: 'operatorhubio-catalog', sourceNamespace: 'olm', channel: 'stable' })))
    : undefined;
  const plan = o.installPlan ? await c.create(asObj(installPlan({ namespace: ns, csvNames: [CSV_NAME], labels }))) : undefined;
  const ip = plan ? await c.setStatus(plan, installPlanStatus({ phase: 'Complete', catalogSources: ['operatorhubio-catalog'] })) : undefined;

  const ref = (x: KubeObject): ComponentRef => ({ kind: x.kind, apiVersion: x.apiVersion, name: x.metadata.name, ...(x.metadata.namespace ? { namespace: x.metadata.namespace } : {}) });
  const refs: ComponentRef[] = [
    { ...ref(theCsv), conditions: csvComponentConditions(theCsv.status as Obj) },
    ref(crd),
    ref(deployment),
    ref(sa),
    ref(role),
    ref(roleBinding),
    ref(configMap),
    ...(unlabelled ? [ref(unlabelled)] : []),
    ...(secret ? [ref(secret)] : []),
    ...(sub ? [ref(sub)] : []),
    ...(ip ? [ref(ip)] : []),
  ];
  const builtOp = operatorObject({ pkg: PKG, namespace: ns, refs });
  if (o.annotate) builtOp.metadata.annotations = { 'olm-medic.io/uninstall': 'true' };
  const op = await c.create(asObj(builtOp));
  const operator = await c.setStatus(op, builtOp.status);
  return {
    ns,
    opName: operator.metadata.name,
    labelKey,
    operator,
    csv: theCsv,
    crd: (await live(crd))!,
    others: [deployment, sa, role, roleBinding, configMap],
    ...(unlabelled ? { unlabelled } : {}),
    ...(sub ? { subscription: sub } : {}),
    ...(ip ? { installPlan: ip } : {}),
  };
}

/** The leftovers state before anything happens. */
function expectLeftovers(l: Leftovers): void {
  expect(l.opName).toBe(`${PKG}.${l.ns}`);
  expect(l.labelKey).toBe(`${COMPONENT_LABEL_PREFIX}${PKG}.${l.ns}`);
  expect((l.operator.status as { components: { refs: unknown[] } }).components.refs.length).toBeGreaterThanOrEqual(7);
  for (const o of [l.csv, l.crd, ...l.others]) expect(o.metadata.labels?.[l.labelKey]).toBe('');
}

/** Uninstalled: deletables gone (CSV first), the CRD kept without the label, the Operator deleted last, with Events. */
async function expectUninstalled(l: Leftovers, o: { auto?: boolean } = {}): Promise<void> {
  await eventually(async () => (await live(l.operator)) === undefined, 'the Operator object to be deleted', 30_000);
  for (const o of [l.csv, ...l.others]) expect(await live(o), `${o.kind} ${o.metadata.name} deleted`).toBeUndefined();
  const crd = (await live(l.crd))!;
  expect(crd.metadata.uid).toBe(l.crd.metadata.uid);
  expect(crd.metadata.labels?.[l.labelKey]).toBeUndefined();

  // Requests: one delete per deletable leftover, the CSV first; the CRD only patched; never deleted.
  const nsDeletes = writesTo(l.ns).filter((e) => e.verb === 'delete');
  expect(nsDeletes[0]?.objectRef).toMatchObject({ resource: 'clusterserviceversions', name: CSV_NAME });
  // Every delete targets a leftover, at most once each. Fewer deletes than leftovers is fine: once the
  // CSV is gone Kubernetes' GC may remove the CSV-owned ones first, and a delete that finds its
  // target gone makes olm-medic re-read rather than keep writing from a stale view.
  const leftoverNames = new Set([l.csv, ...l.others].map((o) => o.metadata.name));
  for (const e of nsDeletes) expect(leftoverNames.has(e.objectRef?.name ?? ''), `${e.objectRef?.resource}/${e.objectRef?.name}`).toBe(true);
  expect(new Set(nsDeletes.map((e) => `${e.objectRef?.resource}/${e.objectRef?.name}`)).size).toBe(nsDeletes.length);
  const clusterWrites = writesTo(undefined, [l.crd.metadata.name, l.opName]);
  expect(clusterWrites.map((e) => [e.objectRef?.resource, e.verb, e.responseStatus?.code])).toEqual([
    // autoUninstall first records its decision on the Operator (the CSV it rests on is deleted next)
    ...(o.auto ? [['operators', 'patch', 200]] : []),
    ['customresourcedefinitions', 'patch', 200],
    ['operators', 'delete', 200],
  ]);

  const events = await clusterEvents(l.opName);
  const deleted = events.filter((e) => e.reason === 'OperatorLeftoverDeleted');
  // Kubernetes GC may remove a CSV-owned object between olm-medic's CSV delete and its own (a 404 is
  // success, and no Event is written for it): an Event for exactly the deletes that removed something.
  const removedByUs = nsDeletes.filter((e) => e.responseStatus?.code === 200).map((e) => e.objectRef?.name).sort();
  expect(removedByUs).toContain(CSV_NAME);
  expect(deleted.map((e) => related(e)?.name).sort()).toEqual(removedByUs);
  expect(events.filter((e) => e.reason === 'ComponentLabelRemoved').map((e) => related(e)?.name)).toEqual([l.crd.metadata.name]);
  expect(events.filter((e) => e.reason === 'OperatorDeleted').map((e) => [e.type, e.action, e.regarding.uid])).toEqual([['Normal', 'Delete', l.operator.metadata.uid]]);
  expect(events.filter((e) => e.reason === 'AutoUninstallStarted').map((e) => [e.type, e.action])).toEqual(o.auto ? [['Normal', 'Patch']] : []);
  expect(events.length).toBe(deleted.length + 2 + (o.auto ? 1 : 0));
}

/** Nothing deleted or patched for these leftovers. */
async function expectNothingTouched(l: Leftovers): Promise<void> {
  await expectSame([l.operator, l.csv, l.crd, ...l.others]);
  expect(writesTo(l.ns, [l.crd.metadata.name, l.opName])).toEqual([]);
}

describe('finalizer-cleanup B: uninstall leftovers', () => {
  it('with annotation olm-medic.io/uninstall=true deletes every deletable leftover (CSV first), keeps the CRD minus its label, then deletes the Operator', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { annotate: true });
    expectLeftovers(l);
    const out = await send(runtime(), 'update', l.operator);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'acted', target: `Operator/${l.opName}` });
    expect(out[0]!.actions?.[0]).toMatchObject({ verb: 'delete', target: `ClusterServiceVersion/${ns}/${CSV_NAME}` });
    expect(out[0]!.actions?.some((a) => a.verb === 'delete' && a.target.startsWith('CustomResourceDefinition/'))).toBe(false);
    await expectUninstalled(l);
    // The CSV is in the refs and is a component too: each look reads it once, not once per role.
    const gets = (resource: string, name: string, namespace?: string) =>
      c.audit().filter((e) => e.verb === 'get' && e.objectRef?.resource === resource && e.objectRef.name === name && e.objectRef.namespace === namespace).length;
    const looks = gets('operators', l.opName);
    expect(looks).toBeGreaterThanOrEqual(3); // CSV, then the rest, then the Operator: three stages
    expect(gets('clusterserviceversions', CSV_NAME, ns)).toBeLessThanOrEqual(looks);
  });

  it("a write that finds its target already gone re-plans from live state: GC removes the InstallPlan between olm-medic's read and its delete (seen on real OLM v0.25.0), and the same handling goes on to the CSV and the rest, with no further event", async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { annotate: true, installPlan: true });
    const ip = l.installPlan!;
    // The race, made certain: right after olm-medic's first look at the Operator (which read the
    // plan as live), the plan is deleted, as GC does once its Subscription is gone.
    let raced = false;
    const racing: typeof finalizerCleanup = {
      ...finalizerCleanup,
      async observe(ref, read, ctx) {
        const seen = await finalizerCleanup.observe(ref, read, ctx);
        if (!raced && seen?.kind === 'operator' && seen.components.some((x) => x.ref.kind === 'InstallPlan' && x.live)) {
          raced = true;
          await c.admin.delete(refOf(ip), { uid: ip.metadata.uid!, dryRun: false });
        }
        return seen;
      },
    };
    const rt = c.runtime([racing]);
    runtimes.push(rt);
    const out = await send(rt, 'update', l.operator);
    expect(raced).toBe(true);
    // olm-medic's delete of the plan found it gone (404), and it did not stop there: the same
    // handling re-read the Operator and deleted the CSV (the next stage).
    const deletes = writesTo(ns).filter((e) => e.verb === 'delete');
    expect(deletes.slice(0, 2).map((e) => [e.objectRef?.resource, e.responseStatus?.code])).toEqual([['installplans', 404], ['clusterserviceversions', 200]]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ status: 'acted', target: `Operator/${l.opName}` });
    expect(out[0]!.actions?.[0]).toMatchObject({ verb: 'delete', target: `ClusterServiceVersion/${ns}/${CSV_NAME}`, result: 'done' });
    // No Event claims the delete that found nothing; the uninstall finishes on its own re-checks.
    await eventually(async () => (await live(l.operator)) === undefined, 'the Operator object to be deleted', 30_000);
    for (const o of [l.csv, ...l.others]) expect(await live(o), `${o.kind} ${o.metadata.name} deleted`).toBeUndefined();
    const events = await clusterEvents(l.opName);
    expect(events.filter((e) => related(e)?.name === ip.metadata.name)).toEqual([]);
    expect(events.filter((e) => e.reason === 'OperatorDeleted')).toHaveLength(1);
  });

  it('a labelled Secret in the refs is never read or deleted: the rest goes, a Warning names the Secret, the Operator stays until it is gone', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { annotate: true, secret: true });
    await send(runtime(), 'update', l.operator);
    await eventually(async () => (await live(l.csv)) === undefined, 'the CSV to be deleted');
    for (const o of l.others) await eventually(async () => (await live(o)) === undefined, `${o.kind} deleted`);
    const secretRef = { apiVersion: 'v1', kind: 'Secret', namespace: ns, name: `${PKG}-webhook-cert` };
    expect(await c.get(secretRef)).toBeDefined();
    expect(await live(l.operator)).toBeDefined();
    expect(c.audit().filter((e) => e.objectRef?.resource === 'secrets')).toEqual([]); // not even a read
    // Written by the Operator's next look once only the Secret is left (a follow-up or the requeue timer).
    const warning = await eventually(async () => (await clusterEvents(l.opName)).find((e) => e.reason === 'UninstallSecretsKept'), 'the UninstallSecretsKept Warning', 30_000);
    expect(warning.type).toBe('Warning');
    expect(warning.note).toContain(`${ns}/${PKG}-webhook-cert`);
  });

  it('twin: a ref that no longer carries the component label is kept', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { annotate: true, unlabelledRef: true });
    await send(runtime(), 'update', l.operator);
    await expectUninstalled(l);
    await expectSame([l.unlabelled!]);
  });

  it('twin: without annotation or opt-in, a long-Failed CSV only gets a Warning Event UninstallLeftoversKept with guidance', async () => {
    const ns = await c.namespace('fcb');
    // The CSV is created and fails now on the apiserver's clock; olm-medic looks 2 h later (a backdated
    // phase transition would be bounded by the CSV's creation, which the apiserver stamps).
    const l = await leftovers(ns, { since: new Date() });
    const out = await send(runtime({ OLM_MEDIC_FINALIZER_CLEANUP_FAILED_CSV_GRACE_SECONDS: '600' }, twoHoursLater), 'update', l.operator);
    expect(out.map((o) => o.status)).toEqual(['refused']);
    await expectNothingTouched(l);
    const events = await clusterEvents(l.opName);
    expect(events.map((e) => [e.reason, e.type, e.action])).toEqual([['UninstallLeftoversKept', 'Warning', 'Refuse']]);
    expect(events[0]!.note).toContain(`has been Failed for over 600s`);
    expect(events[0]!.note).toContain(`Annotate Operator ${l.opName} with olm-medic.io/uninstall=true`);
  });

  it('twin: a CSV Failed for less than failedCsvGraceSeconds gets no Event and no deletes', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { since: new Date(Date.now() - 60_000) });
    const out = await send(runtime({ OLM_MEDIC_FINALIZER_CLEANUP_FAILED_CSV_GRACE_SECONDS: '600' }), 'update', l.operator);
    expect(out.map((o) => o.status)).toEqual(['noop']);
    await expectNothingTouched(l);
    expect(await clusterEvents(l.opName)).toEqual([]);
  });

  it('twin: annotation present but a Subscription for the package still exists: refused, nothing deleted', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { annotate: true, subscription: true });
    const out = await send(runtime(), 'update', l.operator);
    expect(out.map((o) => o.status)).toEqual(['refused']);
    await expectNothingTouched(l);
    await expectSame([l.subscription!]);
    const events = await clusterEvents(l.opName);
    expect(events.map((e) => [e.reason, e.type])).toEqual([['UninstallLeftoversKept', 'Warning']]);
    expect(events[0]!.note).toContain(`Subscription ${ns}/${PKG} still uses ${l.labelKey}`);
    expect(events[0]!.note).toContain('Delete the Subscription first');
  });

  it('twin: deleting only the Subscription is not an uninstall: no deletes, no Events', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { phase: 'Succeeded', subscription: true });
    await c.admin.delete(refOf(l.subscription!), { uid: l.subscription!.metadata.uid!, dryRun: false });
    const rt = runtime();
    expect((await send(rt, 'delete', l.subscription!)).map((o) => o.status)).toEqual(['ignored']);
    expect((await send(rt, 'update', l.operator)).map((o) => o.status)).toEqual(['noop']);
    await expectNothingTouched(l);
    expect(await clusterEvents(l.opName)).toEqual([]);
  });

  it("a recorded automatic uninstall whose CSV the admin deletes with --cascade=orphan: real garbage collection hands the Deployment back, it serves, and olm-medic takes the record back instead of deleting it (red team 42, O1)", async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { since: new Date() });
    const rt = runtime({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true', OLM_MEDIC_FINALIZER_CLEANUP_FAILED_CSV_GRACE_SECONDS: '600' }, twoHoursLater);
    // olm-medic's record of an automatic uninstall, made while the operator's pods were down.
    await c.admin.mergePatch(refOf(l.operator), { metadata: { annotations: { 'olm-medic.io/uninstall': 'auto', 'olm-medic.io/uninstall-csvs': `${ns}/${l.csv.metadata.name}` } } }, { dryRun: false });
    const recorded = (await live(l.operator))!;
    // The admin takes the operator off OLM the Kubernetes way: the CSV goes, what it owns stays.
    expect(await c.admin.delete(refOf(l.csv), { uid: l.csv.metadata.uid!, propagationPolicy: 'Orphan', dryRun: false })).not.toBe('gone');
    await eventually(async () => (await live(l.csv)) === undefined, 'the CSV to be deleted', 30_000);
    const dep = l.others.find((o) => o.kind === 'Deployment')!;
    await eventually(async () => ((await live(dep))?.metadata.ownerReferences ?? []).length === 0, 'garbage collection to orphan the Deployment', 30_000);
    // ... and its pods serve again.
    await c.setStatus((await live(dep))!, { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 });
    const before = await live(dep);

    const out = await send(rt, 'update', recorded);
    expect(out.map((o) => o.status)).toEqual(['acted']);
    const after = await live(dep);
    expect(after?.metadata.uid, 'the serving Deployment is kept').toBe(before?.metadata.uid);
    expect(writesTo(ns).filter((e) => e.verb === 'delete').map((e) => `${e.objectRef?.resource}/${e.objectRef?.name}`), 'nothing of the operator deleted by olm-medic').toEqual([]);
    expect((await live(l.operator))?.metadata.annotations?.['olm-medic.io/uninstall'], 'the record is taken back').toBeUndefined();
    const cancelled = (await clusterEvents(l.opName)).filter((e) => e.reason === 'AutoUninstallCancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.note).toContain(`Deployment ${ns}/${dep.metadata.name} is available`);
  });

  it('opt-in autoUninstall: no Subscription and the CSV Failed longer than failedCsvGraceSeconds: cleaned up without annotation', async () => {
    const ns = await c.namespace('fcb');
    const l = await leftovers(ns, { since: new Date() });
    expect(l.operator.metadata.annotations?.['olm-medic.io/uninstall']).toBeUndefined();
    const rt = runtime({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true', OLM_MEDIC_FINALIZER_CLEANUP_FAILED_CSV_GRACE_SECONDS: '600' }, twoHoursLater);
    const out = await send(rt, 'update', l.operator);
    expect(out.map((o) => o.status)).toEqual(['acted']);
    await expectUninstalled(l, { auto: true });
  });
});
