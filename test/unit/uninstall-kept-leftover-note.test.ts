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
import { componentsSelecting, iso, NOW } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const KEY = 'operators.coreos.com/etcd.ns-a';
const sa = (optedOut: boolean): KubeObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'etcd-operator', namespace: 'ns-a', uid: 'sa-1', resourceVersion: '30', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' }, ...(optedOut ? { annotations: { 'olm-medic.io/ignore': 'true' } } : {}) } });
const crd: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'etcdclusters.etcd.database.coreos.com', uid: 'crd-1', resourceVersion: '31', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } }, spec: {} };
const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'etcd-cert', namespace: 'ns-a', uid: 'secret-1', resourceVersion: '32', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } } };
const operator = (parts: KubeObject[]): KubeObject => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'Operator',
  metadata: { name: 'etcd.ns-a', uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60), annotations: { 'olm-medic.io/uninstall': 'true' } },
  spec: {},
  status: { components: componentsSelecting(KEY, parts) },
});

async function run(objects: KubeObject[]): Promise<{ writes: string[]; events: string[] }> {
  const events: string[] = [];
  const { kube, writes } = recordingKube(objects, { now: () => NOW, create: async (o) => (o.kind === 'Event' && events.push(`${(o as { reason?: string }).reason} ${(o as { regarding?: { kind: string } }).regarding?.kind}`), o) });
  await handleOnce(kube, { now: () => NOW, config: loadConfig({}, allFunctions) }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd.ns-a' }));
  return { writes: [...new Set(writes)], events: [...new Set(events)] };
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
