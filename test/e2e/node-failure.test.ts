/**
 * End to end, without Node events: the shipped ApiServerSource no longer watches Nodes (README, "Event
 * volume at the source"). This proves catalog pods on a node that fails are still healed, from Pod
 * events alone, with Kubernetes' own controllers doing what they do on a real cluster:
 *
 *   - a Node stops heartbeating (its Lease is no longer renewed): kube-controller-manager's node
 *     lifecycle controller marks it Ready=Unknown, taints it node.kubernetes.io/unreachable:NoExecute
 *     and marks its pods NotReady (a Pod event); the taint-eviction controller deletes the pods whose
 *     toleration ran out (DisruptionTarget, then a deletion no kubelet completes: a Pod event);
 *     olm-medic, woken by those Pod events, force-deletes the catalog pod once the fence has passed.
 *   - a Node is deleted: PodGC force-deletes its pods (Kubernetes' own fix; olm-medic leaves it).
 *
 * Its own control plane (the node lifecycle controller would act on other suites' hand-made Nodes),
 * Knative's real adapter with the shipped source, the production server as the shipped SA.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import { collect } from '../../shared/kube/collect.js';
import type { Kube, KubeObject, Ref } from '../../shared/kube/types.js';
import { startControlPlane, type AuditEntry, type ControlPlane } from '../control-plane/control-plane.js';
import { installCrds } from '../control-plane/crds.js';
import { renderInfra, shippedKubeconfig, SHIPPED_USER } from '../control-plane/shipped-identity.js';
import { catalogPod, catalogSource } from '../fixtures/olm-objects.js';
import { restFromKubeconfig, type Rest } from '../olm/rest.js';
import { startAdapter, waitForEveryKind, type RunningAdapter } from '../support/adapter.js';
import { eventually } from '../support/cluster.js';
import { startServer, type RunningServer } from '../support/server.js';

const KCM_USER = 'system:kube-controller-manager';
/** How long a catalog pod tolerates its node being unreachable (OLM leaves the 300 s default; short here). */
const TOLERATION_SECONDS = 4;

let cp: ControlPlane;
let admin: Kube;
let rest: Rest; // for Leases, a kind olm-medic's client does not know
let server: RunningServer;
let adapter: RunningAdapter;
let sourceKubeconfig: string;
let stopped = false;
const heartbeats = new Map<string, boolean>(); // node -> still renewing its Lease

const ref = (o: KubeObject): Ref => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });
const audit = (): AuditEntry[] =>
  readFileSync(`${cp.dir}/audit.log`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry);

/** A Node that is Ready and heartbeats through its Lease (what a kubelet does), until told to stop. */
async function readyNode(name: string): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } } as KubeObject, { dryRun: false });
  const now = new Date().toISOString();
  await admin.mergePatch({ apiVersion: 'v1', kind: 'Node', name }, {
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }] },
  }, { dryRun: false, subresource: 'status' });
  heartbeats.set(name, true);
  const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
  await rest.create(leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-node-lease' }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime() } });
  void (async () => {
    while (!stopped && heartbeats.get(name)) {
      await new Promise((r) => setTimeout(r, 1_000));
      if (stopped || !heartbeats.get(name)) break;
      await rest.mergePatch(`${leases}/${name}`, { spec: { renewTime: microTime() } }).catch(() => undefined);
    }
  })();
}

function microTime(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A running, Ready registry pod of CatalogSource `name`, bound to `nodeName`, as OLM and a kubelet leave it. */
async function runningCatalogPod(namespace: string, name: string, nodeName: string): Promise<{ pod: KubeObject; catsrc: KubeObject }> {
  const catsrc = await admin.create(catalogSource({ namespace, name, image: 'quay.io/example/index:v1' }) as KubeObject, { dryRun: false });
  const built = catalogPod({ namespace, catalogSourceName: name, catalogSourceUid: catsrc.metadata.uid!, nodeName, image: 'quay.io/example/index:v1', name: `${name}-pod` } as never) as unknown as KubeObject;
  (built.spec as { tolerations?: unknown[] }).tolerations = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_SECONDS }));
  const pod = await admin.create(built, { dryRun: false });
  const now = new Date().toISOString();
  await admin.mergePatch(ref(pod), { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }, { type: 'PodScheduled', status: 'True', lastTransitionTime: now }] } }, { dryRun: false, subresource: 'status' });
  return { pod, catsrc };
}

