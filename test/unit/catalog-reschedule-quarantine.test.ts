/**
 * catalog-reschedule's node-gone quarantine across two losses of one node (red team 11, N1):
 * functions/catalog-reschedule/index.ts remembers when a node NAME was first seen missing and forgot
 * it only when a look saw the node present. A node that came back (its pods Ready again: those events
 * target nothing, so no look sees it) and was lost again was judged on the FIRST loss's time: its
 * catalog pod was force-deleted (grace 0) seconds after the second loss. Now a pod status written
 * after the first sighting (the returning kubelet's) starts the wait again.
 */
import { describe, expect, it } from 'vitest';
import { catalogReschedule } from '../../functions/catalog-reschedule/index.js';
import { defaults } from '../../functions/catalog-reschedule/plan.js';
import { NO_POLICY, type ObserveContext } from '../../shared/core/types.js';
import type { KubeObject, ListOptions, Reader, Ref } from '../../shared/kube/types.js';
import type { ResourceTrigger } from '../../shared/events/types.js';
import { catalogPod, catalogSource, node, rfc3339 } from '../fixtures/olm-objects.js';

const NS = 'olm';
const NODE = 'rt11-flappy-node';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';
const T0 = Date.parse('2025-03-01T12:00:00Z');

const cs = { ...catalogSource({ namespace: NS, name: 'operatorhubio-catalog', image: IMAGE }), metadata: { name: 'operatorhubio-catalog', namespace: NS, uid: 'cs-uid', resourceVersion: '10' } } as unknown as KubeObject;

/** The catalog pod; `readySince`: the time of its Ready condition (written by its kubelet). */
function podOn(ready: boolean, readySince = T0): KubeObject {
  const p = catalogPod({ namespace: NS, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid', nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name: 'operatorhubio-catalog-abcde', uid: 'pod-uid', resourceVersion: '20', creationTimestamp: rfc3339(new Date(T0 - 86_400_000)) },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339(new Date(readySince)) }] },
  } as KubeObject;
}

/** A cluster whose node is present or not, and whose catalog pod is as `state.pod` says. */
function cluster(state: { nodePresent: boolean; pod: KubeObject }, nodeName = NODE): Reader {
  const onNode = (): KubeObject => ({ ...state.pod, spec: { ...(state.pod.spec as object), nodeName } }) as KubeObject;
  return {
    async get<T extends KubeObject>(ref: Ref): Promise<T | undefined> {
      if (ref.kind === 'Node') return (state.nodePresent ? { ...node({ name: nodeName, ready: true, since: new Date(T0) }), metadata: { name: nodeName, uid: 'node-uid', resourceVersion: '5' } } : undefined) as T | undefined;
      if (ref.kind === 'CatalogSource' && ref.name === 'operatorhubio-catalog' && ref.namespace === NS) return cs as T;
      if (ref.kind === 'Pod') return onNode() as T;
      return undefined;
    },
    async *list<T extends KubeObject>(_a: string, kind: string, _o?: ListOptions): AsyncIterable<T> {
      if (kind === 'Pod') yield onNode() as T;
    },
  };
}

async function look(reader: Reader, at: number, nodeName = NODE) {
  const now = new Date(at);
  const ctx: ObserveContext = { now, options: { ...defaults }, policy: NO_POLICY, clock: () => now };
  const observed = await catalogReschedule.observe({ apiVersion: 'v1', kind: 'Node', name: nodeName }, reader, ctx);
  return catalogReschedule.plan(observed!, { now, options: { ...defaults }, policy: NO_POLICY });
}

describe('catalog-reschedule: the node-gone quarantine across two losses of one node', () => {
  it('N1 (red team 11): a node lost at t=0, back at t=10 s (its kubelet marks the catalog pod Ready at t=12 s; that event targets nothing), lost again at t=85 s: the t=90 s re-check waits the quarantine again (was: force-deleted the pod 5 s after the second loss)', async () => {
    const state = { nodePresent: false, pod: podOn(false) };
    const reader = cluster(state);
    // t=0: the node is gone; its catalog pod is NotReady -> looked at, the quarantine starts.
    const first = await look(reader, T0);
    expect(first).toMatchObject({ kind: 'requeue', afterSeconds: 90 });
    // t=10 s: the node re-registers (what the quarantine waits for); at t=12 s its kubelet marks the pod Ready.
    state.nodePresent = true;
    state.pod = podOn(true, T0 + 12_000);
    const readyEvent: ResourceTrigger = { kind: 'resource', verb: 'update', mode: 'resource', ref: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'operatorhubio-catalog-abcde' }, object: state.pod, meta: { id: '1', source: 's', type: 'dev.knative.apiserver.resource.update' } };
    expect(catalogReschedule.targets(readyEvent)).toEqual([]); // so no look sees the node back
    // t=85 s: lost again. At t=90 s the re-check the first look asked for runs: missing for 5 s.
    state.nodePresent = false;
    const second = await look(reader, T0 + 90_000);
    expect(second, `planned ${JSON.stringify(second).slice(0, 300)}`).toMatchObject({ kind: 'requeue', afterSeconds: 90 });
    // And once the quarantine of the second loss is over, the pod goes.
    expect((await look(reader, T0 + 181_000)).kind).toBe('act');
  });

  it('control: a node missing all along (its pod\'s status unchanged since) is judged from the first sighting: the pod goes once 90 s have passed', async () => {
    const other = 'quarantine-other-node';
    const state = { nodePresent: false, pod: podOn(false) };
    const reader = cluster(state, other);
    expect(await look(reader, T0 + 1_000, other)).toMatchObject({ kind: 'requeue', afterSeconds: 90 });
    expect(await look(reader, T0 + 60_000, other)).toMatchObject({ kind: 'requeue', afterSeconds: 31 });
    expect((await look(reader, T0 + 91_000, other)).kind).toBe('act');
  });
});
