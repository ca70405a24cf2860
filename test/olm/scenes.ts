/**
 * Seed situations set through OLM's own API, shared by the suites that assert the heal and by the
 * time-to-recover measurement (time-to-recover.test.ts).
 */
import { join } from 'node:path';
import { inject } from 'vitest';
import { bundleImage, CATALOG, namespace, subscribe, type OlmBed } from './bed.js';
import { kwokArgs, kwokNode } from './kwok.js';
import { startProc, until, type Proc } from './procs.js';
import { paths, type Obj } from './rest.js';

export const cond = (o: Obj | undefined, type: string): { status?: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined =>
  (o?.status?.conditions as { type: string; status?: string }[] | undefined)?.find((c) => c.type === type);

/** The OperatorGroup annotation both namespaces of the failed-Job scene use (same Job spec: OLM reuses it). */
const UNPACK_10S = { 'operatorframework.io/bundle-unpack-timeout': '10s' };

/**
 * Seed 1's failed shared unpack Job: the bundle image is "unpullable" (the unpacker holds it) while a
 * first namespace subscribes, so the Job hits its 10 s deadline for real and the Subscription reports
 * BundleUnpackFailed. `fault()` is what users then do: the image is back and a second namespace
 * subscribes to the same bundle; OLM keeps reusing the failed Job (v0.25-v0.42).
 */
export async function failedSharedJob(olm: OlmBed, made: string[]): Promise<{ ns1: string; job: Obj; fault(): Promise<string> }>;
/**
 * With `settleSeconds`: the same scene without watching it happen (olm-medic, if running, deletes a
 * failed Job at once, so neither the Failed Job nor BundleUnpackFailed need ever be seen): the image is
 * held for that long after the first subscription (past the 10 s deadline), then `fault()`.
 */
export async function failedSharedJob(olm: OlmBed, made: string[], o: { settleSeconds: number }): Promise<{ ns1: string; job?: Obj; fault(): Promise<string> }>;
export async function failedSharedJob(olm: OlmBed, made: string[], o: { settleSeconds?: number } = {}): Promise<{ ns1: string; job?: Obj; fault(): Promise<string> }> {
  const image = bundleImage('medic-beta', '0.1.0');
  olm.unpacker.hold(image);
  const ns1 = await namespace(olm.admin, 'unpack-fail');
  made.push(ns1);
  await subscribe(olm.admin, ns1, 'medic-beta', { ogAnnotations: UNPACK_10S });
  const fault = async (): Promise<string> => {
    olm.unpacker.release(image);
    const ns2 = await namespace(olm.admin, 'unpack-second');
    made.push(ns2);
    // Same unpack timeout as the first namespace: with a different one OLM's desired Job spec differs
    // (activeDeadlineSeconds) and ensureJob deletes the failed Job itself (bundle_unpacker.go v0.28.0:699-704).
    await subscribe(olm.admin, ns2, 'medic-beta', { ogAnnotations: UNPACK_10S });
    return ns2;
  };
  if (o.settleSeconds !== undefined) {
    await new Promise((r) => setTimeout(r, o.settleSeconds! * 1000));
    return { ns1, fault };
  }
  const job = await until(async () => {
    for (const j of await olm.admin.list<Obj>(paths.batch(CATALOG.namespace))) if (cond(j, 'Failed')?.status === 'True') return j;
    return undefined;
  }, 'the unpack Job to fail at its deadline', 120_000, olm.procs());
  await until(async () => cond(await olm.admin.get(paths.olm(ns1, 'subscriptions', 'medic-beta')), 'BundleUnpackFailed')?.status === 'True', `${ns1}: BundleUnpackFailed`, 120_000, olm.procs());
  return { ns1, job, fault };
}

/**
 * A kwok Node run by its own kwok process, so it can stop heartbeating for real (`kill()`): kwok keeps
 * managing a Node whose annotation is removed (kwok.ts).
 */
export interface DoomedNode {
  name: string;
  kill(): Promise<void>;
  /** Deletes the Node (PodGC removes what is left on it) and stops its kwok if still running. */
  remove(): Promise<void>;
}

export async function doomedNode(olm: OlmBed): Promise<DoomedNode> {
  const cp = inject('controlPlane');
  const bed = inject('olmBed');
  const name = `doomed-${Math.random().toString(36).slice(2, 8)}`;
  await olm.admin.create('/api/v1/nodes', kwokNode(name, name));
  const kwok: Proc = startProc(`kwok ${name}`, bed.kwok.bin, kwokArgs(bed.kwok.kubeconfig, name, '10.0.1.1/24'), join(cp.dir, `kwok-${name}.log`));
  await until(async () => cond(await olm.admin.get<Obj>(paths.nodes(name)), 'Ready')?.status === 'True', `Node ${name} Ready`, 60_000, [kwok]);
  return {
    name,
    kill: () => kwok.stop(),
    async remove() {
      await kwok.stop();
      await olm.admin.delete(paths.nodes(name));
    },
  };
}

export const REGISTRY = 'medic-registry';
/** How long the registry pod tolerates the node taints (the default is 300 s): keeps the suites short. */
export const TOLERATION_SECONDS = 5;

export const registryPods = (olm: OlmBed, name = REGISTRY): Promise<Obj[]> =>
  olm.admin.list<Obj>(`${paths.core(CATALOG.namespace, 'pods')}?labelSelector=${encodeURIComponent(`olm.catalogSource=${name}`)}`);
export const registryState = async (olm: OlmBed, name = REGISTRY): Promise<string | undefined> =>
  (await olm.admin.get<Obj>(paths.olm(CATALOG.namespace, 'catalogsources', name)))?.status?.connectionState?.lastObservedState;

async function cordonBedNodes(olm: OlmBed, unschedulable: boolean): Promise<void> {
  for (const n of inject('olmBed').nodes) await olm.admin.mergePatch(paths.nodes(n), { spec: { unschedulable } });
}

/**
 * An image-based CatalogSource `olm/<name>` whose registry pod runs on `node` (the bed's own Nodes
 * cordoned while it is placed), served through the Service (needs StartOlmOptions.serviceProxy).
 * Returns the pod once the CatalogSource is READY. A scene run twice in one bed takes a new name each
 * time: pods of an earlier CatalogSource of the same name (one left Terminating on a deleted Node until
 * PodGC) carry the same olm.catalogSource label.
 */
export async function registryCatalogOn(olm: OlmBed, node: string, name = REGISTRY): Promise<Obj> {
  await cordonBedNodes(olm, true);
  try {
    await olm.admin.create(paths.olm(CATALOG.namespace, 'catalogsources'), {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name, namespace: CATALOG.namespace },
      spec: {
        sourceType: 'grpc',
        image: 'registry.invalid/olm-medic/catalog:test',
        displayName: 'olm-medic registry-pod catalog',
        publisher: 'olm-medic tests',
        grpcPodConfig: {
          nodeSelector: { type: 'kwok' },
          tolerations: ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_SECONDS })),
        },
      },
    });
    // OLM v0.25 replaces its first pod at once (seen: created, deleted and created again within 1 s):
    // the pod that counts is the one left when the catalog is READY.
    await until(async () => (await registryState(olm, name)) === 'READY', `CatalogSource ${name} READY`, 120_000, olm.procs());
    return await until(async () => {
      const pods = await registryPods(olm, name);
      return pods.length === 1 && pods[0]!.spec?.nodeName === node && !pods[0]!.metadata.deletionTimestamp && cond(pods[0], 'Ready')?.status === 'True' && pods[0];
    }, `one ${name} pod, Ready on ${node}`, 60_000, olm.procs());
  } finally {
    await cordonBedNodes(olm, false);
  }
}

export async function removeRegistryCatalog(olm: OlmBed, name = REGISTRY): Promise<void> {
  await olm.admin.delete(paths.olm(CATALOG.namespace, 'catalogsources', name));
  await until(async () => (await registryPods(olm, name)).length === 0, `${name}'s pods gone`, 120_000);
}
