/**
 * Red team 40, S1 (low, contract) (fixed): a namespace-scoped sweep writes the cluster-scoped Operator object of
 * an operator that has parts in other namespaces (AutoUninstallCancelled), though README says a scoped
 * sweep leaves "the other namespaces' parts and the Operator object to a look at all of it", and
 * planOperator() itself defers an automatic uninstall's START to an unscoped look for that very reason.
 *
 * Impact: `olm-medic sweep --namespace team-a` (or a PingSource {"namespace":"team-a"}) patches an object
 * outside team-a that team-b's install shares; the run reports a write outside the scope it was given.
 * The write itself (removing olm-medic's `auto` record) is the safe direction — nothing is deleted.
 *
 * Path: the long-named package installed in team-a and team-b (one Operator for both keys); an automatic
 * uninstall was recorded (`auto`); team-b's owners subscribe again. A sweep scoped to team-a: the gate
 * cancels (a Subscription uses the operator) before any scope check.
 *
 * Should: a look scoped to team-a does not write the Operator object while it has parts outside team-a.
 */
import { describe, expect, it } from 'vitest';
import { allFunctions } from '../../functions/index.js';
import { loadConfig } from '../../shared/core/config.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { handleOnce, recordingKube } from '../support/fake-runtime.js';
import { componentLabelKey, operatorObject } from '../fixtures/olm-objects.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const PKG = 'a-very-long-operator-package-name-for-the-truncation-rules-x';

describe('red team 40 S1: a scoped sweep leaves the Operator object of a multi-namespace operator alone', () => {
  it('sweep --namespace team-a writes nothing outside team-a, not even AutoUninstallCancelled on the Operator', async () => {
    const key = componentLabelKey(PKG, 'team-a');
    expect(componentLabelKey(PKG, 'team-b'), 'premise: one key').toBe(key);
    const refs = ['team-a', 'team-b'].map((ns) => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'the-operator' }));
    const op = operatorObject({ pkg: PKG, namespace: 'team-a', refs }) as unknown as KubeObject;
    op.metadata = { ...op.metadata, uid: 'op-uid', resourceVersion: '5', annotations: { 'olm-medic.io/uninstall': 'auto' } };
    const deployments = refs.map(
      (r, i) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: r.name, namespace: r.namespace, uid: `dep-${i}`, resourceVersion: String(10 + i), labels: { [key]: '' } }, spec: {} }) as KubeObject,
    );
    const subB = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'the-operator', namespace: 'team-b', uid: 'sub-b', resourceVersion: '20' }, spec: { name: PKG } } as KubeObject;
    const { kube, writes } = recordingKube([op, ...deployments, subB], { now: () => NOW });
    const config = loadConfig({ OLM_MEDIC_FINALIZER_CLEANUP_AUTO_UNINSTALL: 'true' }, allFunctions);
    await handleOnce(kube, { now: () => NOW, config }, { kind: 'sweep', namespace: 'team-a', functions: ['finalizer-cleanup'], meta: { id: 'p1', source: '/ping', type: 'dev.knative.sources.ping' } });
    expect(writes.filter((w) => !w.includes(' team-a/')), 'a team-a sweep wrote outside team-a').toEqual([]);
  });
});
