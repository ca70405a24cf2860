/**
 * Red team 28b (E1): the recorder cuts an Event's note to 1024 JavaScript characters
 * (shared/core/recorder.ts buildEvent: `note: e.note.slice(0, 1024)`), UTF-16 code units. The
 * apiserver's limit is 1024 BYTES of UTF-8 (k8s.io/kubernetes pkg/apis/core/validation/events.go:
 * `len(event.Message) > NoteLengthLimit` on the Go string; events.k8s.io/v1 `note` is that field).
 * A note carrying text olm-medic copied from the cluster that is not ASCII is refused (422), and the
 * action it records goes unrecorded: the recorder only logs the failure.
 *
 * Scene: catalog-reschedule force-deletes a Terminating catalog pod with DisruptionTarget=True on a
 * NotReady node past OLM's grace. The condition's `reason` is copied into the note ("pod has
 * DisruptionTarget=True (<reason>) ..."). Pod condition reasons are not validated by the apiserver
 * (ValidatePodStatusUpdate checks only condition types), and pod status is written by the kubelet of
 * the very node that failed (NodeRestriction lets it) and by any controller with pods/status: a buggy
 * or hostile writer puts 400 CJK characters (1200 bytes) there. The delete happens; no Event says so.
 */
import { describe, expect, it } from 'vitest';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { catalogPod, catalogSource, node, rfc3339, taintUnreachable } from '../fixtures/olm-objects.js';
import { handleOnce, noPatchExpected, objectUpdate, recordingKube } from '../support/fake-runtime.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);
const NS = 'olm';
const NODE = 'worker-3';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';

const cs = { ...catalogSource({ namespace: NS, name: 'operatorhubio-catalog', image: IMAGE }), metadata: { name: 'operatorhubio-catalog', namespace: NS, uid: 'cs-uid', resourceVersion: '10' } } as unknown as KubeObject;

function pod(reason: string): KubeObject {
  const p = catalogPod({ namespace: NS, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid', nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name: 'operatorhubio-catalog-q9z4w', uid: 'pod-uid', resourceVersion: '900', creationTimestamp: rfc3339(ago(86_400)), deletionTimestamp: rfc3339(ago(100)), deletionGracePeriodSeconds: 30 },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'False', lastTransitionTime: rfc3339(ago(400)) },
        { type: 'DisruptionTarget', status: 'True', reason, message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: rfc3339(ago(120)) },
      ],
    },
  } as KubeObject;
}

const deadNode = { ...node({ name: NODE, ready: 'Unknown', since: ago(420), taints: [taintUnreachable(ago(420))] }), metadata: { name: NODE, uid: 'node-uid', resourceVersion: '77' } } as unknown as KubeObject;

/** A cluster whose Event create validates the note as the apiserver does (Go len: bytes). */
function fakeKube(p: KubeObject) {
  const events: KubeObject[] = [];
  const refused: string[] = [];
  const { kube, deletes } = recordingKube([deadNode, cs, p], {
    now: () => NOW,
    mergePatch: noPatchExpected,
    async create(o) {
      const note = (o as { note?: string }).note ?? '';
      if (Buffer.byteLength(note, 'utf8') > 1024) {
        refused.push(note);
        throw new KubeError(422, 'Invalid', `Event.events.k8s.io "${o.metadata.name}" is invalid: note: Invalid value: "": can have at most 1024 characters`);
      }
      events.push(o);
      return o;
    },
  });
  return { kube, deletes, events, refused };
}

describe('RT28b-E1 an action whose note carries non-ASCII text from the cluster goes unrecorded', () => {
  it('control: an ASCII DisruptionTarget reason: the force-delete is recorded', async () => {
    const p = pod('DeletionByTaintManager');
    const { kube, deletes, events } = fakeKube(p);
    await handleOnce(kube, { now: () => NOW }, update(p));
    expect(deletes).toHaveLength(1);
    expect(events.map((e) => (e as { reason?: string }).reason)).toEqual(['CatalogPodForceDeleted']);
  });

  it('a DisruptionTarget reason of 400 CJK characters: the force-delete still gets its Event (a note within 1024 bytes)', async () => {
    const p = pod('節'.repeat(400));
    const { kube, deletes, events, refused } = fakeKube(p);
    const outcomes = await handleOnce(kube, { now: () => NOW }, update(p));
    expect(outcomes[0]).toMatchObject({ function: 'catalog-reschedule', status: 'acted' });
    expect(deletes).toHaveLength(1); // the pod WAS force-deleted (grace 0)...
    // ...today the only Event for it is refused by the apiserver: note of 1200+ bytes.
    expect({ refusedBytes: refused.map((n) => Buffer.byteLength(n)), recorded: events.map((e) => (e as { reason?: string }).reason) }).toEqual({ refusedBytes: [], recorded: ['CatalogPodForceDeleted'] });
  });
});

const update = (p: KubeObject) => objectUpdate(p, `e-${Math.random()}`);
