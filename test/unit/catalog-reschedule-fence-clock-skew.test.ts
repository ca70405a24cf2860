/**
 * Red team 32 (S3): catalog-reschedule force-deletes (grace 0) a catalog pod inside its NoExecute
 * toleration when kube-controller-manager's clock runs behind the apiserver's.
 *
 * plan.ts fence(): `since = max(Ready.lastTransitionTime, taint.timeAdded)`, compared with `ctx.now`
 * (the apiserver's clock). BOTH are stamped by kube-controller-manager with ITS OWN clock: the
 * unreachable taint by pkg/controller/util/node/controller_utils.go:198 (`taintToAdd.TimeAdded = &now`,
 * metav1.Now()), Ready=Unknown by nodelifecycle/node_lifecycle_controller.go:930-954 (`nc.now()`).
 * Taint eviction itself counts the toleration from when IT saw the taint, on that same clock
 * (pkg/controller/tainteviction/taint_eviction.go:530/586 `processPodOnNode(..., time.Now())`,
 * :480 `triggerTime := startTime.Add(minTolerationTime)`), so a KCM behind never evicts early; olm-medic,
 * mixing the two clocks, does as soon as the skew exceeds fenceMarginSeconds (30 s).
 * README: "Time is the apiserver's … a skewed host cannot act early"; "longer than the pod's
 * toleration seconds for it plus fenceMarginSeconds".
 *
 * Scene: the node became unreachable 200 s ago (its managedFields entry for kube-controller-manager,
 * a time the APISERVER stamps, says so); KCM runs 3 minutes behind, so the taint and the Ready
 * transition read "380 s ago". The registry pod tolerates unreachable for 300 s (DefaultTolerationSeconds).
 * The node may come back any second; olm-medic force-deletes its catalog pod 130 s early.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { catalogPod, catalogSource, defaultPodTolerations, node, rfc3339, taintUnreachable } from '../fixtures/olm-objects.js';
import { handleOnce, noPatchExpected, objectUpdate, recordingKube } from '../support/fake-runtime.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);
const NS = 'olm';
const NODE = 'worker-7';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';
const REAL = 200; // seconds the node has really been unreachable (apiserver clock)

const cs = { ...catalogSource({ namespace: NS, name: 'operatorhubio-catalog', image: IMAGE }), metadata: { name: 'operatorhubio-catalog', namespace: NS, uid: 'cs-uid', resourceVersion: '10' } } as unknown as KubeObject;

function pod(skew: number): KubeObject {
  const p = catalogPod({ namespace: NS, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid', nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name: 'operatorhubio-catalog-x7k2p', uid: 'pod-uid', resourceVersion: '500', creationTimestamp: rfc3339(ago(86_400)) },
    spec: { ...(p.spec as object), tolerations: defaultPodTolerations() },
    // MarkPodsNotReady: also KCM's clock.
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: rfc3339(ago(REAL + skew)) }] },
  } as KubeObject;
}

function unreachableNode(skew: number): KubeObject {
  const n = node({ name: NODE, ready: 'Unknown', since: ago(REAL + skew), taints: [taintUnreachable(ago(REAL + skew))] }) as unknown as KubeObject;
  return {
    ...n,
    metadata: {
      ...n.metadata,
      uid: 'node-uid',
      resourceVersion: '77',
      creationTimestamp: rfc3339(ago(86_400 * 30)),
      // The apiserver's own stamp of KCM's writes (taint, then Ready=Unknown).
      managedFields: [
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: rfc3339(ago(REAL)), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:taints': {} } } },
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: rfc3339(ago(REAL)), fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': {} } } },
      ],
    },
  } as KubeObject;
}

async function handle(skew: number) {
  const p = pod(skew);
  const n = unreachableNode(skew);
  const { kube, deletes } = recordingKube([n, cs, p], { now: () => NOW, mergePatch: noPatchExpected });
  const outcomes = await handleOnce(kube, { now: () => NOW }, objectUpdate(p));
  return { outcomes, deletes };
}

describe('red team 32 S3: the node-loss fence is not shortened by a kube-controller-manager clock behind the apiserver', () => {
  it('control: no skew — 200 s into a 300 s toleration, no delete', async () => {
    const { deletes } = await handle(0);
    expect(deletes).toEqual([]);
  });
  it('KCM 3 min behind: the pod is not force-deleted 200 s into its 300 s toleration', async () => {
    const { outcomes, deletes } = await handle(180);
    // Today: DELETE Pod olm/operatorhubio-catalog-x7k2p gracePeriodSeconds=0 ("not Ready for 380s").
    expect(deletes.map((d) => `${d.ref.namespace}/${d.ref.name} grace=${d.opts.gracePeriodSeconds}`), JSON.stringify(outcomes)).toEqual([]);
  });
});
