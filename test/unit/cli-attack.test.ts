/**
 * The CLI against what a second red-team helper (given the code and "make olm-medic write to the
 * wrong object, or crash") proved on the first fix of the replay. Each test states what should
 * hold; each failed on 7866477:
 *   1 a line the HTTP door answers 400 reached the engine because the replay trimmed it (a leading
 *     space, NBSP or vertical tab, a trailing U+2028, a byte order mark mid-file);
 *   2 a line over BODY_LIMIT_BYTES (the door's 413) was replayed;
 *   3 `replay A B` read only A (exit 0), and `replay --namespace` was ignored;
 *   4 a target whose re-check the engine could not queue (past 1,000) was reported finished;
 *   5 a few hundred thousand rows overflowed the stack (`push(...rows)`, `Math.max(...widths)`):
 *     runCli rejected, or a sweep's outcomes became one failed row;
 *   6 engine.close() during a drain let a re-check under way queue another: the drain ran to its
 *     deadline and the closed engine kept observing;
 *   7 an invalid `sweep --namespace` was exit 3 (every function "refused"), not a usage error.
 * The cluster is a closed port (no function here reads it).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeRequest } from '../../shared/events/decode.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { allFunctions } from '../../functions/index.js';
import { testEngine, twoDoors } from '../support/doors.js';
import { firstPlanThenNoop, runCliCaptured, unreachableCluster, postStructured } from '../support/cli.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-attack-');

interface Report {
  rejected: { at: string; error: string }[];
  outcomes: { function?: string; target?: string; status: string; reason: string }[];
  inProgress: string[];
  total: number;
}

function file(content: string): string {
  const f = join(dir, `r-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(f, content);
  return f;
}

async function cli(args: string[], fns: AnyFunction[] = allFunctions, env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, fns, { KUBECONFIG, ...env });
}

const post = postStructured;

const ip = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abc', namespace: 'ns1' };
const refEvent = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ specversion: '1.0', id: 'a1', source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { ...ip, ...extra } });

describe('1: a line the HTTP door answers 400 is rejected by the replay too (lines are not trimmed)', () => {
  const cases: [string, string][] = [
    ['leading space (SDK quotes a body not starting with "{")', ` ${refEvent()}`],
    ['leading NO-BREAK SPACE', `\u00a0${refEvent()}`],
    ['trailing LINE SEPARATOR U+2028', `${refEvent()}\u2028`],
    ['leading vertical tab', `\v${refEvent()}`],
    ['BOM in the middle of the file', `\ufeff${refEvent()}`],
  ];
  it.each(cases)('%s', async (_, line) => {
    // The door's decoder (what app.ts calls on the raw body) and the app itself reject it...
    expect(() => decodeRequest({ 'content-type': 'application/cloudevents+json' }, line)).toThrow(/invalid CloudEvent/);
    const fns = allFunctions;
    const { app } = twoDoors(testEngine(fns, {} as never), fns);
    expect(await post(app, line)).toBe(400);
    // ...so the replay should reject it too (line 2; line 1 is a comment).
    const f = file(`# x\n${line}\n`);
    const r = await cli(['replay', f, '-o', 'json', '--wait', '0']);
    const rep = JSON.parse(r.out) as Report;
    expect(rep.rejected.map((x) => x.at)).toEqual([`${f}:2`]);
  }, 30_000);
});

describe('2: a line over BODY_LIMIT_BYTES is rejected with the door\'s 413 message', () => {
  it('a 4 KiB line with BODY_LIMIT_BYTES=1024', async () => {
    const line = refEvent({ pad: 'x'.repeat(4096) });
    const fns = allFunctions;
    const { app, front } = twoDoors(testEngine(fns, {} as never), fns, 1024);
    expect(await post(app, line)).toBe(413);
    expect(await post(front, line)).toBe(413);
    const f = file(`${line}\n`);
    const r = await cli(['replay', f, '-o', 'json', '--wait', '0'], allFunctions, { BODY_LIMIT_BYTES: '1024' });
    const rep = JSON.parse(r.out) as Report;
    expect(rep.rejected).toEqual([{ at: `${f}:1`, error: 'body exceeds the limit of 1024 bytes (BODY_LIMIT_BYTES)' }]);
    expect(rep.outcomes).toEqual([]);
  }, 30_000);
});

describe('3: `replay A B` (a shell glob of dead-letter files) is a usage error, not A alone', () => {
  it('exit 2 naming the extra file', async () => {
    const good = file(`${JSON.stringify({ specversion: '1.0', id: 'f1', source: '/x', type: 'com.example.other', data: {} })}\n`);
    const bad = file('not json at all\n');
    const r = await cli(['replay', good, bad, '-o', 'json', '--wait', '0']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`unexpected argument(s) ${JSON.stringify(bad)}`);
  }, 30_000);
});

/** A function whose sweep yields `n` ConfigMaps, each requeued once (after 1 s), then noop. */
const requeueOnce = (n: number, afterSeconds = 1): AnyFunction => firstPlanThenNoop(n, () => ({ kind: 'requeue', afterSeconds, reason: 'later' }));
const sweepLine = JSON.stringify({ specversion: '1.0', id: 's1', source: '/x', type: 'io.olm-medic.sweep' });

