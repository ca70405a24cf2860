/**
 * The five seed situations, built through the API exactly as OLM (and Kubernetes) write the
 * objects. Shared by the end-to-end test, `npm run demo` and the benchmarks. Each seed returns a
 * `healed()` probe that reads the cluster, so callers can wait for the real event flow to fix it.
 */
import type { Kube, KubeObject, Ref } from '../../shared/kube/types.js';
import { MEDIC } from '../../shared/olm/constants.js';
import * as olm from '../fixtures/olm-objects.js';

export interface Situation {
  name: string;
  /** What the user sees before the fix. */
  symptom: string;
  /** Event reasons of the actions that fix it (to attribute the fix to the event that caused it). */
  fixedBy: string[];
  /** Namespaces the situation lives in (scoped sweeps in tests). */
  namespaces: string[];
  /** True once the cluster is healed. */
  healed(): Promise<boolean>;
  /** Optional trigger step: wait until `ready()` (olm-medic has prepared, e.g. its finalizer), then `act()` breaks things. */
  trigger?: { ready(): Promise<boolean>; act(): Promise<void> };
}

type Obj = Record<string, any>;
const minutesAgo = (m: number): Date => new Date(Date.now() - m * 60_000);
const IMAGE = 'quay.io/example/etcd-operator-bundle:v0.9.4';

async function create(kube: Kube, obj: Obj): Promise<KubeObject> {
  return kube.create(obj as KubeObject, { dryRun: false });
}
async function status(kube: Kube, obj: KubeObject, st: Obj): Promise<KubeObject> {
  const { apiVersion, kind, metadata } = obj;
  return live(await kube.mergePatch({ apiVersion, kind, name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) }, { status: st }, { dryRun: false, subresource: 'status' }));
}
const ref = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
const ns = (kube: Kube, name: string) => create(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

/** Operator installed in A weeks ago; installing the same bundle in B hangs on a failed unpack Job. */
export async function staleUnpackJob(kube: Kube, id: string): Promise<Situation> {
  const [cat, a, b] = [`olm-${id}`, `team-a-${id}`, `team-b-${id}`];
  for (const n of [cat, a, b]) await ns(kube, n);
  const cs = await create(kube, olm.catalogSource({ namespace: cat, name: 'operatorhubio-catalog', image: 'quay.io/operatorhubio/catalog:latest' }));
  const cm = await create(kube, olm.unpackConfigMap({ namespace: cat, image: IMAGE, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: cs.metadata.uid! }));
  for (const n of [a, b]) await create(kube, olm.operatorGroup({ namespace: n, name: 'og', targetNamespaces: [n] }));
  const subA = await create(kube, olm.subscription({ namespace: a, name: 'etcd', package: 'etcd', source: 'operatorhubio-catalog', sourceNamespace: cat }));
  await status(kube, subA, olm.subscriptionStatus({ currentCSV: 'etcdoperator.v0.9.4', installedCSV: 'etcdoperator.v0.9.4', state: 'AtLatestKnown', at: minutesAgo(60 * 24 * 14) }));
  const subB = await create(kube, olm.subscription({ namespace: b, name: 'etcd', package: 'etcd', source: 'operatorhubio-catalog', sourceNamespace: cat }));
  await status(kube, subB, olm.subscriptionStatus({ conditions: [olm.bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: minutesAgo(30) })] }));
  const job = await create(kube, olm.unpackJob({ namespace: cat, image: IMAGE, configMapUid: cm.metadata.uid! }));
  const started = minutesAgo(45);
  await status(kube, job, olm.jobStatusActive({ startedAt: started }));
  // A merge patch: clear the active counters the running status had.
  await status(kube, job, { ...olm.jobStatusFailed({ reason: 'DeadlineExceeded', at: minutesAgo(35), startedAt: started }), active: null, ready: null });
  return {
    name: 'stale unpack Job blocks a second install',
    namespaces: [cat, a, b],
    fixedBy: ['UnpackJobDeleted'],
    symptom: `Subscription ${b}/etcd: BundleUnpackFailed; Job ${cat}/${job.metadata.name.slice(0, 12)}… Failed`,
    async healed() {
      const sub = await kube.get(ref(subB));
      return !(await kube.get(ref(job))) && sub?.metadata.annotations?.[MEDIC.nudge] !== undefined;
    },
  };
}

