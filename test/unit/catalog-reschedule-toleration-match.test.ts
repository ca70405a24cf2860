/**
 * Red team 28b (T1): catalog-reschedule's fence picks the FIRST toleration whose key and effect match
 * the node's taint (functions/catalog-reschedule/plan.ts fence(): `tolerations.find((t) => (t.key ===
 * key || ...) && (t.effect === 'NoExecute' || !t.effect))`) and never looks at operator/value. In
 * Kubernetes (k8s.io/api core/v1 toleration.go ToleratesTaint) a toleration with operator Equal (or
 * none) tolerates a taint only if its value equals the taint's; the node lifecycle controller's
 * not-ready/unreachable taints have no value. Taint eviction (pkg/controller/tainteviction
 * getMinTolerationTime) then takes the minimum tolerationSeconds over the tolerations that DO
 * tolerate the taint, and "none has tolerationSeconds" means "tolerate forever".
 *
 * Scene (a CatalogSource's spec.grpcPodConfig.tolerations, copied onto the registry pod): the pod
 * lists first a toleration for the unreachable taint that does NOT match it (operator Equal, value
 * "planned-maintenance", tolerationSeconds 5), then one that tolerates it forever (operator Exists,
 * no tolerationSeconds). Kubernetes never evicts this pod for the partition; olm-medic's own plan says
 * such a pod is "never fenced out by time". The node has been unreachable (tainted) for 60 s: the node
 * may come back at any moment and the registry pod is still running there. olm-medic force-deletes it
 * (grace 0) 35 s into the partition.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { catalogPod, catalogSource, node, rfc3339, taintUnreachable } from '../fixtures/olm-objects.js';
import { handleOnce, noPatchExpected, objectUpdate, recordingKube } from '../support/fake-runtime.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);
const NS = 'olm';
const NODE = 'worker-7';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';

const cs = { ...catalogSource({ namespace: NS, name: 'operatorhubio-catalog', image: IMAGE }), metadata: { name: 'operatorhubio-catalog', namespace: NS, uid: 'cs-uid', resourceVersion: '10' } } as unknown as KubeObject;

function pod(tolerations: object[]): KubeObject {
  const p = catalogPod({ namespace: NS, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid', nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name: 'operatorhubio-catalog-x7k2p', uid: 'pod-uid', resourceVersion: '500', creationTimestamp: rfc3339(ago(86_400)) },
    spec: { ...(p.spec as object), tolerations },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: rfc3339(ago(50)) }] },
  } as KubeObject;
}

const unreachableNode = { ...node({ name: NODE, ready: 'Unknown', since: ago(60), taints: [taintUnreachable(ago(60))] }), metadata: { name: NODE, uid: 'node-uid', resourceVersion: '77' } } as unknown as KubeObject;

async function handle(tolerations: object[]) {
  const p = pod(tolerations);
  const { kube, deletes } = recordingKube([unreachableNode, cs, p], { now: () => NOW, mergePatch: noPatchExpected });
  const outcomes = await handleOnce(kube, { now: () => NOW }, objectUpdate(p));
  return { outcomes, deletes };
}

const NOT_MATCHING = { key: 'node.kubernetes.io/unreachable', operator: 'Equal', value: 'planned-maintenance', effect: 'NoExecute', tolerationSeconds: 5 };
const FOREVER = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' };
const NOT_READY_DEFAULT = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };

describe('RT28b-T1 catalog-reschedule: a toleration that does not tolerate the taint (Equal, other value) sets the fence', () => {
  it('control: the same pod without the non-matching toleration (it tolerates unreachable forever) is left alone', async () => {
    const { outcomes, deletes } = await handle([FOREVER, NOT_READY_DEFAULT]);
    expect(deletes).toEqual([]);
    expect(outcomes[0]).toMatchObject({ function: 'catalog-reschedule', status: 'noop' });
  });

  it('a pod that tolerates the unreachable taint forever (per Kubernetes) is NOT force-deleted 60 s into the partition because an Equal/value toleration listed first says 5 s', async () => {
    const { outcomes, deletes } = await handle([NOT_MATCHING, FOREVER, NOT_READY_DEFAULT]);
    // Today: DELETE Pod olm/operatorhubio-catalog-x7k2p with gracePeriodSeconds 0 ("past the
    // node.kubernetes.io/unreachable toleration (5s) plus 30s").
    expect(deletes.map((d) => `${d.ref.namespace}/${d.ref.name} grace=${d.opts.gracePeriodSeconds}`), JSON.stringify(outcomes)).toEqual([]);
  });

  it('likewise when a forever toleration of every taint (operator Exists, empty key) follows the non-matching one: Kubernetes uses the Exists one (tolerate forever), olm-medic the 5 s', async () => {
    const ANY_FOREVER = { operator: 'Exists', effect: 'NoExecute' };
    const { deletes } = await handle([NOT_MATCHING, ANY_FOREVER]);
    expect(deletes).toEqual([]);
  });
});
