/**
 * Red team 28a (E1): an action olm-medic performs goes without its Kubernetes Event when the note
 * holds non-ASCII characters. buildEvent (shared/core/recorder.ts) caps `note` with
 * `e.note.slice(0, 1024)`: 1024 UTF-16 code units. The apiserver caps it in BYTES: events.k8s.io/v1
 * validation `len(event.Message) > NoteLengthLimit` (k8s.io/kubernetes pkg/apis/core/validation/
 * events.go, NoteLengthLimit = 1024; Go's len of a string is its UTF-8 byte count) answers 422, and
 * the recorder swallows it (onResult 'error', a log line): the delete happened, no Event says so.
 *
 * Names reach notes verbatim, and RBAC names are any path segment (path.IsValidPathSegmentName, no
 * length limit): a ClusterRole labelled as owned by a CSV (a bundle's own ClusterRole manifest,
 * or one a user labelled) may be named in any script. Here a ClusterRole with a Japanese name of
 * 330 characters: the note is ~420 characters (under the JS cap) and ~1080 bytes (over the
 * apiserver's). Every note built from a long list (an uninstall refusal, a held-deleting release)
 * is hit the same way by a single non-ASCII name once it reaches 1024 characters.
 */
import { describe, expect, it } from 'vitest';
import { planCsv, defaults } from '../../functions/finalizer-cleanup/plan.js';
import { createExecutor } from '../../shared/core/executor.js';
import { ActionBudget } from '../../shared/core/policy.js';
import { createRecorder } from '../../shared/core/recorder.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, Writer } from '../../shared/kube/types.js';
import { csv as csvFixture, csvClusterRole } from '../fixtures/olm-objects.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const NS = 'operators';
const NAME = 'etcdoperator.v0.9.4';

describe('redteam28a E1: Event notes fit the apiserver\'s 1024-BYTE limit', () => {
  it('the delete of a ClusterRole with a non-ASCII name is recorded (the apiserver accepts the Event)', async () => {
    const c = csvFixture({ namespace: NS, name: NAME, finalizers: ['olm-medic.io/csv-cleanup'] }) as unknown as KubeObject;
    c.metadata = { ...c.metadata, uid: 'csv-uid', resourceVersion: '10', creationTimestamp: '2025-02-01T00:00:00Z', deletionTimestamp: '2025-03-01T11:59:00Z' };
    const cr = csvClusterRole({ csvName: NAME, csvNamespace: NS, name: `${'オペレーター管理者ロール'.repeat(30)}` }) as unknown as KubeObject;
    cr.metadata = { ...cr.metadata, uid: 'cr-uid', resourceVersion: '11', creationTimestamp: '2025-02-01T00:00:00Z' };
    const p = planCsv({ kind: 'csv', csvRef: { apiVersion: c.apiVersion, kind: c.kind, namespace: NS, name: NAME }, csv: c, owned: [cr] }, { now: NOW, options: { ...defaults }, policy: { dryRun: false, protectedNamespaces: new Set() } });
    expect(p.kind, 'premise: the cleanup deletes the ClusterRole').toBe('act');

    const accepted: KubeObject[] = [];
    const rejected: string[] = [];
    const writer: Writer = {
      async delete() {
        return 'deleted';
      },
      async mergePatch() {
        return {} as KubeObject;
      },
      // The apiserver's events.k8s.io/v1 create validation of the note (bytes, as Go's len()).
      async create(ev) {
        const note = (ev as { note?: string }).note ?? '';
        if (Buffer.byteLength(note, 'utf8') > 1024) {
          rejected.push(`${Buffer.byteLength(note, 'utf8')} bytes / ${note.length} chars`);
          throw new KubeError(422, 'Invalid', `Event "${ev.metadata.name}" is invalid: note: Invalid value: "": can have at most 1024 characters`);
        }
        accepted.push(ev);
        return ev;
      },
    };
    const recorder = createRecorder(writer, () => NOW, () => undefined, 'olm-medic-0');
    const execute = createExecutor({ writer, recorder, policy: { dryRun: false, protectedNamespaces: new Set(), maxActionsPerWindow: 100, windowSeconds: 60 }, budget: new ActionBudget(100, 60_000, () => NOW.getTime()) });
    const outcome = await execute('finalizer-cleanup', p, `ClusterServiceVersion/${NS}/${NAME}`);
    expect(outcome.status, 'premise: the ClusterRole was deleted').toBe('acted');
    expect({ rejected, recorded: accepted.map((e) => (e as { reason?: string }).reason) }).toEqual({ rejected: [], recorded: ['CsvOwnedObjectDeleted'] });
  });
});
