/**
 * catalog-reschedule's node-gone quarantine across two losses of one node (red team 11 N1, red team
 * 12 Q1/Q2): functions/catalog-reschedule/index.ts remembered when a node NAME was first seen missing
 * and forgot it only when a look saw the node present. A node that came back (its pods Ready again:
 * those events target nothing, so no look saw it) and was lost again was judged on the FIRST loss's
 * time: its catalog pod was force-deleted (grace 0) seconds after the second loss. Now any write to
 * the node's catalog pods since the first sighting (their resourceVersions: no clock involved)
 * starts the wait again, and while it waits it looks every 15 s, so a look that sees the node back
 * ends it even when the return wrote nothing.
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

/** The catalog pod at resourceVersion `rv`; `readySince`: the time of its Ready condition (its kubelet's clock). */
function podOn(ready: boolean, readySince = T0, rv = '20'): KubeObject {
  const p = catalogPod({ namespace: NS, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid', nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name: 'operatorhubio-catalog-abcde', uid: 'pod-uid', resourceVersion: rv, creationTimestamp: rfc3339(new Date(T0 - 86_400_000)) },
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
  it.each([
    ['its kubelet\'s clock right', 0],
    ['its kubelet\'s clock 30 s behind (red team 12, Q1)', -30_000],
  ])('N1 (red team 11): a node lost at t=0, back at t=10 s (its kubelet marks the catalog pod Ready at t=12 s, %s; that event targets nothing), lost again at t=85 s: the look at t=90 s waits the quarantine again (was: force-deleted the pod 5 s after the second loss)', async (_clock, skewMs) => {
    const node = `n1-${skewMs}`;
    const state = { nodePresent: false, pod: podOn(false) };
    const reader = cluster(state, node);
    // t=0: the node is gone; its catalog pod is NotReady -> looked at, the quarantine starts.
    expect(await look(reader, T0, node)).toMatchObject({ kind: 'requeue', afterSeconds: 15 });
    // t=10 s: the node re-registers (what the quarantine waits for); at t=12 s its kubelet writes the pod Ready.
    state.pod = podOn(true, T0 + 12_000 + skewMs, '21');
    const readyEvent: ResourceTrigger = { kind: 'resource', verb: 'update', mode: 'resource', ref: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'operatorhubio-catalog-abcde' }, object: state.pod, meta: { id: '1', source: 's', type: 'dev.knative.apiserver.resource.update' } };
    expect(catalogReschedule.targets(readyEvent)).toEqual([]); // so no look is started by it
    // t=85 s: lost again; the next look (say at t=90 s) finds it missing for 5 s.
    const second = await look(reader, T0 + 90_000, node);
    expect(second, `planned ${JSON.stringify(second).slice(0, 300)}`).toMatchObject({ kind: 'requeue', afterSeconds: 15 });
    // Once the quarantine of the second loss is over, the pod goes.
    expect((await look(reader, T0 + 181_000, node)).kind).toBe('act');
  });

  it('Q2 (red team 12): a node object deleted while its kubelet runs (the pod is not written when it re-registers at t=10 s), deleted again at t=85 s: the 15-s look at t=15 s saw it back, so the quarantine starts again from the next sighting', async () => {
    const node = 'q2-node';
    const state = { nodePresent: false, pod: podOn(true) };
    const reader = cluster(state, node);
    expect(await look(reader, T0, node)).toMatchObject({ kind: 'requeue', afterSeconds: 15 });
    state.nodePresent = true; // t=10 s
    expect(await look(reader, T0 + 15_000, node)).toMatchObject({ kind: 'noop' }); // Ready: the wait ends
    state.nodePresent = false; // t=85 s; the next look (a pod event, a sweep) at t=90 s
    expect(await look(reader, T0 + 90_000, node)).toMatchObject({ kind: 'requeue', afterSeconds: 15 });
    expect((await look(reader, T0 + 181_000, node)).kind).toBe('act');
  });

  it('control: a node missing all along (its pod not written since) is judged from the first sighting: the pod goes once 90 s have passed', async () => {
    const node = 'quarantine-other-node';
    const state = { nodePresent: false, pod: podOn(false) };
    const reader = cluster(state, node);
    expect(await look(reader, T0 + 1_000, node)).toMatchObject({ kind: 'requeue', afterSeconds: 15 });
    expect(await look(reader, T0 + 80_000, node)).toMatchObject({ kind: 'requeue', afterSeconds: 11 });
    expect((await look(reader, T0 + 91_000, node)).kind).toBe('act');
  });

  it('Q1 (red team 14, 16): pods created on the gone node meanwhile do not restart the wait, nor do their later status changes (a tenant CronJob binding a pod labelled olm.catalogSource=noise to the node every 60 s held it forever); the real catalog pod goes once 90 s have passed', async () => {
    const node = 'q1-churn-node';
    let tenant = 0;
    let marked = false;
    const real = { ...podOn(false), spec: { ...(podOn(false).spec as object), nodeName: node } } as KubeObject;
    const reader: Reader = {
      get: async <T extends KubeObject>(ref: Ref) => (ref.kind === 'CatalogSource' && ref.name === 'operatorhubio-catalog' && ref.namespace === NS ? (cs as T) : undefined),
      async *list<T extends KubeObject>(_a: string, kind: string) {
        if (kind !== 'Pod') return;
        yield real as T;
        // ... and 30 s into each one's life PodGC marks it Failed (a finalizer keeps it): red team 16.
        yield { apiVersion: 'v1', kind: 'Pod', metadata: { name: `noise-${tenant}`, namespace: 'tenant', uid: `noise-${tenant}`, resourceVersion: String(100 + tenant), labels: { 'olm.catalogSource': 'noise' }, finalizers: ['tenant/keep'] }, spec: { nodeName: node }, status: { phase: marked ? 'Failed' : 'Pending' } } as unknown as T;
      },
    };
    const kinds: string[] = [];
    for (let t = 0; t <= 120; t += 15) {
      tenant = Math.floor(t / 60);
      marked = t % 60 >= 30;
      kinds.push((await look(reader, T0 + t * 1000, node)).kind);
    }
    expect(kinds.indexOf('act')).toBe(6); // t = 90 s
  });
});
