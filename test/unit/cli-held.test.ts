/**
 * Red team rounds 5 and 6 (a helper given the code; each failed on 30cbfa4, RT6 on 11ab9e5): the
 * held follow-up chain, and a target's looks over a run, as the CLI reports them. The runtime's
 * engine is swapped for one over a fake executor that reports `held` deletes (no cluster).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../shared/cli/run.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { unreachableCluster } from '../support/cli.js';
import { fakeFunction } from '../support/doors.js';

const fake = vi.hoisted(() => ({ execute: undefined as unknown, followUps: 3 }));
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
        followUps: fake.followUps, // 3 as wiring.ts ships it, unless a test says otherwise
      });
      return { ...rt, engine };
    },
  };
});

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-held-');
interface Report {
  outcomes: { function?: string; target?: string; status: string; reason: string; actions?: { verb: string; target: string }[] }[];
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

const heldDelete = fake.execute;
afterEach(() => {
  fake.execute = heldDelete;
  fake.followUps = 3;
});

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

/** act → acted, deleting the target itself, which a finalizer holds; requeue → requeued; else noop. */
const selfDelete = async (f: string, p: { kind: string; reason: string }, target: string): Promise<unknown> => {
  if (p.kind === 'act')
    return { function: f, target, status: 'acted', reason: p.reason, actions: [{ verb: 'delete', target, reason: 'UnpackJobDeleted', result: 'done', held: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name: 'j' } }] };
  if (p.kind === 'requeue') return { function: f, target, status: 'requeued', reason: p.reason, requeueAfterSeconds: 1 };
  return { function: f, target, status: 'noop', reason: p.reason };
};

/**
 * A function that counts its looks: look `failAt` (if any) throws `message` (an RBAC refusal);
 * every other look is planned by its number.
 */
function counted(name: string, kind: string, failAt: number | undefined, message: string, plan: (n: number) => unknown): { fn: AnyFunction; looks: () => number } {
  let n = 0;
  const fn = fakeFunction({
    name,
    kinds: [kind],
    observe: async () => {
      n++;
      if (n === failAt) throw new Error(message);
      return { n };
    },
    plan: (o: { n: number }) => plan(o.n),
  });
  return { fn, looks: () => n };
}

/** Keyed by the Job it deletes: look 1 waits (1 s), look 2 (the re-check) deletes it (held), look 3 (the held follow-up) `third`. */
const jobFn = (third: 'noop' | 'throw') =>
  counted('job-like', 'batch/v1/Job', third === 'throw' ? 3 : undefined, 'jobs.batch "j" is forbidden: RBAC', (n) =>
    n === 1 ? { kind: 'requeue', reason: 'job still running within its deadline' } : n === 2 ? { kind: 'act', reason: 'delete the conflicting unpack job' } : { kind: 'noop', reason: 'already being deleted' },
  );