describe('4: a target whose re-check the engine could not queue is reported in progress', () => {
  it('1,001 targets requeued (the queue holds 1,000): the one left over is in progress, exit 4', async () => {
    const r = await cli(['replay', file(`${sweepLine}\n`), '-o', 'json', '--wait', '20'], [requeueOnce(1001)]);
    const rep = JSON.parse(r.out) as Report;
    const notRechecked = rep.outcomes.filter((o) => !o.reason.includes('then noop'));
    expect(notRechecked.map((o) => o.target)).toEqual(['ConfigMap/ns/cm-1000']);
    expect({ code: r.code, inProgress: rep.inProgress }).toEqual({ code: 4, inProgress: ['fake|ConfigMap/ns/cm-1000'] });
  }, 60_000);
});

/** Sweeps `n` ConfigMaps; each is "requeued" (no cluster I/O: the executor answers a requeue plan itself). */
const many = (n: number): AnyFunction =>
  ({
    name: 'fake',
    summary: 's',
    kinds: ['v1/ConfigMap'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      for (let i = 0; i < n; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `cm-${i}` };
    },
    observe: async () => ({}),
    plan: () => ({ kind: 'requeue', afterSeconds: 3600, reason: 'later' }),
  }) as unknown as AnyFunction;

const N = 300_000;

async function cliMany(args: string[], n = N): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, [many(n)], { KUBECONFIG, SWEEP_CONCURRENCY: '64' });
}

describe('5: a few hundred thousand rows are reported, never a stack overflow', () => {
  it('olm-medic sweep of 300,000 targets: reported, in progress (exit 4)', async () => {
    const r = await cliMany(['sweep', '--wait', '0']);
    expect(r.err).not.toContain('Maximum call stack size exceeded');
    expect(r.code).toBe(4); // each target requeued, still scheduled
  }, 120_000);

  it('replay of two 100,000-target sweep lines, table output: answered (exit 4)', async () => {
    const f = join(dir, 'sweep2.jsonl');
    const line = (id: string): string => JSON.stringify({ specversion: '1.0', id, source: '/x', type: 'io.olm-medic.sweep' });
    writeFileSync(f, `${line('s1')}\n${line('s2')}\n`);
    await expect(cliMany(['replay', f, '--wait', '0'], 100_000)).resolves.toMatchObject({ code: 4 });
  }, 120_000);

  it('replay of one 300,000-target sweep line: every outcome is in the report', async () => {
    const f = join(dir, 'sweep.jsonl');
    writeFileSync(f, `${JSON.stringify({ specversion: '1.0', id: 's1', source: '/x', type: 'io.olm-medic.sweep' })}\n`);
    const r = await cliMany(['replay', f, '-o', 'json', '--wait', '0']);
    const rep = JSON.parse(r.out) as { total: number; outcomes: { target?: string; status: string; reason: string }[] };
    expect(rep.total).toBe(N);
  }, 120_000);

  it('replay of a 160,000-line file, table output: answered (exit 4)', async () => {
    const f = join(dir, 'many.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 160_000; i++) lines.push(JSON.stringify({ specversion: '1.0', id: `e${i}`, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `cm-${i}` } }));
    writeFileSync(f, lines.join('\n'));
    await expect(cliMany(['replay', f, '--wait', '0'], 0)).resolves.toMatchObject({ code: 4 });
  }, 300_000);
});

describe('7: sweep --namespace with an invalid or empty value is a usage error', () => {
  it.each(['My_NS', 'ns1/secrets', '..', ''])('--namespace %j: exit 2, nothing swept', async (ns) => {
    const r = await cli(['sweep', '--namespace', ns, '--wait', '0', '-o', 'json']);
    expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: '' });
    expect(r.err).toContain(`--namespace ${JSON.stringify(ns)} `);
  }, 30_000);
});

describe('3b: replay --namespace is a usage error (a replay looks at what its events name)', () => {
  it('exit 2', async () => {
    const f = join(dir, 'x.jsonl');
    writeFileSync(f, `${JSON.stringify({ specversion: '1.0', id: 'f1', source: '/x', type: 'com.example.other', data: {} })}\n`);
    const r = await cli(['replay', f, '--namespace', 'only-this', '--wait', '0']);
    expect(r.code).toBe(2);
  }, 30_000);
});

describe('6: close() during a drain with a re-check under way', () => {
  it('the drain should return promptly and nothing should run after close', async () => {
    let observes = 0;
    let release!: () => void;
    let inRecheck!: () => void;
    const recheckStarted = new Promise<void>((r) => (inRecheck = r));
    const fn = {
      name: 'f',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {
        yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' };
      },
      observe: async () => {
        observes++;
        if (observes === 2) {
          inRecheck();
          await new Promise<void>((r) => (release = r));
        }
        return {};
      },
      plan: () => ({ kind: 'requeue', afterSeconds: 1, reason: 'later' }),
    } as unknown as AnyFunction;
    const execute = async (f: string, _p: unknown, target: string) => ({ function: f, target, status: 'requeued', reason: 'later', requeueAfterSeconds: 1 });
    const engine = testEngine([fn], {} as never, { execute });
    await engine.handle({ kind: 'sweep', meta: { id: 'x', source: 's', type: 'io.olm-medic.sweep' } });
    const drained = engine.drain(Date.now() + 6_000);
    await recheckStarted; // the 1 s requeue fired: the re-check is observing
    engine.close();
    const observesAtClose = observes;
    release(); // the re-check finishes and requeues (after close)
    const t0 = Date.now();
    await drained;
    const took = Date.now() - t0;
    expect({ tookUnder1s: took < 1_000, ranAfterClose: observes - observesAtClose }).toEqual({ tookUnder1s: true, ranAfterClose: 0 });
  }, 20_000);
});
