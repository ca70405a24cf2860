/**
 * Red team 28b (S1): a sweep scoped to one namespace (PingSource data {"namespace":"team-a"}, or
 * `olm-medic sweep --namespace team-a`) force-deletes catalog pods in OTHER namespaces.
 * catalog-reschedule's sweep lists the scope's catalog pods but yields their NODES
 * (functions/catalog-reschedule/index.ts sweep()), and observe() of a node lists the catalog pods of
 * every namespace on it (no namespace in its list): the scope is lost between sweep and observe.
 * README: a sweep's data "may scope the sweep"; the CLI's --namespace is that scope; the uninstall
 * case "one `olm-medic sweep --namespace A` removes A's leftovers and touches nothing of B".
 *
 * Scene: one dead node (unreachable 10 min, tainted), a catalog pod of team-a and one of team-b on it,
 * both past their fence. A sweep scoped to team-a must write in team-a only.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { catalogPod, catalogSource, node, rfc3339, taintUnreachable } from '../fixtures/olm-objects.js';
import { handleOnce, noPatchExpected, recordingKube } from '../support/fake-runtime.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);
const NODE = 'worker-9';
const IMAGE = 'quay.io/operatorhubio/catalog:latest';

const catalogs = ['team-a', 'team-b'].map((ns) => ({ ...catalogSource({ namespace: ns, name: 'private-catalog', image: IMAGE }), metadata: { name: 'private-catalog', namespace: ns, uid: `cs-${ns}`, resourceVersion: '10' } }) as unknown as KubeObject);
const pods = catalogs.map((c) => {
  const ns = c.metadata.namespace!;
  const p = catalogPod({ namespace: ns, catalogSourceName: 'private-catalog', catalogSourceUid: c.metadata.uid!, nodeName: NODE, image: IMAGE }) as unknown as KubeObject;
  return {
    ...p,
    metadata: { ...p.metadata, name: `private-catalog-${ns}`, uid: `pod-${ns}`, resourceVersion: '500', creationTimestamp: rfc3339(ago(86_400)), deletionTimestamp: rfc3339(ago(300)), deletionGracePeriodSeconds: 30 },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: rfc3339(ago(590)) }] },
  } as KubeObject;
});
const deadNode = { ...node({ name: NODE, ready: 'Unknown', since: ago(600), taints: [taintUnreachable(ago(600))] }), metadata: { name: NODE, uid: 'node-uid', resourceVersion: '77' } } as unknown as KubeObject;

function fakeKube() {
  const deletes: string[] = [];
  const { kube } = recordingKube([deadNode, ...catalogs, ...pods], {
    now: () => NOW,
    async delete(ref) {
      deletes.push(`${ref.namespace}/${ref.name}`);
      return 'deleted';
    },
    mergePatch: noPatchExpected,
  });
  return { kube, deletes };
}

describe('RT28b-S1 a namespace-scoped sweep writes outside its namespace (catalog-reschedule)', () => {
  it('control: an unscoped sweep force-deletes both stuck catalog pods', async () => {
    const { kube, deletes } = fakeKube();
    await handleOnce(kube, { now: () => NOW }, { kind: 'sweep', functions: ['catalog-reschedule'], meta: { id: 'p1', source: '/ping', type: 'dev.knative.sources.ping' } });
    expect(deletes.sort()).toEqual(['team-a/private-catalog-team-a', 'team-b/private-catalog-team-b']);
  });

  it('a sweep scoped to team-a deletes team-a\'s pod only, never team-b\'s', async () => {
    const { kube, deletes } = fakeKube();
    await handleOnce(kube, { now: () => NOW }, { kind: 'sweep', functions: ['catalog-reschedule'], namespace: 'team-a', meta: { id: 'p2', source: '/ping', type: 'dev.knative.sources.ping' } });
    expect(deletes).toEqual(['team-a/private-catalog-team-a']);
  });
});
