/**
 * Red team round 3 (a helper given the code and "make olm-medic write to the wrong object, or
 * crash"; this failed on a39c4e0): the CLI's pending / re-check bookkeeping after engine.drain.
 */
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-');

interface Report {
  outcomes: { function?: string; target?: string; status: string; reason: string }[];
  inProgress: string[];
  total: number;
}

async function cli(args: string[], fns: AnyFunction[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, fns, { KUBECONFIG, ...env });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Sweep yields ConfigMaps a and b. a's first plan asks for a re-check in 1 s; b's first observe takes
 * 2.5 s, so a's re-check fires and finishes while the sweep is still going (before drain starts).
 */
function slowSweep(recheck: 'noop' | 'throw', first: 'requeue' | 'defer' = 'requeue'): AnyFunction {
  const seen = new Set<string>();
  return {
    name: 'fake',
    summary: 's',
    kinds: ['v1/ConfigMap'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' };
      yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'b' };
    },
    observe: async (ref: { name: string }) => {
      if (ref.name === 'b') await sleep(2_500);
      if (ref.name === 'a' && seen.has('a') && recheck === 'throw') throw new Error('boom on re-check');
      return { name: ref.name };
    },
    plan: (o: { name: string }) => {
      if (o.name === 'b' || seen.has(o.name)) return { kind: 'noop', reason: 'settled' };
      seen.add(o.name);
      if (first === 'defer')
        return { kind: 'defer', reason: 'Waiting', note: 'later', regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: o.name }, requeueAfterSeconds: 1 };
      return { kind: 'requeue', afterSeconds: 1, reason: 'later' };
    },
  } as unknown as AnyFunction;
}

describe('H1: a re-check that ran (and ended) before drain started is not lost', () => {
  it('requeued, then re-checked noop during the sweep: finished and clean (exit 0), not "in progress" (exit 4)', async () => {
    const r = await cli(['sweep', '-o', 'json', '--wait', '10', '--function', 'fake'], [slowSweep('noop')]);
    const rep = JSON.parse(r.out) as Report;
    expect({ code: r.code, inProgress: rep.inProgress }).toEqual({ code: 0, inProgress: [] });
  }, 30_000);

  it('requeued, then the re-check failed during the sweep: exit 1 (failed), not 4', async () => {
    const r = await cli(['sweep', '-o', 'json', '--wait', '10'], [slowSweep('throw')]);
    const rep = JSON.parse(r.out) as Report;
    expect({ code: r.code, statuses: rep.outcomes.map((o) => `${o.target}:${o.status}`) }).toEqual({ code: 1, statuses: ['ConfigMap/ns/a:failed'] });
  }, 30_000);

  it('deferred (requeue 1 s), then the re-check failed during the sweep: exit 1, not 3 "finished"', async () => {
    const r = await cli(['sweep', '-o', 'json', '--wait', '10'], [slowSweep('throw', 'defer')]);
    const rep = JSON.parse(r.out) as Report;
    expect({ code: r.code, statuses: rep.outcomes.map((o) => `${o.target}:${o.status}`) }).toEqual({ code: 1, statuses: ['ConfigMap/ns/a:failed'] });
  }, 30_000);
});
