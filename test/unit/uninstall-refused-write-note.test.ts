/**
 * Red team 51 (H2, fixed): the unlabel step was planned whatever the apiserver said of it before. A CRD whose
 * label patch the apiserver refuses for good (admission, narrowed RBAC: WriteRefused) stays in
 * `unlabelled`, so planOperator returns that act again on every look and never reaches finish(): a
 * Secret carrying the key is never named (UninstallSecretsKept), and as the executor drops known
 * refusals with no re-check, the look just stops there. README: "a listed Secret is named in a
 * Warning Event (UninstallSecretsKept) and the Operator object stays until someone deletes or
 * unlabels it". Variant: a leftover's delete refused the same way (the `pending` act) does the same.
 * Now a write the apiserver refused lately in this very state (PlanContext.refusedWrite) keeps its
 * object like policy does: not sent again, and what else keeps the Operator object is said.
 */
import { describe, expect, it } from 'vitest';
import { KubeError } from '../../shared/kube/errors.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { iso, KEY, NOW, requestedOperator } from '../support/auto-uninstall-scene.js';
import { recordingKube, refUpdate, withRuntime } from '../support/fake-runtime.js';

const crd: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'etcdclusters.etcd.database.coreos.com', uid: 'crd-1', resourceVersion: '31', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } }, spec: {} };
const sa: KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'etcd-operator', namespace: 'ns-a', uid: 'sa-1', resourceVersion: '30', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } } };
const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'etcd-cert', namespace: 'ns-a', uid: 'secret-1', resourceVersion: '32', creationTimestamp: iso(86400 * 30), labels: { [KEY]: '' } } };
const operator = requestedOperator;

async function looks(objects: KubeObject[], refuse: boolean): Promise<{ events: string[]; outcomes: unknown[] }> {
  const events: string[] = [];
  const { kube } = recordingKube(objects, {
    now: () => NOW,
    create: async (o) => (o.kind === 'Event' && events.push(String((o as { reason?: string }).reason)), o),
    delete: async (ref) => {
      if (refuse && ref.kind === 'ServiceAccount') throw new KubeError(403, 'Forbidden', 'serviceaccounts "etcd-operator" is forbidden: cannot delete');
      return 'deleted';
    },
    mergePatch: async (ref) => {
      if (refuse && ref.kind === 'CustomResourceDefinition') throw new KubeError(403, 'Forbidden', 'admission webhook "crd-guard" denied the request: CRD labels are managed');
      return {} as KubeObject;
    },
  });
  const outcomes: unknown[] = [];
  await withRuntime(kube, { now: () => NOW }, async (rt) => {
    // The first look, its planned re-check, and any later Operator update: three looks in all.
    for (const id of ['e1', 'e2', 'e3']) outcomes.push(...(await rt.engine.handle(refUpdate({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd.ns-a' }, id))));
  });
  return { events: [...new Set(events)], outcomes };
}

describe('red team 51 H2: a CRD whose unlabel the apiserver refuses hides the Secret for good', () => {
  it('refused CRD unlabel + Secret: the Secret is named (UninstallSecretsKept)', async () => {
    const r = await looks([crd, secret, operator([crd, secret])], true);
    expect(r.events).toContain('WriteRefused');
    expect(r.events).toContain('UninstallSecretsKept');
  });

  it('twin: Secret alone: UninstallSecretsKept', async () => {
    const r = await looks([secret, operator([secret])], true);
    expect(r.events).toContain('UninstallSecretsKept');
  });

  it('variant: refused ServiceAccount delete + Secret: the Secret is named (UninstallSecretsKept)', async () => {
    const r = await looks([sa, secret, operator([sa, secret])], true);
    expect(r.events).toContain('WriteRefused');
    expect(r.events).toContain('UninstallSecretsKept');
  });
});
