/**
 * Seed 3 against real OLM: an image-based CatalogSource's registry pod on a Node that stops
 * heartbeating. The Node is the test's own, run by its own kwok process, which the test kills (kwok
 * keeps managing a Node whose annotation is removed: kwok.ts); the node lifecycle controller then
 * marks it NotReady and taints it, taint eviction deletes the pod (DisruptionTarget), and with no
 * kubelet the pod stays Terminating. OLM reaches the catalog through the Service as in a cluster
 * (service-proxy.ts: kube-proxy and DNS played on loopback, from the real EndpointSlices), so the
 * catalog is down while the pod is dead.
 *   v0.25/v0.28: OLM counts the Terminating pod as the catalog's pod and makes no new one; olm-medic,
 *     after leaving OLM its grace (60 s of DisruptionTarget), force-deletes it; OLM makes a new pod
 *     on a live Node and the catalog is served again.
 *   v0.46: OLM force-deletes the dead pod itself (detectAndDeleteDeadPods, registry/reconciler
 *     v0.46.0 configmap.go:608-631); olm-medic writes nothing to it.
 * Either way a Subscription from the catalog then installs (CSV Succeeded).
 * The pod tolerates the node taints for 5 s (grpcPodConfig.tolerations) instead of the default 300 s,
 * to keep the suite short; olm-medic's decision is the same (DisruptionTarget, then OLM's grace).
 * Scene pieces: scenes.ts (doomedNode, registryCatalogOn).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CATALOG, csvPhase, forgetInstalls, namespace, startOlm, subscribe, type OlmBed } from './bed.js';
import { until } from './procs.js';
import { paths, type Obj } from './rest.js';
import { cond, doomedNode, REGISTRY, registryCatalogOn, registryPods, registryState, removeRegistryCatalog, type DoomedNode } from './scenes.js';
import { describeWrite, runVersions, startMedic, writesBy, type Medic } from './support.js';

const cp = inject('controlPlane');
const versions = runVersions(['v0.25.0', 'v0.28.0', 'v0.46.0']);
const FIXES_ITSELF = new Set(['v0.46.0']);

describe.each(versions)('real OLM %s: a catalog pod on a Node that stops heartbeating', (version) => {
  let olm: OlmBed;
  let medic: Medic | undefined;
  let node: DoomedNode | undefined;
  const made: string[] = [];

  beforeAll(async () => {
    olm = await startOlm(version, { serviceProxy: true });
    node = await doomedNode(olm);
  });
  afterAll(async () => {
    if (olm) {
      medic ??= await startMedic();
      await forgetInstalls(olm.admin, made);
      await node?.remove(); // PodGC then removes a dead pod left on it
      await removeRegistryCatalog(olm);
      process.stderr.write(`[findings ${version}] service proxy journal (last lines):\n  ${olm.serviceProxy?.journal.slice(-8).join('\n  ')}\n`);
    }
    await medic?.stop();
    await olm?.stop();
  });

  let pod: Obj;
  it('OLM serves an image CatalogSource from its registry pod on the Node, through the Service, on loopback', async () => {
    pod = await registryCatalogOn(olm, node!.name);
    expect(olm.serviceProxy!.journal.some((l) => l.endsWith(`${REGISTRY}.${CATALOG.namespace}.svc:50051 ok`))).toBe(true);
  });

  it(FIXES_ITSELF.has(version)
    ? 'the Node dies: OLM force-deletes the dead pod itself and the catalog comes back; olm-medic writes nothing to it'
    : 'the Node dies: OLM keeps the Terminating pod and the catalog stays down; olm-medic force-deletes it after OLM\'s grace; the catalog comes back', async () => {
    medic = await startMedic();
    const since = Date.now();
    await node!.kill();
    const t0 = Date.now();
    await until(async () => cond(await olm.admin.get<Obj>(paths.nodes(node!.name)), 'Ready')?.status !== 'True', `Node ${node!.name} not Ready`, 150_000);
    const evicted = await until(async () => {
      const p = await olm.admin.get<Obj>(paths.core(CATALOG.namespace, 'pods', pod.metadata.name));
      if (!p) return { gone: true as const };
      return p.metadata.deletionTimestamp ? { pod: p } : undefined;
    }, `${pod.metadata.name} evicted`, 120_000);
    process.stderr.write(`[findings ${version}] pod evicted ${Math.round((Date.now() - t0) / 1000)}s after the Node's kwok stopped; DisruptionTarget=${JSON.stringify('pod' in evicted ? cond(evicted.pod, 'DisruptionTarget') : 'pod already gone')}\n`);

    if (!FIXES_ITSELF.has(version)) {
      expect(cond((evicted as { pod: Obj }).pod, 'DisruptionTarget')?.status).toBe('True');
      await until(async () => (await registryState(olm)) !== 'READY', `CatalogSource ${REGISTRY} down`, 60_000, olm.procs());
      // OLM alone: 40 s on, still the dead pod and no other; the catalog still down.
      await new Promise((r) => setTimeout(r, 40_000));
      const pods = await registryPods(olm);
      expect(pods.map((p) => p.metadata.name)).toEqual([pod.metadata.name]);
      expect(pods[0]!.metadata.deletionTimestamp).toBeTruthy();
      expect(await registryState(olm)).not.toBe('READY');
    }

    // The heal: the dead pod gone, a new one Ready on a live Node, the catalog served again.
    const fresh = await until(async () => {
      const pods = await registryPods(olm);
      return !pods.some((p) => p.metadata.uid === pod.metadata.uid) && pods.find((p) => p.spec?.nodeName !== node!.name && cond(p, 'Ready')?.status === 'True');
    }, `the dead pod gone and a new ${REGISTRY} pod Ready elsewhere`, 180_000, olm.procs());
    await until(async () => (await registryState(olm)) === 'READY', `CatalogSource ${REGISTRY} READY again`, 120_000, olm.procs());
    process.stderr.write(`[findings ${version}] catalog back ${Math.round((Date.now() - t0) / 1000)}s after the Node's kwok stopped; new pod ${fresh.metadata.name} on ${fresh.spec?.nodeName}\n`);

    const writes = writesBy(cp.shippedUser, since).filter((e) => (e.responseStatus?.code ?? 500) < 300);
    process.stderr.write(`[findings ${version}] olm-medic writes:\n  ${writes.map(describeWrite).join('\n  ')}\n`);
    const podWrites = writes.filter((e) => e.objectRef?.resource === 'pods');
    if (FIXES_ITSELF.has(version)) expect(podWrites.map(describeWrite)).toEqual([]);
    else {
      expect(podWrites.map((e) => `${e.verb} ${e.objectRef?.name}`)).toEqual([`delete ${pod.metadata.name}`]);
      expect(writes.filter((e) => e.objectRef?.resource !== 'pods' && e.objectRef?.resource !== 'events').map(describeWrite)).toEqual([]);
    }
  });

  it('a Subscription from the catalog installs (CSV Succeeded)', async () => {
    const ns = await namespace(olm.admin, 'catnode');
    made.push(ns);
    await subscribe(olm.admin, ns, 'medic-beta', { source: REGISTRY });
    await until(async () => (await csvPhase(olm.admin, ns, 'medic-beta.v0.1.0')) === 'Succeeded', `${ns}: medic-beta.v0.1.0 Succeeded from ${REGISTRY}`, 240_000, olm.procs());
  });
});
