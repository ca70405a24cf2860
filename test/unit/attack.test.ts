/**
 * Red-team unit proofs of root causes (the integration proofs are in test/integration/attack.test.ts).
 * Each asserts the SAFE behaviour; `describe('holes')` failed on main 76cbb9c.
 */
import { describe, expect, it } from 'vitest';
import { Requeuer } from '../../shared/core/scheduling.js';
import { plan, type OperatorObserved } from '../../functions/finalizer-cleanup/plan.js';
import { NO_POLICY } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';

const NOW = new Date('2025-03-01T12:00:00Z');
const iso = (msAgo: number) => new Date(NOW.getTime() - msAgo).toISOString();

function obj(apiVersion: string, kind: string, name: string, namespace: string | undefined, extra: Partial<KubeObject['metadata']> = {}, rest: Record<string, unknown> = {}): KubeObject {
  return { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${kind}-${namespace}-${name}`, resourceVersion: '1', ...extra }, ...rest } as KubeObject;
}

describe('holes', () => {
  it('H15 root cause: a re-check due in more than 2^31-1 ms is not run after 1 ms (setTimeout overflow)', async () => {
    const r = new Requeuer(10);
    let runs = 0;
    r.schedule('k', 9_999_999_999 * 1000, () => runs++);
    await new Promise((res) => setTimeout(res, 50));
    r.close();
    expect(runs).toBe(0);
  });

  it('H17 root cause: autoUninstall does not fire on a Failed CSV in a namespace the key cannot name while this install\'s own CSV is Succeeded', () => {
    const key = 'operators.coreos.com/etcd.ns-a';
    const lbl = { labels: { [key]: '' } };
    const mine = obj('operators.coreos.com/v1alpha1', 'ClusterServiceVersion', 'etcd.v1', 'ns-a', lbl, { status: { phase: 'Succeeded', lastTransitionTime: iso(7200_000) } });
    const foreign = obj('operators.coreos.com/v1alpha1', 'ClusterServiceVersion', 'foreign.v1', 'ns-b', lbl, { status: { phase: 'Failed', lastTransitionTime: iso(7200_000) } });
    const operator = obj('operators.coreos.com/v1', 'Operator', 'etcd.ns-a', undefined);
    const observed: OperatorObserved = { kind: 'operator', operator, labelKey: key, claimants: [], csvs: [mine, foreign], components: [] };
    const p = plan(observed, { now: NOW, options: { autoUninstall: true, failedCsvGraceSeconds: 3600 }, policy: NO_POLICY });
    expect(p.kind, JSON.stringify(p)).not.toBe('act');
  });
});
