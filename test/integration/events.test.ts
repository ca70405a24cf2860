/**
 * olm-medic's Events against the real apiserver's rules (red team 28a E1/E2, 28b):
 *  - NamespaceLifecycle admission refuses every create in a namespace being deleted, Events too
 *    (403, cause NamespaceTerminating) — and deleting a namespace is how most CSVs go. The Event is
 *    then recorded in "default" (events.k8s.io/v1 allows a namespaced `regarding` there).
 *  - The note limit is 1,024 BYTES (Go's len); a note of non-ASCII text cut at 1,024 characters was refused (422).
 */
import { describe, expect, it } from 'vitest';
import { createRecorder, type EventRecord } from '../../shared/core/recorder.js';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { eventually, testCluster } from '../support/cluster.js';

const c = testCluster();

function recorderAs(kubeconfig: string) {
  const results: { result: string; err?: unknown }[] = [];
  const recorder = createRecorder(createKube(loadKubeConfig(kubeconfig)), () => new Date(), (result, err) => results.push({ result, ...(err ? { err } : {}) }), 'olm-medic-test');
  return { recorder, results };
}

const record = (ns: string, name: string, uid: string, note: string): EventRecord => ({
  fn: 'finalizer-cleanup',
  regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name, uid },
  reason: 'CsvCleanupCompleted',
  note,
  type: 'Normal',
  action: 'Patch',
  stateKey: `${uid}/${note.length}`,
});

describe('Events on the real apiserver', () => {
  it('an Event about an object in a namespace being deleted is recorded in "default" (the shipped identity)', async () => {
    const ns = await c.namespace('ev-term');
    // A finalizer keeps the namespace Terminating, as olm-medic's CSV finalizer does.
    const cm: KubeObject = await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: ns, finalizers: ['olm-medic.io/test-hold'] } });
    const nsObj = (await c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }))!;
    await c.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }, { dryRun: false, uid: nsObj.metadata.uid! });
    await eventually(async () => ((await c.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }))?.status as { phase?: string } | undefined)?.phase === 'Terminating', `${ns} Terminating`);
    const { recorder, results } = recorderAs(c.kubeconfig.shipped);
    await recorder.record(record(ns, 'held', cm.metadata.uid!, 'released the CSV of a namespace being deleted'));
    expect(results.map((r) => r.result), String(results[0]?.err)).toEqual(['created']);
    const inDefault = (await c.medicEvents('default')).filter((e) => e.regarding.namespace === ns);
    expect(inDefault).toHaveLength(1);
    expect(inDefault[0]).toMatchObject({ reason: 'CsvCleanupCompleted', regarding: { kind: 'ConfigMap', name: 'held', namespace: ns, uid: cm.metadata.uid } });
    // Let the namespace go.
    await c.admin.mergePatch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'held' }, { metadata: { finalizers: null } }, { dryRun: false });
  });

  it('a note of 1,000 non-ASCII characters (~3 KB) is cut to 1,024 bytes and accepted', async () => {
    const ns = await c.namespace('ev-note');
    const cm: KubeObject = await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: ns } });
    const note = `deleted ClusterRole ${'役'.repeat(1000)}`;
    const { recorder, results } = recorderAs(c.kubeconfig.shipped);
    await recorder.record(record(ns, 'x', cm.metadata.uid!, note));
    expect(results.map((r) => r.result), String(results[0]?.err)).toEqual(['created']);
    const [ev] = await c.medicEvents(ns);
    expect(Buffer.byteLength(ev!.note)).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(ev!.note)).toBeGreaterThan(1020);
    expect(note.startsWith(ev!.note)).toBe(true);
  });
});