/** A Manual Subscription, then an Automatic one: the new InstallPlan lacks the new Subscription's ownerReference. */
export async function missingOwner(kube: Kube, id: string): Promise<Situation> {
  const n = `apps-${id}`;
  await ns(kube, n);
  const manual = await create(kube, olm.subscription({ namespace: n, name: 'manual-sub', package: 'prometheus', source: 'operatorhubio-catalog', sourceNamespace: 'olm', approval: 'Manual' }));
  const auto = await create(kube, olm.subscription({ namespace: n, name: 'auto-sub', package: 'grafana-operator', source: 'operatorhubio-catalog', sourceNamespace: 'olm' }));
  const ip = await create(kube, olm.installPlan({ namespace: n, name: 'install-x7k2p', csvNames: ['grafana-operator.v5.4.0'], approval: 'Manual', approved: true, generation: 2, ownerSubs: [{ name: manual.metadata.name, uid: manual.metadata.uid! }] } as never));
  await status(kube, ip, olm.installPlanStatus({ phase: 'Complete', catalogSources: ['operatorhubio-catalog'] } as never));
  const ipIn = { name: ip.metadata.name, namespace: n, uid: ip.metadata.uid! };
  await status(kube, auto, olm.subscriptionStatus({ currentCSV: 'grafana-operator.v5.4.0', installPlan: ipIn, state: 'UpgradePending', installPlanGeneration: 2 }));
  return {
    name: 'InstallPlan missing its Subscription owner',
    namespaces: [n],
    fixedBy: ['InstallPlanOwnerAdded'],
    symptom: `InstallPlan ${n}/${ip.metadata.name} owned by manual-sub only; auto-sub points at it`,
    async healed() {
      const live = await kube.get(ref(ip));
      return (live?.metadata.ownerReferences ?? []).some((o) => o.uid === auto.metadata.uid && o.controller === false && o.blockOwnerDeletion === false);
    },
  };
}

/** The node hosting the catalog pod went NotReady 10 minutes ago; the pod sits in Terminating. */
export async function stuckCatalogPod(kube: Kube, id: string): Promise<Situation> {
  const n = `olm-cat-${id}`;
  await ns(kube, n);
  const nodeName = `worker-${id}`;
  await create(kube, olm.node({ name: nodeName, ready: 'Unknown', since: minutesAgo(10), taints: [olm.taintUnreachable(minutesAgo(10))] }));
  const cs = await create(kube, olm.catalogSource({ namespace: n, name: 'redhat-operators', image: 'registry.redhat.io/redhat/redhat-operator-index:v4.18' }));
  const pod = await create(kube, olm.catalogPod({ namespace: n, catalogSourceName: 'redhat-operators', catalogSourceUid: cs.metadata.uid!, nodeName, image: 'registry.redhat.io/redhat/redhat-operator-index:v4.18' } as never));
  // A plain delete on a dead node: no kubelet confirms it, so it stays Terminating (no DisruptionTarget).
  await kube.delete(ref(pod), { uid: pod.metadata.uid!, gracePeriodSeconds: 3600, dryRun: false });
  return {
    name: 'catalog pod stuck Terminating on a NotReady node',
    namespaces: [n],
    fixedBy: ['CatalogPodForceDeleted'],
    symptom: `Pod ${n}/${pod.metadata.name} Terminating on ${nodeName} (Ready=Unknown for 10m)`,
    healed: async () => !(await kube.get(ref(pod))),
  };
}

