/**
 * Red team 19 (failed on 0fe76ca): the CLI's --function scope is filtered on the raw flag values, while the names were
 * validated (and enabled) after loadConfig split ENABLED_FUNCTIONS on commas and accepted "all".
 * All three passed on 742adca (before a533c06): a regression of the --function scope fix.
 */
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';

const { kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-rt19-scope-');

function fake(name: string, swept: string[]): AnyFunction {
  return {
    name,
    summary: 's',
    kinds: ['v1/ConfigMap'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      swept.push(name);
    },
    observe: async () => ({}),
    plan: () => ({ kind: 'noop', reason: 'x' }),
  } as unknown as AnyFunction;
}

describe('redteam19 CLI --function scope', () => {
  it('sweep --function a,b (the ENABLED_FUNCTIONS spelling loadConfig accepts) sweeps a and b, not nothing with exit 0', async () => {
    const swept: string[] = [];
    const r = await runCliCaptured(['sweep', '--function', 'a,b', '--wait', '0', '-o', 'json'], [fake('a', swept), fake('b', swept)], { KUBECONFIG });
    expect({ code: r.code, swept }).toEqual({ code: 0, swept: ['a', 'b'] });
  }, 30_000);

  it('sweep --function all (accepted by loadConfig) sweeps every function, not nothing with exit 0', async () => {
    const swept: string[] = [];
    const r = await runCliCaptured(['sweep', '--function', 'all', '--wait', '0', '-o', 'json'], [fake('a', swept), fake('b', swept)], { KUBECONFIG });
    expect({ code: r.code, swept }).toEqual({ code: 0, swept: ['a', 'b'] });
  }, 30_000);

  it('sweep --function "a," (a trailing comma ENABLED_FUNCTIONS drops) still sweeps a', async () => {
    const swept: string[] = [];
    const r = await runCliCaptured(['sweep', '--function', 'a,', '--wait', '0', '-o', 'json'], [fake('a', swept), fake('b', swept)], { KUBECONFIG });
    expect({ code: r.code, swept }).toEqual({ code: 0, swept: ['a'] });
  }, 30_000);
});
