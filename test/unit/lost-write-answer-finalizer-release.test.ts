/**
 * Red team 35, F1 (fixed): a finalizer release whose answer was lost is erased from the outcome and the
 * Events — the very W1 bug (red team 33) d54b3e5 fixed for DELETE, still open for the PATCH that
 * releases olm-medic's own CSV finalizer.
 *
 * finalizer-cleanup's release() (functions/finalizer-cleanup/plan.ts:116-124) patches
 * `metadata.finalizers` to the list without MEDIC.finalizer. Two shapes defeat the executor's
 * re-read, landed() (shared/core/executor.ts:88: the patch branch only ever asks contains(live, patch)):
 *  (a) the CSV is being deleted and ours was its last finalizer (CsvCleanupCompleted, CsvCleanupSkipped,
 *      CsvFinalizerReleased…): the PATCH that lands REMOVES the object. The client retries it after the
 *      lost answer, gets 404 NotFound (its own effect) -> WriteOutcomeUnknown; landed() re-reads, finds
 *      nothing, and for a patch "nothing" is never "made" -> GoneAfterAll (executor.ts:198) -> result
 *      'gone' -> replan cause 'gone' with done [] and NO Event. The release that let the CSV go is
 *      reported as "already gone" (engine: status gone/requeued, CLI exit 0) — exactly what W1 was.
 *  (b) the CSV is not being deleted and ours was its only finalizer (releaseMode, copied CSV): the
 *      patch sends `finalizers: []`, which the apiserver stores as NO finalizers field (omitempty).
 *      contains(live, {metadata:{finalizers: []}}) compares isDeepStrictEqual(undefined, []) -> false
 *      -> the retry's 409 is taken for someone else's change: replan cause 'conflict', done [], no
 *      Event; the write is hidden.
 * SAFE: the release is reported done with its Event (noting the lost answer), as for a DELETE.
 */
import { describe, expect, it } from 'vitest';
import type { Action } from '../../shared/core/types.js';
import { createKube } from '../../shared/kube/client.js';
import { failure, notFound, recordingExecutor, send, startScripted } from '../support/scripted-apiserver.js';

const V1A = 'operators.coreos.com/v1alpha1';
const CSV_PATH = `/apis/operators.coreos.com/v1alpha1/namespaces/team-a/clusterserviceversions/pkg.v1`;
const OURS = 'olm-medic.io/csv-cleanup';

/** A fake apiserver holding one CSV: applies the first PATCH, then drops the connection (answer lost). */
async function apiserver(deleting: boolean) {
  let csv: Record<string, any> | undefined = {
    apiVersion: V1A,
    kind: 'ClusterServiceVersion',
    metadata: { name: 'pkg.v1', namespace: 'team-a', uid: 'csv-1', resourceVersion: '7', finalizers: [OURS], ...(deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    status: { phase: 'Succeeded' },
  };
  let rv = 7;
  let patches = 0;
  const gone = notFound('pkg.v1', 'operators.coreos.com', 'clusterserviceversions');
  const api = await startScripted((req, res) => {
    if (req.path !== CSV_PATH) return send(res, 404, failure(404, 'NotFound', 'no'));
    if (!csv) return send(res, 404, gone);
    if (req.method === 'GET') return send(res, 200, csv);
    if (req.method === 'PATCH') {
      patches++;
      const p = JSON.parse(req.body) as { metadata: { resourceVersion?: string; finalizers?: string[] } };
      if (p.metadata.resourceVersion !== csv.metadata.resourceVersion) return send(res, 409, failure(409, 'Conflict', 'the object has been modified', { name: 'pkg.v1', group: 'operators.coreos.com', kind: 'clusterserviceversions' }));
      // Merge patch; an empty list is stored as no field (omitempty), and a deleting object
      // without finalizers is removed at once.
      const fin = p.metadata.finalizers ?? csv.metadata.finalizers;
      const { finalizers: _f, ...md } = csv.metadata;
      csv = { ...csv, metadata: { ...md, ...(fin?.length ? { finalizers: fin } : {}), resourceVersion: String(++rv) } };
      if (csv.metadata.deletionTimestamp && !csv.metadata.finalizers) csv = undefined;
      if (patches === 1) return req.drop(); // applied; its answer lost
      return send(res, 200, csv ?? gone);
    }
    send(res, 405, failure(405, 'MethodNotAllowed', 'no'));
  });
  const kube = createKube(api.kubeConfig(), { retries: 3, sleep: async () => undefined });
  return { kube, log: api.log, close: api.close, csv: () => csv };
}

function run(kube: ReturnType<typeof createKube>, deleting: boolean) {
  const { execute, events } = recordingExecutor(kube);
  // Exactly what functions/finalizer-cleanup/plan.ts release() builds for this CSV.
  const release: Action = {
    verb: 'patch',
    target: { apiVersion: V1A, kind: 'ClusterServiceVersion', namespace: 'team-a', name: 'pkg.v1', uid: 'csv-1', resourceVersion: '7', ...(deleting ? { deleting: true as const } : {}) },
    patch: { metadata: { finalizers: [] } },
    releasesOwnFinalizer: true,
    reason: deleting ? 'CsvCleanupCompleted' : 'CsvFinalizerReleased',
    note: `Removed finalizer ${OURS} from CSV team-a/pkg.v1: cleanup done.`,
  };
  return { out: execute('finalizer-cleanup', { kind: 'act', summary: 'release', actions: [release] }, 'ClusterServiceVersion/team-a/pkg.v1'), events };
}

describe('(red team 35) F1: a finalizer release whose answer was lost is not erased', () => {
  it('(a) deleting CSV, ours the last finalizer: the applied release removed the CSV; retry 404 -> must be reported done with its Event, not "already gone"', async () => {
    const api = await apiserver(true);
    try {
      const t = run(api.kube, true);
      const out = await t.out;
      expect(api.csv()).toBeUndefined(); // the release landed: the CSV is gone
      expect(api.log.filter((l) => l.startsWith('PATCH'))).toHaveLength(2);
      // Current code: { status: 'replan', cause: 'gone', done: [] }, events [].
      expect({ done: (out as { done?: unknown[] }).done ?? (out as { actions?: unknown[] }).actions, events: t.events.map((e) => e.reason) }).toEqual({
        done: [expect.objectContaining({ verb: 'patch', result: 'done' })],
        events: ['CsvCleanupCompleted'],
      });
    } finally {
      await api.close();
    }
  }, 20_000);

  it('(b) CSV not deleting, ours the only finalizer: the applied release (finalizers: [] -> no field) must be reported done with its Event, not a conflict', async () => {
    const api = await apiserver(false);
    try {
      const t = run(api.kube, false);
      const out = await t.out;
      expect(api.csv()?.metadata.finalizers).toBeUndefined(); // the release landed
      // Current code: { status: 'replan', cause: 'conflict', done: [] }, events [].
      expect({ done: (out as { done?: unknown[] }).done ?? (out as { actions?: unknown[] }).actions, events: t.events.map((e) => e.reason) }).toEqual({
        done: [expect.objectContaining({ verb: 'patch', result: 'done' })],
        events: ['CsvFinalizerReleased'],
      });
    } finally {
      await api.close();
    }
  }, 20_000);
});
