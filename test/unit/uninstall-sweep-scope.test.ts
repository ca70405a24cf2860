/**
 * Red team 29a (S3): a finalizer-cleanup sweep scoped to one namespace deletes another namespace's
 * uninstall leftovers.
 *
 * README: `sweep --namespace` "writes only in that namespace"; the uninstall row: "one `olm-medic
 * sweep --namespace A` removes A's leftovers ... and touches nothing of B" (there B is subscribed).
 * finalizer-cleanup's sweep (functions/finalizer-cleanup/index.ts sweep()) yields every Operator
 * one of whose status.components.refs is in the scope, and planOperator then works on ALL the
 * namespaces the Operator's (truncated) component label key can name: nothing carries the scope
 * from sweep to plan.
 *
 * Scene: a package whose `<pkg>.<ns>` is over 63 characters is installed in team-a and team-b; the
 * keys truncate to the same one, so OLM keeps ONE Operator for both (olm-facts §2.2). Both
 * Subscriptions are gone and an uninstall was requested on the Operator. A sweep scoped to team-a
 * (a PingSource {"namespace":"team-a"} or `olm-medic sweep --namespace team-a`) must delete team-a's
 * leftovers only.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../shared/kube/types.js';
import { handleOnce, recordingKube, withRuntime } from '../support/fake-runtime.js';
import { componentLabelKey, operatorObject } from '../fixtures/olm-objects.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const PKG = 'a-very-long-operator-package-name-for-the-truncation-rules-x';

describe('uninstall (red team 29a S3): a namespace-scoped finalizer-cleanup sweep keeps to its namespace', () => {
  it('sweep --namespace team-a deletes nothing in team-b', async () => {
    const key = componentLabelKey(PKG, 'team-a');
    expect(componentLabelKey(PKG, 'team-b'), 'premise: the two installs share one key').toBe(key);
    const refs = ['team-a', 'team-b'].map((ns) => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'the-operator' }));
    const op = operatorObject({ pkg: PKG, namespace: 'team-a', refs }) as unknown as KubeObject;
    op.metadata = { ...op.metadata, uid: 'op-uid', resourceVersion: '5', annotations: { 'olm-medic.io/uninstall': 'true' } };
    const deployments = refs.map(
      (r, i) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: r.name, namespace: r.namespace, uid: `dep-${i}`, resourceVersion: String(10 + i), labels: { [key]: '' } }, spec: {} }) as KubeObject,
    );
    const { kube, writes } = recordingKube([op, ...deployments], { now: () => NOW });
    await handleOnce(kube, { now: () => NOW }, { kind: 'sweep', namespace: 'team-a', functions: ['finalizer-cleanup'], meta: { id: 'p1', source: '/ping', type: 'dev.knative.sources.ping' } });
    expect(writes, 'premise: the sweep of team-a removed its leftover').toContain('delete Deployment team-a/the-operator');
    expect(writes.filter((w) => w.includes(' team-b/'))).toEqual([]);
  });

  it("its re-check keeps the scope: team-a's leftover held by a finalizer is waited for, then nothing of team-b is touched", async () => {
    const key = componentLabelKey(PKG, 'team-a');
    const refs = ['team-a', 'team-b'].map((ns) => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'the-operator' }));
    const op = operatorObject({ pkg: PKG, namespace: 'team-a', refs }) as unknown as KubeObject;
    op.metadata = { ...op.metadata, uid: 'op-uid', resourceVersion: '5', annotations: { 'olm-medic.io/uninstall': 'true' } };
    const store: KubeObject[] = [op, ...refs.map((r, i) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: r.name, namespace: r.namespace, uid: `dep-${i}`, resourceVersion: String(10 + i), labels: { [key]: '' } }, spec: {} }) as KubeObject)];
    const { kube, writes } = recordingKube(store, {
      now: () => NOW,
      async delete(ref) {
        // Held by someone's finalizer: being deleted, still there (the plan waits and looks again).
        const o = store.find((x) => x.kind === ref.kind && x.metadata.namespace === ref.namespace && x.metadata.name === ref.name)!;
        o.metadata = { ...o.metadata, deletionTimestamp: NOW.toISOString(), finalizers: ['example.com/hold'], resourceVersion: String(Number(o.metadata.resourceVersion) + 100) };
        return 'pending';
      },
    });
    await withRuntime(kube, { now: () => NOW }, async (rt) => {
      rt.engine.trackLooks();
      await rt.engine.handle({ kind: 'sweep', namespace: 'team-a', functions: ['finalizer-cleanup'], meta: { id: 'p1', source: '/ping', type: 'dev.knative.sources.ping' } });
      // The finalizer lets go; the re-check (due in ~2 s) finds team-a's part gone.
      store.splice(store.findIndex((x) => x.metadata.namespace === 'team-a' && x.kind === 'Deployment'), 1);
      const { looks, pending } = await rt.engine.drain(Date.now() + 10_000);
      expect(pending).toEqual([]);
      const rechecks = [...looks.entries()].filter(([k]) => k.startsWith('finalizer-cleanup|Operator/'));
      expect(rechecks.length, 'premise: the Operator was looked at through the scope').toBeGreaterThan(0);
      expect(rechecks.every(([k]) => k.endsWith('@team-a')), rechecks.map(([k]) => k).join(', ')).toBe(true);
    });
    expect(writes).toContain('delete Deployment team-a/the-operator');
    expect(writes.filter((w) => w.includes(' team-b/') || w.includes('Operator '))).toEqual([]);
  });
});
