/**
 * Red team 20 (failed on d71ee7a and before), K1: a one-shot CLI run (`olm-medic sweep`, "for clusters not on Knative yet") adds
 * olm-medic's own CSV finalizer to every synced CSV of OLM < v0.27 and then exits. Nothing is left
 * running to release it: the next time OLM deletes that CSV (every upgrade: olm/operator.go v0.25.0
 * :2290 deletes the replaced CSV; or an uninstall) it stays Terminating until someone runs
 * olm-medic again. README: "Our own finalizer is always released"; "A run finishes what it starts".
 *
 * The test runs the real runCli with a finalizer-cleanup whose sweep/observe are in memory (one
 * synced CSV on OLM v0.25: no operators.coreos.com/csv-cleanup) and the real plan, and records what
 * the run asks the executor to write (the cluster itself is unreachable; only the plan matters).
 */
import { describe, expect, it } from 'vitest';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import type { CsvObserved } from '../../functions/finalizer-cleanup/plan.js';
import type { AnyFunction, Plan, PlanContext } from '../../shared/core/types.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { csv } from '../fixtures/olm-objects.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';

const { kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-rt20-cli-fin-');

describe('redteam20 K1: a one-shot CLI sweep marks CSVs with a finalizer nothing will release', () => {
  it('sweep (no --dry-run) on OLM v0.25 asks to add olm-medic.io/csv-cleanup to a healthy CSV, then exits', async () => {
    const live = { ...(csv({ namespace: 'operators', name: 'etcdoperator.v0.9.4', olmVersion: 'v0.25.0' } as never) as unknown as KubeObject) };
    live.metadata = { ...live.metadata, uid: 'uid-csv', resourceVersion: '42', creationTimestamp: '2025-01-01T00:00:00Z' };
    const planned: Plan[] = [];
    const fn = {
      ...finalizerCleanup,
      async *sweep() {
        yield { apiVersion: live.apiVersion, kind: live.kind, namespace: 'operators', name: live.metadata.name };
      },
      observe: async (): Promise<CsvObserved> => ({ kind: 'csv', csvRef: { apiVersion: live.apiVersion, kind: live.kind, namespace: 'operators', name: live.metadata.name }, csv: live, owned: [], olmFinalizerSeen: false }),
      plan: (o: CsvObserved, ctx: PlanContext) => {
        const p = finalizerCleanup.plan(o, ctx);
        planned.push(p);
        return p;
      },
    } as unknown as AnyFunction;
    await runCliCaptured(['sweep', '--function', 'finalizer-cleanup', '--wait', '0', '-o', 'json'], [fn], { KUBECONFIG, KUBE_RETRIES: '0', KUBE_TIMEOUT_MS: '500' });
    const reasons = planned.flatMap((p) => (p.kind === 'act' ? p.actions.map((a) => a.reason) : []));
    expect(planned.length, 'the CSV was looked at').toBeGreaterThan(0);
    // SAFE: a run that exits holds no finalizer on a live CSV (only a running olm-medic can release it).
    expect(reasons).not.toContain('CsvFinalizerAdded');
  }, 30_000);
});