/** A CSV is deleted while OLM's controller is down (OLM < v0.27: no cleanup finalizer). */
export async function csvDeletedWhileDown(kube: Kube, id: string): Promise<Situation> {
  const n = `ops-${id}`;
  await ns(kube, n);
  const csvName = `cert-manager.v1.14.${id.length}`;
  // OLM synced it (status written): only then does olm-medic add its finalizer (OLM v0.27+ adds its own first).
  const built = olm.csv({ namespace: n, name: csvName, phase: 'Succeeded' });
  const csv = await status(kube, await create(kube, built), built.status);
  const owned = [
    await create(kube, olm.csvClusterRole({ csvName, csvNamespace: n, name: `${csvName}-${id}-cr` } as never)),
    await create(kube, olm.csvClusterRoleBinding({ csvName, csvNamespace: n, name: `${csvName}-${id}-crb`, roleName: `${csvName}-${id}-cr` } as never)),
    await create(kube, olm.csvWebhook('Validating', { csvName, csvNamespace: n, name: `vcert-${id}.example.com` } as never)),
  ];
  return {
    name: 'CSV deleted while the controller was down',
    namespaces: [n],
    fixedBy: ['CsvOwnedObjectDeleted', 'CsvCleanupCompleted'],
    symptom: `CSV ${n}/${csvName} deleted; its ClusterRole, ClusterRoleBinding and webhook would be orphaned`,
    async healed() {
      if (await kube.get(ref(csv))) return false;
      for (const o of owned) if (await kube.get(ref(o))) return false;
      return true;
    },
    trigger: {
      ready: async () => (await kube.get(ref(csv)))?.metadata.finalizers?.includes(MEDIC.finalizer) === true,
      async act() {
        const live = await kube.get(ref(csv));
        await kube.delete(ref(csv), { uid: live!.metadata.uid!, dryRun: false });
      },
    },
  };
}

/** Uninstalled through OLM (Subscription deleted), but the failed CSV and its workload remain. */
export async function uninstallLeftovers(kube: Kube, id: string): Promise<Situation> {
  const n = `legacy-${id}`;
  const pkg = 'strimzi-kafka-operator';
  await ns(kube, n);
  const labels = olm.componentLabels(pkg, n);
  const csvName = 'strimzi-cluster-operator.v0.38.0';
  const csv = await create(kube, { ...olm.csv({ namespace: n, name: csvName, phase: 'Failed', reason: 'ComponentUnhealthy', at: minutesAgo(180) }), metadata: { ...olm.csv({ namespace: n, name: csvName }).metadata, labels } });
  await status(kube, csv, olm.csvStatus({ phase: 'Failed', reason: 'ComponentUnhealthy', message: 'installing: deployment changed old hash', at: minutesAgo(180) }));
  const deploy = await create(kube, {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'strimzi-cluster-operator', namespace: n, labels },
    spec: { selector: { matchLabels: { name: 'strimzi' } }, template: { metadata: { labels: { name: 'strimzi' } }, spec: { containers: [{ name: 'op', image: 'quay.io/strimzi/operator:0.38.0' }] } } },
  });
  const sa = await create(kube, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'strimzi-cluster-operator', namespace: n, labels } });
  const cmap = await create(kube, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strimzi-cluster-operator-config', namespace: n, labels }, data: { 'log4j2.properties': 'rootLogger.level=INFO' } });
  const refs: olm.ComponentRef[] = [
    { kind: 'ClusterServiceVersion', apiVersion: olm.OPERATORS_V1ALPHA1, namespace: n, name: csvName },
    { kind: 'Deployment', apiVersion: 'apps/v1', namespace: n, name: deploy.metadata.name },
    { kind: 'ServiceAccount', apiVersion: 'v1', namespace: n, name: sa.metadata.name },
    { kind: 'ConfigMap', apiVersion: 'v1', namespace: n, name: cmap.metadata.name },
  ];
  const opObj = olm.operatorObject({ pkg, namespace: n, refs });
  const op = await create(kube, { ...opObj, metadata: { ...opObj.metadata, annotations: { [MEDIC.uninstall]: 'true' } } });
  await status(kube, op, opObj.status);
  return {
    name: 'uninstall leftovers (Subscription gone, CSV failing)',
    namespaces: [n],
    fixedBy: ['OperatorLeftoverDeleted', 'OperatorDeleted'],
    symptom: `Operator ${op.metadata.name}: CSV Failed, Deployment still running, no Subscription`,
    async healed() {
      for (const o of [op, csv, deploy, sa, cmap]) if (await kube.get(ref(o))) return false;
      return true;
    },
  };
}

export const seeds = [staleUnpackJob, missingOwner, stuckCatalogPod, csvDeletedWhileDown, uninstallLeftovers];

function live(o: KubeObject | 'gone'): KubeObject {
  if (o === 'gone') throw new Error('object vanished while the test set up its situation');
  return o;
}
