/**
 * Red team 49 N1 (minor, fixed): the refusal planOperator attaches beside policy-kept labels says what
 * is not true. With a label policy keeps (an APIService attributed to protected kube-system) and a
 * Secret carrying the key, the attached UninstallSecretsKept note tells the user "delete them or
 * remove the label, and the Operator object will be removed" — naming only the Secret. README: an
 * APIService attributed to a protected namespace "keeps the key, and with it the Operator object":
 * a user who follows the Event removes the Secret's label and the Operator object stays (and, no
 * re-check planned, nothing says why). The note must not promise the removal while a kept label
 * holds the Operator object (or must name that object too): it now names the APIService, its label
 * kept by policy, among what still carries the key.
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
const api: KubeObject = { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1beta1.metrics.k8s.io', uid: 'api-1', resourceVersion: '40', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '', ...owner } } };
const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'metrics-server-cert', namespace: 'monitoring', uid: 'secret-1', resourceVersion: '41', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } } };
const operator = (parts: KubeObject[]): KubeObject => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'Operator',
  metadata: { name: NAME, uid: 'op-1', resourceVersion: '60', creationTimestamp: iso(86400 * 60), annotations: { 'olm-medic.io/uninstall': 'true' } },
  spec: {},
  status: { components: componentsSelecting(KEY, parts) },
});

async function notes(objects: KubeObject[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const { kube } = recordingKube(objects, { now: () => NOW, create: async (o) => (o.kind === 'Event' && (out[String((o as { reason?: string }).reason)] = String((o as { note?: string }).note)), o) });
  await handleOnce(kube, { now: () => NOW, config: loadConfig({}, allFunctions) }, refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: NAME }));
  return out;
}

describe('red team 49 N1: the refusal beside a kept label does not promise what the kept label prevents', () => {
  it('kept APIService label + Secret: UninstallSecretsKept does not say the Operator object will be removed once the Secret is dealt with', async () => {
    const n = await notes([api, secret, operator([api, secret])]);
    expect(n.UninstallSecretsKept).toBeDefined();
    expect(n.UninstallSecretsKept).toMatch(/APIService v1beta1\.metrics\.k8s\.io \(its label kept by policy/);
    expect(n.UninstallSecretsKept).toMatch(/Secret monitoring\/metrics-server-cert/);
  });

  it('twin: the Secret alone (no kept label): the promise holds', async () => {
    const n = await notes([secret, operator([secret])]);
    expect(n.UninstallSecretsKept).toMatch(/the Operator object will be removed/);
    expect(n.UninstallSecretsKept).not.toMatch(/kept by policy/);
  });
});