const jobLine = (id: string, name: string): string =>
  JSON.stringify({ specversion: '1.0', id, source: '/apis/batch/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'batch/v1', kind: 'Job', namespace: 'ns', name } });

describe('RT6-1: a re-check whose held follow-up is its own target (job-conflict deletes the Job it is keyed by) counts', () => {
  it('replay j: waits, re-check deletes j (held), follow-up noop: finished, acted (exit 3), not "in progress" (exit 4)', async () => {
    fake.execute = selfDelete;
    fake.followUps = 0;
    const s = jobFn('noop');
    const file = join(dir, 'noop.jsonl');
    writeFileSync(file, jobLine('1', 'j') + '\n');
    const r = await cli(['replay', file, '-o', 'json', '--wait', '10'], [s.fn]);
    expect({ looks: s.looks(), code: r.code, inProgress: r.rep.inProgress, statuses: r.rep.outcomes.map((o) => o.status) }).toEqual({
      looks: 3,
      code: 3,
      inProgress: [],
      statuses: expect.arrayContaining(['acted']),
    });
  }, 30_000);

  it('replay j: waits, re-check deletes j (held), follow-up fails (RBAC): exit 1 (failed), not 4 "re-run later"', async () => {
    fake.execute = selfDelete;
    fake.followUps = 0;
    const s = jobFn('throw');
    const file = join(dir, 'throw.jsonl');
    writeFileSync(file, jobLine('1', 'j') + '\n');
    const r = await cli(['replay', file, '-o', 'json', '--wait', '10'], [s.fn]);
    expect({ looks: s.looks(), code: r.code, inProgress: r.rep.inProgress }).toEqual({ looks: 3, code: 1, inProgress: [] });
  }, 30_000);
});

describe('RT6-4: an action taken in a re-check, and its follow-up\'s failure, vanish behind the next quiet re-check', () => {
  it('replay cm: waits; re-check deletes Pod p (held), cleaner on p fails (RBAC); next re-check noop: exit 1, not 0 "clean"', async () => {
    let cmLooks = 0;
    let podLooks = 0;
    const deleter = fn('deleter', 'ConfigMap', async () => ({ n: ++cmLooks }), (o: { n: number }) =>
      o.n === 1
        ? { kind: 'requeue', afterSeconds: 1, reason: 'inside the fence' }
        : o.n === 2
          ? { kind: 'act', afterSeconds: 1, reason: 'delete the stuck pod' }
          : o.n <= 5
            ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' }
            : { kind: 'noop', reason: 'settled' },
    );
    const cleaner = fn('cleaner', 'Pod', async () => {
      podLooks++;
      throw new Error('pods "p" is forbidden: RBAC');
    }, () => ({ kind: 'noop', reason: 'x' }));
    const r = await cli(['replay', replay(['cm']), '-o', 'json', '--wait', '10'], [deleter, cleaner]);
    const statuses = r.rep.outcomes.map((o) => `${o.function}:${o.status}`);
    expect({ cmLooks, podLooks, code: r.code, statuses }).toEqual({ cmLooks: 6, podLooks: 1, code: 1, statuses: expect.arrayContaining([expect.stringMatching(/failed/)]) });
  }, 30_000);

  it('replay cm: waits; re-check deletes Pod p; next re-check noop: acted (exit 3, a row that acted), not 0 "clean"', async () => {
    let cmLooks = 0;
    const deleter = fn('deleter', 'ConfigMap', async () => ({ n: ++cmLooks }), (o: { n: number }) =>
      o.n === 1 ? { kind: 'requeue', afterSeconds: 1, reason: 'inside the fence' } : o.n === 2 ? { kind: 'act', afterSeconds: 1, reason: 'delete the stuck pod' } : o.n <= 5 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' } : { kind: 'noop', reason: 'settled' },
    );
    const r = await cli(['replay', replay(['cm']), '-o', 'json', '--wait', '10'], [deleter]);
    const statuses = r.rep.outcomes.map((o) => `${o.function}:${o.status}`);
    expect({ cmLooks, code: r.code, statuses }).toEqual({ cmLooks: 6, code: 3, statuses: ['deleter:acted'] });
  }, 30_000);
});

/**
 * act: the delete of Pod/ns/p is done, then the plan's next write meets a precondition conflict
 * (replan, the delete carried over in `done`); refuse: refused (policy).
 */
const deleteThenConflict = async (f: string, p: { kind: string; reason: string }, target: string): Promise<unknown> => {
  if (p.kind === 'act') return { status: 'replan', cause: 'conflict', reason: 'patch Subscription/ns/s: 409 Conflict', done: [{ verb: 'delete', target: 'Pod/ns/p', reason: 'stuck', result: 'done' }] };
  if (p.kind === 'refuse') return { function: f, target, status: 'refused', reason: 'Protected: opt-out annotation' };
  return { function: f, target, status: 'noop', reason: p.reason };
};

/** Look 1 deletes and meets a conflict; look 2 (its re-plan) `then`; look 3 (the file's second line) finds nothing to do. */
const conflictingDeleter = (then: 'throw' | 'refuse') =>
  counted('deleter', 'v1/ConfigMap', then === 'throw' ? 2 : undefined, 'subscriptions "s" is forbidden: RBAC', (n) =>
    n === 1 ? { kind: 'act', reason: 'delete the stuck pod, then nudge' } : n === 2 ? { kind: 'refuse', reason: 'x' } : { kind: 'noop', reason: 'settled' },
  );

describe('RT6-5: a look that wrote, then failed or was refused, vanishes behind a later quiet look', () => {
  for (const then of ['throw', 'refuse'] as const) {
    it(`replay a, a: line 1 deletes Pod p then ${then === 'throw' ? 'fails (RBAC)' : 'is refused'}; line 2 noop: the delete is reported (exit != 0)`, async () => {
      fake.execute = deleteThenConflict;
      const s = conflictingDeleter(then);
      const file = join(dir, `aa-${then}.jsonl`);
      writeFileSync(file, [line('1', 'a'), line('2', 'a')].join('\n') + '\n');
      const r = await cli(['replay', file, '-o', 'json', '--wait', '5'], [s.fn]);
      const deletes = r.rep.outcomes.flatMap((o) => (o.actions ?? []).map((a) => `${a.verb} ${a.target}`));
      expect({ looks: s.looks(), cleanExit: r.code === 0, deletes }).toEqual({ looks: 3, cleanExit: false, deletes: ['delete Pod/ns/p'] });
    }, 30_000);
  }
});

/**
 * Red team round 7 (failed on a843b53): fold() promises "nothing a look did is dropped: the row lists every write of
 * every look", but it de-duplicates writes ACROSS looks by verb|target|result. Each look's actions
 * are that look's own writes (the engine already lists a write repeated by a re-plan once, within a
 * look), so two looks that each deleted an object of the same name (OLM recreated the unpack Job, or
 * the catalog Pod, between them) show as ONE delete: a write the report silently drops.
 */
describe('RT7-fold-dedup: two looks that each deleted an object of the same name list two deletes', () => {
  it('replay a, a: each look deletes Pod/ns/p (recreated in between, a new uid): the row lists both deletes', async () => {
    let uid = 0;
    const deletedUids: string[] = [];
    fake.execute = async (f: string, p: { kind: string; reason: string; uid?: string }, target: string) => {
      deletedUids.push(p.uid!);
      return { function: f, target, status: 'acted', reason: p.reason, actions: [{ verb: 'delete', target: 'Pod/ns/p', reason: `stuck (uid ${p.uid})`, result: 'done' }] };
    };
    const fn = {
      name: 'deleter',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {},
      observe: async () => ({ podUid: `u${++uid}` }),
      plan: (o: { podUid: string }) => ({ kind: 'act', reason: 'delete the stuck pod', uid: o.podUid }),
    } as unknown as AnyFunction;
    const file = join(dir, 'aa.jsonl');
    writeFileSync(file, [line('1', 'a'), line('2', 'a')].join('\n') + '\n');
    const out: string[] = [];
    const code = await runCli(['replay', file, '-o', 'json', '--wait', '0'], { out: (s) => out.push(s), err: () => undefined, env: { KUBECONFIG } }, [fn]);
    const rep = JSON.parse(out.join('')) as { outcomes: { target?: string; actions?: { verb: string; target: string; reason: string }[] }[] };
    const row = rep.outcomes.find((o) => o.target === 'ConfigMap/ns/a');
    expect({ code, deletedUids, reported: (row?.actions ?? []).map((a) => `${a.verb} ${a.target}`) }).toEqual({ code: 3, deletedUids: ['u1', 'u2'], reported: ['delete Pod/ns/p', 'delete Pod/ns/p'] });
  }, 30_000);
});