async function namespace(name: string): Promise<string> {
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as KubeObject, { dryRun: false });
  return name;
}

async function nodeEventsReceived(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return [...text.matchAll(/^olm_medic_cloudevents_total\{[^}]*kind="Node"[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

beforeAll(async () => {
  cp = await startControlPlane({
    users: {},
    controllers: [
      'garbage-collector-controller',
      'namespace-controller',
      'serviceaccount-controller',
      'node-lifecycle-controller',
      'taint-eviction-controller',
      'pod-garbage-collector-controller',
    ],
    // A node is Unknown 6 s after its last heartbeat (default 50 s).
    controllerManagerArgs: ['--node-monitor-period=1s', '--node-monitor-grace-period=6s'],
    auditControllerWrites: true,
  });
  admin = createKube(loadKubeConfig(cp.admin.kubeconfig));
  rest = restFromKubeconfig(cp.admin.kubeconfig);
  await installCrds(cp.admin.kubeconfig);
  const shipped = await shippedKubeconfig(cp);
  server = await startServer({
    KUBECONFIG: shipped,
    LOG_LEVEL: 'info',
    OLM_MEDIC_CATALOG_RESCHEDULE_FENCE_MARGIN_SECONDS: '2',
    OLM_MEDIC_CATALOG_RESCHEDULE_OLM_GRACE_SECONDS: '3',
  });
  const source = renderInfra(cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource')!;
  sourceKubeconfig = await shippedKubeconfig(cp, 'olm-medic-source');
  adapter = startAdapter(cp.binaries.adapter, { kubeconfig: sourceKubeconfig, sink: server.url, source });
  await waitForEveryKind(admin, server.url, source);
}, 120_000);

afterAll(async () => {
  stopped = true;
  await adapter?.stop();
  await server?.stop();
  await cp?.stop();
});

describe('node failure healed from Pod events alone (the shipped source watches no Nodes)', () => {
  it('the shipped source has no Node resource, and its identity may not list Nodes', async () => {
    const source = renderInfra(cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource')!;
    expect((source.spec as { resources: { kind: string }[] }).resources.map((r) => r.kind)).not.toContain('Node');
    const asSource = createKube(loadKubeConfig(sourceKubeconfig), { retries: 0 });
    await expect(collect(asSource.list('v1', 'Node'))).rejects.toMatchObject({ status: 403 });
    expect(await collect(asSource.list('v1', 'Pod'))).toBeDefined(); // the same identity, a kind it watches
  });

  it('a node stops heartbeating: Kubernetes taints it and evicts, the catalog pod sticks Terminating, olm-medic force-deletes it; the pod on the healthy node is untouched', async () => {
    const ns = await namespace('node-fail');
    await readyNode('healthy-node'); // not the only node: with every node down, node lifecycle stops evicting
    await readyNode('failing-node');
    const healthy = await runningCatalogPod(ns, 'community-operators', 'healthy-node');
    const doomed = await runningCatalogPod(ns, 'redhat-operators', 'failing-node');
    // Kubernetes sees both nodes healthy first (the not-ready taint of new nodes is removed).
    await eventually(async () => {
      const n = await admin.get({ apiVersion: 'v1', kind: 'Node', name: 'failing-node' });
      return !((n?.spec as { taints?: unknown[] } | undefined)?.taints ?? []).length;
    }, 'the node lifecycle controller to accept failing-node as Ready', 30_000);

    heartbeats.set('failing-node', false); // the kubelet dies
    const node = await eventually(async () => {
      const n = await admin.get({ apiVersion: 'v1', kind: 'Node', name: 'failing-node' });
      const taints = (n?.spec as { taints?: { key: string; effect: string }[] } | undefined)?.taints ?? [];
      return taints.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute') ? n : undefined;
    }, 'the node lifecycle controller to taint failing-node unreachable:NoExecute', 30_000);
    expect((node.status as { conditions: { type: string; status: string }[] }).conditions.find((c) => c.type === 'Ready')?.status).toBe('Unknown');

    // Taint eviction deletes the pod (DisruptionTarget); no kubelet finishes it. olm-medic then force-deletes it.
    await eventually(async () => !(await admin.get(ref(doomed.pod))), `the stuck catalog pod to be force-deleted\n${server.output().slice(-3000)}`, 45_000);
    // The apiserver writes a request's audit entry after answering it: wait for olm-medic's delete to
    // be logged before reading the list (CI read it once before it was, and saw Kubernetes' last).
    const deletesOfPod = () => audit().filter((e) => e.objectRef?.resource === 'pods' && e.objectRef?.name === doomed.pod.metadata.name && e.verb === 'delete');
    const entries = await eventually(async () => {
      const es = deletesOfPod();
      return es.some((e) => e.user?.username === SHIPPED_USER && e.responseStatus?.code === 200) ? es : undefined;
    }, `olm-medic's delete of ${doomed.pod.metadata.name} in the audit log`, 10_000);
    // Kubernetes' taint eviction asked first; the delete that removed it was olm-medic's, as the shipped SA.
    // Between them only olm-medic's precondition failures (409: the pod changed under its plan, and it
    // re-planned from live state; seen in CI once) and Kubernetes' eviction asked again (200 on a pod
    // already terminating removes nothing), never a second successful delete by olm-medic.
    // After it, only Kubernetes asking again and finding the pod gone (404).
    const deletes = entries.map((e) => [e.user?.username, e.responseStatus?.code]);
    const removal = deletes.findIndex(([u, c]) => u === SHIPPED_USER && c === 200);
    expect(deletes[0], JSON.stringify(deletes)).toEqual([KCM_USER, 200]);
    expect(deletes.slice(1, removal).filter(([u, c]) => !(u === SHIPPED_USER && c === 409) && !(u === KCM_USER && c === 200)), JSON.stringify(deletes)).toEqual([]);
    expect(deletes.slice(removal + 1).filter(([u, c]) => !(u === KCM_USER && c === 404)), JSON.stringify(deletes)).toEqual([]);
    const events = await eventually(async () => {
      const list: KubeObject[] = [];
      for await (const e of admin.list('events.k8s.io/v1', 'Event', { namespace: ns, labelSelector: 'app.kubernetes.io/managed-by=olm-medic' })) list.push(e);
      return list.length ? list : undefined;
    }, 'olm-medic Events');
    expect(events.map((e) => (e as unknown as { reason: string }).reason)).toContain('CatalogPodForceDeleted');

    // The catalog pod on the healthy node is untouched, and not one Node event reached olm-medic.
    const live = await admin.get(ref(healthy.pod));
    expect(live?.metadata.deletionTimestamp).toBeUndefined();
    expect(audit().filter((e) => e.user?.username === SHIPPED_USER && e.objectRef?.name === healthy.pod.metadata.name && e.verb !== 'get')).toEqual([]);
    expect(await nodeEventsReceived()).toBe(0);
  });

  it('a node is deleted: PodGC removes its pods (Kubernetes\' own fix); olm-medic writes nothing to them', async () => {
    const ns = await namespace('node-gone');
    await readyNode('deleted-node');
    const gone = await runningCatalogPod(ns, 'certified-operators', 'deleted-node');
    heartbeats.set('deleted-node', false);
    const n = (await admin.get({ apiVersion: 'v1', kind: 'Node', name: 'deleted-node' }))!;
    await admin.delete({ apiVersion: 'v1', kind: 'Node', name: 'deleted-node' }, { uid: n.metadata.uid!, dryRun: false });
    // PodGC: a 40 s quarantine for nodes that may re-register, checked every 20 s.
    await eventually(async () => !(await admin.get(ref(gone.pod))), 'PodGC to delete the pod of the deleted node', 90_000);
    const deletes = audit().filter((e) => e.objectRef?.resource === 'pods' && e.objectRef?.name === gone.pod.metadata.name && e.verb === 'delete' && e.responseStatus?.code === 200);
    expect(deletes.map((e) => e.user?.username)).toEqual([KCM_USER]);
    expect(audit().filter((e) => e.user?.username === SHIPPED_USER && e.objectRef?.name === gone.pod.metadata.name && e.verb !== 'get' && e.verb !== 'list')).toEqual([]);
  }, 120_000);
});
