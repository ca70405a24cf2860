/**
 * Red team 50 (fixed): finalizer-cleanup planOperator returned the "only what policy keeps is left"
 * act (the kept leftovers' deletes, refused with their Warnings) before finish(): a leftover policy
 * keeps (an opted-out ServiceAccount) suppressed the UninstallSecretsKept Warning for a Secret
 * carrying the key (red team 49 N1 attached it beside kept *labels* only). README: a listed Secret
 * "is named in a Warning Event (UninstallSecretsKept)". Now said beside the kept leftover's Warning,
 * naming the kept leftover too. The CRD case is as documented: "once only kept leftovers remain the
 * uninstall stops there" (the Operator object stays anyway), so the CRD keeps the key until then.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { iso, KEY, NOW, requestedOperator } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const sa = (optedOut: boolean): KubeObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'etcd-operator', namespace: 'ns-a', uid: 'sa-1', resourceVersion: '30', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' }, ...(optedOut ? { annotations: { 'olm-medic.io/ignore': 'true' } } : {}) } });
const csv = (optedOut: boolean): KubeObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'etcdoperator.v0.9.4', namespace: 'ns-a', uid: 'csv-1', resourceVersion: '20', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' }, ...(optedOut ? { annotations: { 'olm-medic.io/ignore': 'true' } } : {}) },
  spec: {},
  status: { phase: 'Failed' },
});
const crd: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'etcdclusters.etcd.database.coreos.com', uid: 'crd-1', resourceVersion: '31', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } }, spec: {} };
const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'etcd-cert', namespace: 'ns-a', uid: 'secret-1', resourceVersion: '32', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } } };
const operator = requestedOperator;

async function run(objects: KubeObject[]): Promise<{ writes: string[]; events: string[]; requeue: unknown[] }> {
  const events: string[] = [];
  const { kube, writes } = recordingKube(objects, { now: () => NOW, create: async (o) => (o.kind === 'Event' && events.push(`${(o as { reason?: string }).reason} ${(o as { regarding?: { kind: string } }).regarding?.kind}`), o) });
  const out = await handleOnce(kube, { now: () => NOW, config: loadConfig({}, allFunctions) }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd.ns-a' }));
  return { writes: [...new Set(writes)], events: [...new Set(events)], requeue: out.map((x) => (x as { requeueAfterSeconds?: number }).requeueAfterSeconds) };
}

describe('red team 50: a kept leftover no longer hides the Secret that also keeps the Operator object', () => {
  it('opted-out SA + CRD: the uninstall stops at the kept leftover (README), the CRD keeps the key, nothing is written', async () => {
    const r = await run([sa(true), crd, operator([sa(true), crd])]);
    expect(r.events).toContain('OptedOut Operator');
    expect(r.writes).toEqual([]);
  });

  it('twin: CRD alone: it loses the key', async () => {
    const r = await run([crd, operator([crd])]);
    expect(r.writes).toContain('patch CustomResourceDefinition /etcdclusters.etcd.database.coreos.com');
  });

  it('opted-out SA + Secret: the Secret is named (UninstallSecretsKept), beside the SA\'s Warning', async () => {
    const r = await run([sa(true), secret, operator([sa(true), secret])]);
    expect(r.events).toContain('OptedOut Operator');
    expect(r.events).toContain('UninstallSecretsKept Operator');
  });

  it('twin: Secret alone: UninstallSecretsKept', async () => {
    const r = await run([secret, operator([secret])]);
    expect(r.events).toContain('UninstallSecretsKept Operator');
  });
});

// Red team 51, H1 (fixed): a kept CSV stops the uninstall at its stage (OLM recreates what it owns),
// and that return came before the note: the Secret went unsaid, and no later look was planned.
describe('red team 51 H1: a kept CSV no longer hides the Secret that also keeps the Operator object', () => {
  it("opted-out CSV + Secret: the Secret is named (UninstallSecretsKept) beside the CSV's Warning; nothing written, no re-check", async () => {
    const r = await run([csv(true), secret, operator([csv(true), secret])]);
    expect(r.writes).toEqual([]);
    expect(r.events).toContain('OptedOut Operator');
    expect(r.requeue.every((x) => x === undefined)).toBe(true);
    expect(r.events).toContain('UninstallSecretsKept Operator');
  });

  it('twin: CSV not opted out + Secret: the CSV is deleted (scene otherwise right)', async () => {
    const r = await run([csv(false), secret, operator([csv(false), secret])]);
    expect(r.writes).toContain('delete ClusterServiceVersion ns-a/etcdoperator.v0.9.4');
  });
});
