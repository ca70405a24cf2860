/**
 * Red team 28b (Q1): catalog-reschedule's node-gone quarantine (functions/catalog-reschedule/index.ts
 * `missingSince`) is forgotten only when a look of THIS process sees the node present. After the
 * process acts on a gone node (force-deletes its catalog pods), nothing looks at that node again, and
 * its entry {since: first sighting} stays. When the node comes back and gets a new catalog pod, the
 * events that would clear it (the new pod's binding, NotReady) may be handled by another replica
 * (infra/base/service.yaml: max-scale 3; each replica has its own map) or lost (an ApiServerSource
 * restart). When the node is lost AGAIN, the stale entry is used: the new pod is not in the first
 * sighting's pods (newcomers never restart the wait) so the wait is judged from the FIRST loss, and
 * the new pod is force-deleted (grace 0) seconds after the second loss — before PodGC's own 40 s
 * quarantine and olm-medic's 90 s nodeGoneQuarantineSeconds, while the node may still re-register.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, ListOptions, Ref } from '../../shared/kube/types.js';
import { catalogPod, catalogSource, node, rfc3339 } from '../fixtures/olm-objects.js';
import { noPatchExpected, objectUpdate, recordingKube, withRuntime } from '../support/fake-runtime.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const NS = 'olm';
const NODE = 'rt28b-reused-node';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';

const cs = { ...catalogSource({ namespace: NS, name: 'operatorhubio-catalog', image: IMAGE }), metadata: { name: 'operatorhubio-catalog', namespace: NS, uid: 'cs-uid', resourceVersion: '10' } } as unknown as KubeObject;

function catPod(name: string, uid: string, rv: string, ready: boolean, since: number): KubeObject {
  const p = catalogPod({ namespace: NS, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid', nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name, uid, resourceVersion: rv, creationTimestamp: rfc3339(new Date(since - 3_600_000)) },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339(new Date(since)) }] },
  } as KubeObject;
}

describe('RT28b-Q1 the node-gone quarantine outlives the loss it timed', () => {
  it('a node lost, healed by olm-medic, back with a new catalog pod, lost again: the new pod waits out the quarantine from the SECOND loss', async () => {
    let now = T0;
    const state: { nodePresent: boolean; pods: KubeObject[] } = { nodePresent: false, pods: [catPod('operatorhubio-catalog-aaaaa', 'uid-p1', '100', false, T0 - 60_000)] };
    const deletes: string[] = [];
    const reader = {
      async get<T extends KubeObject>(ref: Ref): Promise<T | undefined> {
        if (ref.kind === 'Node') return (state.nodePresent && ref.name === NODE ? { ...node({ name: NODE, ready: true, since: new Date(now - 60_000) }), metadata: { name: NODE, uid: 'node-2', resourceVersion: '5' } } : undefined) as T | undefined;
        if (ref.kind === 'CatalogSource' && ref.namespace === NS && ref.name === cs.metadata.name) return cs as T;
        if (ref.kind === 'Pod') return state.pods.find((p) => p.metadata.name === ref.name) as T | undefined;
        return undefined;
      },
      async *list<T extends KubeObject>(_a: string, kind: string, _o?: ListOptions): AsyncIterable<T> {
        if (kind === 'Pod') for (const p of state.pods) yield p as T;
      },
    };
    const { kube } = recordingKube(reader, {
      now: () => new Date(now),
      async delete(ref) {
        deletes.push(`${ref.name}@${(now - T0) / 1000}s`);
        state.pods = state.pods.filter((p) => p.metadata.name !== ref.name);
        return 'deleted';
      },
      mergePatch: noPatchExpected,
    });
    const podEvent = (p: KubeObject) => objectUpdate(p, `e-${now}`);
    await withRuntime(kube, { now: () => new Date(now) }, async (rt) => {
      // First loss: the node object is gone (t = 0). The first look starts the quarantine.
      expect((await rt.engine.handle(podEvent(state.pods[0]!)))[0]).toMatchObject({ function: 'catalog-reschedule', status: 'requeued' });
      // t = 100 s: past the quarantine, the stuck pod is force-deleted (correct).
      now = T0 + 100_000;
      state.pods[0] = { ...state.pods[0]!, metadata: { ...state.pods[0]!.metadata, resourceVersion: '101' } } as KubeObject;
      expect((await rt.engine.handle(podEvent(state.pods[0]!)))[0]).toMatchObject({ function: 'catalog-reschedule', status: 'acted' });
      expect(deletes).toEqual(['operatorhubio-catalog-aaaaa@100s']);

      // t = 200..900 s: the node re-registers under the same name; OLM's new catalog pod lands on it
      // and becomes Ready. This process looked at none of it (its events went to another replica).
      state.nodePresent = true;
      state.pods = [catPod('operatorhubio-catalog-bbbbb', 'uid-p3', '300', true, T0 + 300_000)];

      // t = 1000 s: the node object is deleted again. At t = 1005 s the PingSource sweep reaches this
      // replica: 5 s into the second loss.
      state.nodePresent = false;
      now = T0 + 1_005_000;
      const out = await rt.engine.handle({ kind: 'sweep', meta: { id: 'ping', source: '/ping', type: 'dev.knative.sources.ping' } });
      const mine = out.filter((o) => o.function === 'catalog-reschedule');
      // Today: acted — DELETE operatorhubio-catalog-bbbbb grace 0 at 1005 s ("missing for over 90s").
      expect({ deletes, outcomes: mine.map((o) => `${o.status}: ${o.reason}`) }).toMatchObject({ deletes: ['operatorhubio-catalog-aaaaa@100s'] });
      expect(mine[0]).toMatchObject({ status: 'requeued' });
    });
  });
});
