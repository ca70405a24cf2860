/**
 * Red team round 5 (a helper given the code; each failed on 30cbfa4): the held follow-up chain as
 * the CLI reports it. The runtime's engine is
 * swapped for one over a fake executor that reports `held` deletes (no cluster).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../shared/cli/run.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { unreachableCluster } from '../support/cli.js';

const fake = vi.hoisted(() => ({ execute: undefined as unknown }));
vi.mock('../../shared/wiring.js', async (orig) => {
  const real = (await orig()) as typeof import('../../shared/wiring.js');
  const { createEngine } = await import('../../shared/core/engine.js');
  const { pino } = await import('pino');
  return {
    ...real,
    createRuntime: (config: never, functions: AnyFunction[], o: never) => {
      const rt = real.createRuntime(config, functions, o);
      const engine = createEngine({
        functions: rt.functions,
        options: {},
        reader: {} as never,
        execute: fake.execute as never,
        now: () => new Date('2026-11-20T10:00:00Z'),
        policy: { dryRun: false, protectedNamespaces: new Set() },
        log: pino({ level: 'silent' }),
        maxReplans: 1,
        sweepConcurrency: 1,
        followUps: 3,
      });
      return { ...rt, engine };
    },
  };
});

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-held-');
interface Report {
  outcomes: { function?: string; target?: string; status: string; reason: string }[];
  inProgress: string[];
}
async function cli(args: string[], fns: AnyFunction[]): Promise<{ code: number; rep: Report }> {
  const out: string[] = [];
  const code = await runCli(args, { out: (s) => out.push(s), err: () => undefined, env: { KUBECONFIG } }, fns);
  return { code, rep: JSON.parse(out.join('')) as Report };
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const line = (id: string, name: string): string =>
  JSON.stringify({ specversion: '1.0', id, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name } });
const replay = (names: string[]): string => {
  const file = join(dir, `ev-${names.join('-')}-${Math.random()}.jsonl`);
  writeFileSync(file, names.map((n, i) => line(String(i), n)).join('\n') + '\n');
  return file;
};

/** act → acted with a held delete of Pod/ns/p (and requeueAfterSeconds if the plan says); requeue → requeued; rate → rate-limited; else noop. */
fake.execute = async (f: string, p: { kind: string; reason: string; afterSeconds?: number }, target: string) => {
  if (p.kind === 'act')
    return { function: f, target, status: 'acted', reason: p.reason, ...(p.afterSeconds ? { requeueAfterSeconds: p.afterSeconds } : {}), actions: [{ verb: 'delete', target: 'Pod/ns/p', reason: 'stuck', result: 'done', held: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' } }] };
  if (p.kind === 'requeue') return { function: f, target, status: 'requeued', reason: p.reason, requeueAfterSeconds: p.afterSeconds ?? 1 };
  if (p.kind === 'rate') return { function: f, target, status: 'rate-limited', reason: 'action budget used up', requeueAfterSeconds: 1 };
  return { function: f, target, status: 'noop', reason: p.reason };
};

function fn(name: string, kind: string, observe: (ref: { name: string }) => Promise<unknown>, plan: (o: never) => unknown): AnyFunction {
  return { name, summary: 's', kinds: ['v1/ConfigMap', 'v1/Pod'], targets: (t: { ref: { kind: string } }) => (t.ref.kind === kind ? [t.ref] : []), async *sweep() {}, observe, plan } as unknown as AnyFunction;
}

describe('RT5-1: the held object\'s own re-check fails during the drain: the CLI must not report success', () => {
  it('replay cm: deleter deletes Pod p (held); cleaner on p asks a re-check, which fails (RBAC): exit 1, not 3', async () => {
    let podLooks = 0;
    const deleter = fn('deleter', 'ConfigMap', async () => ({}), () => ({ kind: 'act', reason: 'delete the stuck pod' }));
    const cleaner = fn('cleaner', 'Pod', async () => {
      if (++podLooks === 2) throw new Error('RBAC: forbidden');
      return {};
    }, () => ({ kind: 'requeue', afterSeconds: 1, reason: 'finalizer still there' }));
    const r = await cli(['replay', replay(['cm']), '-o', 'json', '--wait', '10'], [deleter, cleaner]);
    expect({ podLooks, code: r.code, statuses: r.rep.outcomes.map((o) => `${o.function}:${o.status}`) }).toEqual({ podLooks: 2, code: 1, statuses: expect.arrayContaining([expect.stringMatching(/failed/)]) });
  }, 30_000);
});

describe('RT5-2: a follow-up failure folded into the event is erased by the original target\'s quiet re-check', () => {
  it('replay cm: deleter acts (held p) and waits; cleaner on p fails (RBAC); deleter re-check noop: exit 1, not 0 "clean"', async () => {
    let cmLooks = 0;
    const deleter = fn('deleter', 'ConfigMap', async () => ({ n: ++cmLooks }), (o: { n: number }) =>
      o.n === 1 ? { kind: 'act', afterSeconds: 1, reason: 'delete the stuck pod' } : o.n <= 4 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' } : { kind: 'noop', reason: 'settled' },
    );
    const cleaner = fn('cleaner', 'Pod', async () => {
      throw new Error('RBAC: forbidden');
    }, () => ({ kind: 'noop', reason: 'x' }));
    const r = await cli(['replay', replay(['cm']), '-o', 'json', '--wait', '10'], [deleter, cleaner]);
    expect({ cmLooks, code: r.code, statuses: r.rep.outcomes.map((o) => `${o.function}:${o.status}`) }).toEqual({ cmLooks: 5, code: 1, statuses: expect.arrayContaining([expect.stringMatching(/failed/)]) });
  }, 30_000);
});

describe('RT5-3: a rate-limited follow-up folded into the event leaves the run "in progress" after everything finished', () => {
  it('replay cm: deleter acts (held p); cleaner on p rate-limited (1 s), its re-check noop: nothing pending, exit 3, not 4', async () => {
    let podLooks = 0;
    const deleter = fn('deleter', 'ConfigMap', async () => ({}), () => ({ kind: 'act', reason: 'delete the stuck pod' }));
    const cleaner = fn('cleaner', 'Pod', async () => ({ n: ++podLooks }), (o: { n: number }) => (o.n === 1 ? { kind: 'rate' } : { kind: 'noop', reason: 'finalizer gone' }));
    const r = await cli(['replay', replay(['cm']), '-o', 'json', '--wait', '10'], [deleter, cleaner]);
    expect({ podLooks, code: r.code, inProgress: r.rep.inProgress }).toEqual({ podLooks: 2, code: 3, inProgress: [] });
  }, 30_000);
});

describe('RT5-4: a re-check still in its held chain when a later look of the same target fails overrides that failure', () => {
  it('replay a, b (slow), a: a re-check acts at 1 s (held p, chain slow till ~4 s); line 3 (a) fails at 2.5 s: exit 1, a failed', async () => {
    let aLooks = 0;
    const deleter = fn('deleter', 'ConfigMap', async (ref) => {
      if (ref.name === 'b') {
        await sleep(2_500);
        return { name: 'b' };
      }
      if (++aLooks === 3) throw new Error('RBAC: forbidden');
      return { name: 'a', n: aLooks };
    }, (o: { name: string; n?: number }) =>
      o.name === 'b' ? { kind: 'noop', reason: 'fine' } : o.n === 1 ? { kind: 'requeue', afterSeconds: 1, reason: 'later' } : o.n === 2 ? { kind: 'act', reason: 'delete the stuck pod' } : { kind: 'noop', reason: 'settled' },
    );
    const cleaner = fn('cleaner', 'Pod', async () => {
      await sleep(3_000);
      return {};
    }, () => ({ kind: 'noop', reason: 'finalizer gone' }));
    const r = await cli(['replay', replay(['a', 'b', 'a']), '-o', 'json', '--wait', '10'], [deleter, cleaner]);
    const a = r.rep.outcomes.filter((o) => o.target === 'ConfigMap/ns/a').map((o) => o.status);
    expect({ aLooks, code: r.code, aLast: a[a.length - 1] }).toEqual({ aLooks: 3, code: 1, aLast: 'failed' });
  }, 30_000);
});
