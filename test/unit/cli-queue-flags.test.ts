/**
 * Red team round 3 (a helper given the code and "make olm-medic write to the wrong object, or
 * crash"; this failed on a39c4e0): outcomes other than "requeued" whose re-check the bounded queue dropped,
 * and repeated single-value flags.
 */
import { createServer } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { firstPlanThenNoop, runCliCaptured, unreachableCluster } from '../support/cli.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-queue-');

async function cli(args: string[], fns: AnyFunction[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, fns, { KUBECONFIG, SWEEP_CONCURRENCY: '64', ...env });
}

/** Sweeps n ConfigMaps, each deferred once with an 8 s re-check (after the sweep ends), then noop. */
const deferOnce = (n: number): AnyFunction =>
  firstPlanThenNoop(n, (name) => ({ kind: 'defer', reason: 'Waiting', note: 'later', regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name }, requeueAfterSeconds: 8 }));

describe('H2: a deferred target whose re-check the queue (1,000) dropped is in progress, not finished', () => {
  it('1,001 deferred targets: the one never re-checked is in progress, exit 4', async () => {
    // An apiserver that records each Event at once (201): the sweep of 1,001 is over well before 8 s.
    const api = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"apiVersion":"v1","kind":"Event","metadata":{"name":"x"}}');
      });
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const kc = join(dir, 'kc-fast');
    writeFileSync(kc, readFileSync(KUBECONFIG, 'utf8').replace('https://127.0.0.1:1', `http://127.0.0.1:${(api.address() as { port: number }).port}`));
    const t0 = Date.now();
    const r = await cli(['sweep', '-o', 'json', '--wait', '20'], [deferOnce(1001)], { KUBECONFIG: kc });
    api.close();
    const rep = JSON.parse(r.out) as { outcomes: { target?: string; status: string; reason: string }[]; inProgress: string[] };
    const notRechecked = rep.outcomes.filter((o) => !o.reason.includes('then noop')).map((o) => `${o.target}:${o.status}`);
    expect({ code: r.code, notRechecked, inProgress: rep.inProgress }).toEqual({ code: 4, notRechecked: ['ConfigMap/ns/cm-1000:deferred'], inProgress: ['fake|ConfigMap/ns/cm-1000'] });
  }, 90_000);
});

describe('H4: a single-value flag given twice is refused, not last-wins', () => {
  it('sweep --namespace a --namespace b: exit 2 (not a sweep of b alone)', async () => {
    const swept: string[] = [];
    const fn = {
      name: 'fake',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep(_r: unknown, o: { namespace?: string }) {
        swept.push(o.namespace ?? '*');
      },
      observe: async () => ({}),
      plan: () => ({ kind: 'noop', reason: 'x' }),
    } as unknown as AnyFunction;
    const r = await cli(['sweep', '--namespace', 'team-a', '--namespace', 'team-b', '--wait', '0'], [fn]);
    expect({ code: r.code, swept }).toEqual({ code: 2, swept: [] });
  }, 30_000);
});
