/**
 * Red team 46, P1 (fixed): an uninstall writes to a cluster-scoped leftover attributed (olm.owner.namespace)
 * to a PROTECTED namespace when the leftover is of a kind it keeps (APIService): it takes the key off
 * it with no guard for that namespace, and then deletes the Operator object.
 *
 * README, finalizer-cleanup *B*: the uninstall removes what the refs list "never a cluster-scoped object
 * of a live CSV nor one attributed (`olm.owner.namespace`) to a protected namespace", and "A leftover
 * policy keeps (opted out, or in or attributed to a protected namespace) is named in a Warning Event
 * ... once only kept leftovers remain the uninstall stops there (refused, no re-check; the Operator
 * object stays)". PROTECTED_NAMESPACES names "the namespaces olm-medic must never write to"
 * (config). planOperator guards the DELETE of such a leftover with its olm.owner.namespace
 * (ownerGuards, red team 12 U6: a ClusterRole is refused), but the unlabel patch of a kept kind carries
 * no guard: the APIService olm-operator labelled as owned by a CSV in kube-system (olm-facts §4.1,
 * §4.2: APIServices carry olm.owner*) is patched, and with its key gone nothing keeps the Operator
 * object, which the next look deletes (nothing else carries the key) — the protected install's
 * Operator removed by olm-medic. (The recording fake applies no patch, so this file proves the patch;
 * the delete that follows it is not reached here.)
 *
 * Scene: a user annotates Operator metrics.kube-system `olm-medic.io/uninstall: "true"`; its CSV
 * kube-system/metrics-server.v0.7.0 is already gone; the refs list its APIService, still labelled
 * olm.owner=metrics-server.v0.7.0, olm.owner.namespace=kube-system. kube-system is protected (the
 * default PROTECTED_NAMESPACES).
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { componentLabelKey } from '../../shared/olm/olm.js';
import { componentsSelecting, iso, NOW } from '../support/auto-uninstall-scene.js';
import { handleOnce, recordingKube, refUpdate } from '../support/fake-runtime.js';

const NS = 'kube-system';
const KEY = componentLabelKey('metrics', NS);
const NAME = KEY.slice('operators.coreos.com/'.length);
const owner = { 'olm.owner': 'metrics-server.v0.7.0', 'olm.owner.namespace': NS, 'olm.owner.kind': 'ClusterServiceVersion' };

const clusterPart = (apiVersion: string, kind: string, name: string): KubeObject => ({
  apiVersion, kind,
  metadata: { name, uid: `${kind}-${name}`, resourceVersion: '40', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '', ...owner } },
});

function operator(parts: KubeObject[]): KubeObject {
  return {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'Operator',
    metadata: { name: NAME, uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60), annotations: { 'olm-medic.io/uninstall': 'true' } },
    spec: {},
    status: { components: componentsSelecting(KEY, parts) },
  };
}

async function update(objects: KubeObject[], env: Record<string, string> = {}): Promise<string[]> {
  const config = loadConfig(env, allFunctions);
  const { kube, writes } = recordingKube(objects, { now: () => NOW, patchBody: true });
  await handleOnce(kube, { now: () => NOW, config }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: NAME }));
  return writes;
}

describe('red team 46 P1: a leftover attributed to a protected namespace is not written to by an uninstall', () => {
  it("control (red team 12 U6): kube-system's leftover ClusterRole is kept (refused), the Operator object stays", async () => {
    const cr = clusterPart('rbac.authorization.k8s.io/v1', 'ClusterRole', 'metrics-server.v0.7.0-abcde');
    expect(await update([cr, operator([cr])])).toEqual([]);
  });

  it("kube-system's leftover APIService: its key is not taken off, and the Operator object is not deleted", async () => {
    const api = clusterPart('apiregistration.k8s.io/v1', 'APIService', 'v1beta1.metrics.k8s.io');
    const writes = await update([api, operator([api])]);
    expect(writes.filter((w) => w.startsWith('patch APIService')), 'APIService attributed to protected kube-system patched').toEqual([]);
    expect(writes.filter((w) => w.startsWith('delete Operator')), 'protected install\'s Operator deleted').toEqual([]);
  });

  it('twin: with no namespace protected, the APIService loses the key', async () => {
    const api = clusterPart('apiregistration.k8s.io/v1', 'APIService', 'v1beta1.metrics.k8s.io');
    expect([...new Set(await update([api, operator([api])], { PROTECTED_NAMESPACES: 'none' }))]).toEqual([`patch APIService /v1beta1.metrics.k8s.io {"metadata":{"labels":{"${KEY}":null},"resourceVersion":"40"}}`]);
  });
});

describe('only a label policy keeps is left: what else keeps the Operator object is still said', () => {
  async function events(objects: KubeObject[]): Promise<{ writes: string[]; reasons: string[] }> {
    const reasons: string[] = [];
    const { kube, writes } = recordingKube(objects, { now: () => NOW, create: async (o) => (o.kind === 'Event' && reasons.push(String((o as { reason?: string }).reason)), o) });
    await handleOnce(kube, { now: () => NOW, config: loadConfig({}, allFunctions) }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: NAME }));
    return { writes, reasons };
  }
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'metrics-server-cert', namespace: 'monitoring', uid: 'secret-1', resourceVersion: '41', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } } };

  it('the kept APIService label and a Secret carrying the key: the policy Warning and UninstallSecretsKept (before: the Secret went unsaid)', async () => {
    const api = clusterPart('apiregistration.k8s.io/v1', 'APIService', 'v1beta1.metrics.k8s.io');
    const { writes, reasons } = await events([api, secret, operator([api, secret])]);
    expect(writes).toEqual([]);
    expect(reasons).toContain('UninstallSecretsKept');
    expect(reasons.filter((r) => r !== 'UninstallSecretsKept').length, 'the kept label\'s own policy Warning').toBeGreaterThan(0);
  });

  it('twin: the kept label alone: only its policy Warning', async () => {
    const api = clusterPart('apiregistration.k8s.io/v1', 'APIService', 'v1beta1.metrics.k8s.io');
    const { reasons } = await events([api, operator([api])]);
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons).not.toContain('UninstallSecretsKept');
  });
});
