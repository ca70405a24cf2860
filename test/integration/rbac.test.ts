/**
 * The shipped RBAC (infra/base/function-rbac.yaml) on the real apiserver with RBAC authorization:
 * it allows what the functions do and forbids what they never need (negative tests).
 */
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import { KubeError } from '../../shared/kube/errors.js';
import { testCluster } from '../support/cluster.js';

const cp = inject('controlPlane');
const c = testCluster();
const sa = createKube(loadKubeConfig(cp.shippedKubeconfig), { retries: 0 });

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof KubeError) return e.status;
    throw e;
  }
}
async function drain(it: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of it) void _;
}

describe('shipped ServiceAccount', () => {
  it('may do what the functions need', async () => {
    const ns = await c.namespace('rbac');
    expect(await status(drain(sa.list('batch/v1', 'Job')))).toBe(200);
    expect(await status(drain(sa.list('v1', 'Pod', { labelSelector: 'olm.catalogSource' })))).toBe(200);
    expect(await status(drain(sa.list('operators.coreos.com/v1alpha1', 'InstallPlan')))).toBe(200);
    expect(await status(drain(sa.list('rbac.authorization.k8s.io/v1', 'ClusterRole', { labelSelector: 'olm.owner.kind=ClusterServiceVersion' })))).toBe(200);
    expect(await status(sa.get({ apiVersion: 'v1', kind: 'Node', name: 'nope' }))).toBe(200); // 404 is "undefined", allowed
    const ev = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'x.rbac', namespace: ns }, eventTime: new Date().toISOString().replace('Z', '000Z'), reportingController: 'olm-medic.io/test', reportingInstance: 't', action: 'Test', reason: 'Test', note: 'n', type: 'Normal', regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'x' } };
    expect(await status(sa.create(ev as never, { dryRun: false }))).toBe(200);
  });

  it.each([
    // Secrets are never read, listed or written
    ['get a Secret', () => sa.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'default', name: 'x' })],
    ['list Secrets', () => drain(sa.list('v1', 'Secret'))],
    ['delete a Secret', () => sa.delete({ apiVersion: 'v1', kind: 'Secret', namespace: 'default', name: 'x' }, { uid: 'u', dryRun: true })],
    // workloads are never created or changed, only leftover ones deleted
    ['create a Deployment', () => sa.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x', namespace: 'default' } } as never, { dryRun: true })],
    ['patch a Deployment', () => sa.mergePatch({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'x' }, { metadata: { labels: { a: 'b' } } }, { dryRun: true })],
    ['list Deployments', () => drain(sa.list('apps/v1', 'Deployment'))],
    // nodes, namespaces and CRDs are never deleted
    ['delete a Node', () => sa.delete({ apiVersion: 'v1', kind: 'Node', name: 'x' }, { uid: 'u', dryRun: true })],
    ['patch a Node', () => sa.mergePatch({ apiVersion: 'v1', kind: 'Node', name: 'x' }, { metadata: { labels: { a: 'b' } } }, { dryRun: true })],
    ['delete a Namespace', () => sa.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'default' }, { uid: 'u', dryRun: true })],
    ['delete a CRD', () => sa.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'subscriptions.operators.coreos.com' }, { uid: 'u', dryRun: true })],
    // no write access to OLM's catalog or operator groups
    ['delete a CatalogSource', () => sa.delete({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', namespace: 'default', name: 'x' }, { uid: 'u', dryRun: true })],
    ['patch an OperatorGroup', () => sa.mergePatch({ apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', namespace: 'default', name: 'x' }, { metadata: {} }, { dryRun: true })],
    // no Job creation or modification
    ['create a Job', () => sa.create({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'x', namespace: 'default' } } as never, { dryRun: true })],
    ['patch a ConfigMap', () => sa.mergePatch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x' }, { data: {} }, { dryRun: true })],
    ['create a ClusterRoleBinding (no escalation)', () => sa.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'x' } } as never, { dryRun: true })],
  ])('is forbidden to %s', async (_what, call) => {
    expect(await status(call())).toBe(403);
  });
});
