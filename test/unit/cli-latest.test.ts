/**
 * Red team round 4 of the CLI (a helper given the code; each failed on 3c32ddd): latest() and the
 * pending rule.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-latest-');

interface Report {
  outcomes: { function?: string; target?: string; status: string; reason: string }[];
  inProgress: string[];
}
async function cli(args: string[], fns: AnyFunction[]): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, fns, { KUBECONFIG });
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const line = (id: string, name: string): string =>
  JSON.stringify({ specversion: '1.0', id, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name } });

describe('R4-3: a re-check that ran before a later look at the same target does not override it', () => {
  it('replay: a requeued (re-checked noop at ~1 s), b slow (2.5 s), then a again fails: exit 1, a failed', async () => {
    let aSeen = 0;
    const fn = {
      name: 'fake',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {},
      observe: async (ref: { name: string }) => {
        if (ref.name === 'b') await sleep(2_500);
        if (ref.name === 'a' && ++aSeen === 3) throw new Error('RBAC: forbidden'); // line 3's handling
        return { name: ref.name, n: aSeen };
      },
      plan: (o: { name: string; n: number }) => (o.name === 'a' && o.n === 1 ? { kind: 'requeue', afterSeconds: 1, reason: 'later' } : { kind: 'noop', reason: 'settled' }),
    } as unknown as AnyFunction;
    const file = join(dir, 'events.jsonl');
    writeFileSync(file, [line('1', 'a'), line('2', 'b'), line('3', 'a')].join('\n') + '\n');
    const r = await cli(['replay', file, '-o', 'json', '--wait', '10'], [fn]);
    const rep = JSON.parse(r.out) as Report;
    expect({ aSeen, code: r.code, statuses: rep.outcomes.map((o) => `${o.target}:${o.status}`) }).toEqual({ aSeen: 3, code: 1, statuses: ['ConfigMap/ns/a:failed'] });
  }, 30_000);
});

describe('R4-4: a re-check whose own re-check the bounded queue dropped is in progress', () => {
  it('sweep of 1001 targets: t0 re-checked, asks again while 1000 re-checks are queued: in progress (exit 4), not 3', async () => {
    let xPlanned!: () => void;
    const xDone = new Promise<void>((r) => (xPlanned = r));
    const seen = new Set<string>();
    const fn = {
      name: 'fake',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {
        for (let i = 0; i < 1000; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
        await sleep(1_300); // t0's re-check (due at 1 s) is running now
        yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'x' };
      },
      observe: async (ref: { name: string }) => {
        // t0's re-check looks while x takes the slot t0's timer freed.
        if (ref.name === 't0' && seen.has('t0')) await xDone;
        return { name: ref.name, again: seen.has(ref.name) };
      },
      plan: (o: { name: string; again: boolean }) => {
        const first = !o.again;
        seen.add(o.name);
        if (o.name === 'x') setTimeout(xPlanned, 50);
        if (o.name === 't0') return { kind: 'requeue', afterSeconds: first ? 1 : 2, reason: first ? 'later' : 'still waiting for GC' };
        return first ? { kind: 'requeue', afterSeconds: 3, reason: 'later' } : { kind: 'noop', reason: 'settled' };
      },
    } as unknown as AnyFunction;
    const r = await cli(['sweep', '-o', 'json', '--wait', '20'], [fn]);
    const rep = JSON.parse(r.out) as Report;
    const t0 = rep.outcomes.find((o) => o.target === 'ConfigMap/ns/t0');
    expect({ t0: t0 && `${t0.status}: ${t0.reason}`, code: r.code, t0InProgress: rep.inProgress.includes('fake|ConfigMap/ns/t0') }).toEqual({ t0: t0 && `${t0.status}: ${t0.reason}`, code: 4, t0InProgress: true });
  }, 60_000);
});
