/**
 * Red team 33, C1 (fixed: an Outcome carries its look's scope; the CLI keys rows with it): `olm-medic sweep --namespace NS` reports a scoped look (TargetRef.scope — what
 * finalizer-cleanup's namespace sweep yields for every Operator touching NS, red team 29a S3) by its
 * FIRST pass as well as by its folded looks. The engine keys a scoped target's looks
 * `fn|Kind/name@NS` (shared/core/engine.ts reconcileKey: `key`), but the CLI matches first-pass
 * outcomes to looks by `fn|target` without the scope (shared/cli/run.ts `targetKey`), so
 * `outcomes.filter((o) => !followed.looks.has(targetKey(o)))` keeps the stale first-pass row. A
 * target that first asked for a re-check (requeued: waiting for leftovers to finish deleting, a
 * fence, the action budget) and whose re-check found nothing left to do is reported twice — once
 * with its stale first status — and the run exits 3 ("acted") instead of 0 ("clean"); a rate-limited
 * first pass whose re-check then failed is listed as both.
 * SAFE (README, "Each target looked at is one row, folded from every look at it in the run"): one row
 * for the target, its latest word, and exit 0.
 */
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';

const { kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-rt33-scope-');

/** A function whose namespace sweep yields one scoped target; its first look waits 1 s, the re-check finds it settled. */
function scopedFn(looks: string[]): AnyFunction {
  let n = 0;
  return {
    name: 'scoped',
    summary: 's',
    kinds: ['operators.coreos.com/v1/Operator'],
    targets: () => [],
    async *sweep(_read: unknown, scope: { namespace?: string }) {
      yield { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name: 'etcd', ...(scope.namespace ? { scope: scope.namespace } : {}) };
    },
    observe: async (ref: { scope?: string }) => {
      looks.push(`look@${ref.scope ?? '-'}`);
      return {};
    },
    plan: () => (n++ === 0 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for the CSV(s) to finish deleting' } : { kind: 'noop', reason: 'nothing left in this namespace' }),
  } as unknown as AnyFunction;
}

describe('a scoped look is one row, folded from its looks (red team 33 C1)', () => {
  it('control: the same target unscoped (sweep without --namespace) is one row and exits 0', async () => {
    const looks: string[] = [];
    const r = await runCliCaptured(['sweep', '--wait', '10', '-o', 'json'], [scopedFn(looks)], { KUBECONFIG });
    const rep = JSON.parse(r.out) as { outcomes: { target: string; status: string }[] };
    expect({ code: r.code, looks, rows: rep.outcomes }).toEqual({ code: 0, looks: ['look@-', 'look@-'], rows: [] });
  }, 30_000);

  it('sweep --namespace team-a: requeued, then re-checked noop: exit 0 and no stale "requeued" row', async () => {
    const looks: string[] = [];
    const r = await runCliCaptured(['sweep', '--namespace', 'team-a', '--wait', '10', '-o', 'json'], [scopedFn(looks)], { KUBECONFIG });
    const rep = JSON.parse(r.out) as { outcomes: { target: string; status: string }[]; inProgress: string[] };
    // Both looks ran, the re-check is done (nothing in progress)...
    expect(looks).toEqual(['look@team-a', 'look@team-a']);
    expect(rep.inProgress).toEqual([]);
    // ...but current code: exit 3 with the first pass's row [{target: 'Operator/etcd', status: 'requeued'}].
    expect({ code: r.code, rows: rep.outcomes.map((o) => `${o.target} ${o.status}`) }).toEqual({ code: 0, rows: [] });
  }, 30_000);
});
