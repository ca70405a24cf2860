/**
 * Red team 28a (F1): finalizer-cleanup holds a CSV Terminating FOREVER when the apiserver refuses
 * the delete of one of its owned cluster-scoped objects with a lasting 4xx (403 from an admission
 * policy such as Gatekeeper/Kyverno/a ValidatingAdmissionPolicy protecting ClusterRoles, or RBAC a
 * cluster admin narrowed). README, "Our own finalizer is always released": "... or a leftover
 * olm-medic cannot delete: the CSV loses olm-medic.io/csv-cleanup (the cleanup is skipped and said
 * so in an Event) rather than stay Terminating".
 *
 * Real path: engine (shared/core/engine.ts) -> finalizer-cleanup observe/plan -> executor
 * (shared/core/executor.ts). planCsv plans the delete of the pending ClusterRole on every look
 * (it is never `deletionTimestamp`-marked, so the held-deleting release of red team 21 never
 * applies); the executor's perform() throws the 403, act() re-throws it (only 409 is re-planned),
 * and the engine answers `failed` (a 5xx the Broker redelivers, the sweep retries): the same
 * refused delete, forever. The CSV (and the namespace, when the CSV goes with its namespace) stays
 * Terminating; a reinstall of the same CSV name cannot be created.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import type { Engine } from '../../shared/core/engine.js';
import type { EventRecord } from '../../shared/core/recorder.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject, ListOptions, Reader, Ref, Writer } from '../../shared/kube/types.js';
import { csv as csvFixture, csvClusterRole, rfc3339 } from '../fixtures/olm-objects.js';
import { finalizerCleanupEngine } from '../support/fake-runtime.js';

const NS = 'operators';
const NAME = 'etcdoperator.v0.9.4';
const DELETED = new Date('2025-03-01T12:00:00Z');
const CSV_REF: Ref = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', namespace: NS, name: NAME };

function scene() {
  const csv = csvFixture({ namespace: NS, name: NAME, finalizers: ['olm-medic.io/csv-cleanup'] }) as unknown as KubeObject;
  csv.metadata = { ...csv.metadata, uid: 'csv-uid', resourceVersion: '10', creationTimestamp: '2025-02-01T00:00:00Z', deletionTimestamp: rfc3339(DELETED) };
  const cr = csvClusterRole({ csvName: NAME, csvNamespace: NS }) as unknown as KubeObject;
  cr.metadata = { ...cr.metadata, uid: 'cr-uid', resourceVersion: '11', creationTimestamp: '2025-02-01T00:00:00Z' };
  const objects = new Map<string, KubeObject>([
    ['ClusterServiceVersion', csv],
    ['ClusterRole', cr],
  ]);
  const reader: Reader = {
    async get<T extends KubeObject>(ref: Ref) {
      const o = objects.get(ref.kind);
      return (o && o.metadata.name === ref.name ? structuredClone(o) : undefined) as T | undefined;
    },
    async *list<T extends KubeObject>(_a: string, kind: string, _o: ListOptions = {}) {
      const o = objects.get(kind);
      if (o) yield structuredClone(o) as T;
    },
  };
  const writes: string[] = [];
  const writer: Writer = {
    async delete(ref) {
      writes.push(`delete ${ref.kind}/${ref.name}`);
      // A lasting refusal: an admission policy protecting ClusterRoles (same answer every time).
      throw new KubeError(403, 'Forbidden', `admission webhook "rbac-guard.example.com" denied the request: clusterroles are protected`);
    },
    async mergePatch(ref, patch) {
      writes.push(`patch ${ref.kind}/${ref.name} ${JSON.stringify(patch)}`);
      const o = objects.get(ref.kind)!;
      const md = (patch as { metadata?: { finalizers?: string[] } }).metadata;
      if (md?.finalizers) {
        o.metadata.finalizers = md.finalizers;
        if (md.finalizers.length === 0) objects.delete(ref.kind);
      }
      return structuredClone(o);
    },
    async create(o) {
      return o;
    },
  };
  return { objects, reader, writer, writes };
}

let engine: Engine | undefined;
afterEach(() => engine?.close());

describe('finalizer-cleanup (red team 28a F1): a leftover olm-medic cannot delete (a lasting 403) must not hold the CSV Terminating forever', () => {
  it('a server in DRY_RUN (which promises to release what it marked) releases at once, though the simulated delete is refused', async () => {
    // Admission webhooks and policies run on dryRun=All requests too: the dry-run delete gets the same 403.
    const s = scene();
    const now = new Date(DELETED.getTime() + 10_000);
    const events: EventRecord[] = [];
    engine = finalizerCleanupEngine({ reader: s.reader, writer: s.writer, now: () => now, dryRun: true, events });
    const o = await engine.reconcile(finalizerCleanup as AnyFunction, CSV_REF);
    expect({ status: o.status, finalizers: s.objects.get('ClusterServiceVersion')?.metadata.finalizers ?? '(CSV gone)' }).toMatchObject({ finalizers: expect.not.arrayContaining(['olm-medic.io/csv-cleanup']) });
  });

  it('after a day of refused deletes the CSV has lost olm-medic.io/csv-cleanup, with an Event saying the cleanup was skipped', async () => {
    const s = scene();
    let now = new Date(DELETED.getTime() + 10_000);
    const events: EventRecord[] = [];
    engine = finalizerCleanupEngine({ reader: s.reader, writer: s.writer, now: () => now, dryRun: false, events });
    // Redeliveries and sweeps over a day (every 10 minutes).
    const statuses = new Set<string>();
    for (let i = 0; i < 144 && s.objects.has('ClusterServiceVersion'); i++) {
      const o = await engine.reconcile(finalizerCleanup as AnyFunction, CSV_REF);
      statuses.add(o.status);
      now = new Date(now.getTime() + 600_000);
    }
    const csv = s.objects.get('ClusterServiceVersion');
    expect(s.writes.filter((w) => w.startsWith('delete')).length, 'premise: the ClusterRole delete was tried and refused').toBeGreaterThan(0);
    expect({ statuses: [...statuses], finalizers: csv?.metadata.finalizers ?? '(CSV gone)' }).toMatchObject({ finalizers: expect.not.arrayContaining(['olm-medic.io/csv-cleanup']) });
    expect(events.some((e) => e.regarding.kind === 'ClusterServiceVersion' && /Skipped|Completed|Released|Incomplete/.test(e.reason))).toBe(true);
    // The refusal itself is a Warning naming the object and the apiserver's answer, and the delete was not re-sent all day.
    expect(events.filter((e) => e.reason === 'WriteRefused' && e.type === 'Warning' && e.related?.name === s.objects.get('ClusterRole')?.metadata.name && /rbac-guard/.test(e.note))).toHaveLength(1);
    expect(s.writes.filter((w) => w.startsWith('delete')).length).toBe(1);
    expect(statuses).toEqual(new Set(['refused', 'acted']));
  });
});
