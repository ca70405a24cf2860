/**
 * `olm-medic replay` line by line, without a cluster (the kubeconfig points at a closed port, so an
 * event that reaches a function's reads ends transient): each line is decoded as the HTTP door
 * decodes a structured-mode request, a line the door would answer 400 is rejected and named, and the
 * lines after it are still handled. Holes a red-team helper proved on the first version (it built
 * the CloudEvent itself): lines the door rejects (specversion 0.3, an array `type`, missing id or
 * specversion, which the SDK fills in) reached the engine; a non-string datacontenttype threw a
 * TypeError that aborted the replay with no report; a file with lone-CR line ends was one line;
 * and `--wait` past setTimeout's range made the drain wake every millisecond.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../shared/cli/run.js';
import { decodeRequest } from '../../shared/events/decode.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { allFunctions } from '../../functions/index.js';
import { testEngine } from '../support/doors.js';
import { unreachableCluster } from '../support/cli.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-replay-');

interface Report {
  rejected: { at: string; error: string }[];
  outcomes: { function?: string; target?: string; status: string }[];
  total: number;
}

async function replay(content: string): Promise<{ file: string; code: number; report: Report; err: string }> {
  const file = join(dir, `replay-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, content);
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['replay', file, '-o', 'json', '--wait', '0'], { out: (s) => out.push(s), err: (s) => err.push(s), env: { KUBECONFIG } }, allFunctions);
  return { file, code, report: JSON.parse(out.join('')) as Report, err: err.join('\n') };
}

/** The 400 message the HTTP door gives for this structured-mode body. */
function doorRejection(line: string): string {
  try {
    decodeRequest({ 'content-type': 'application/cloudevents+json' }, line);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`the door accepts ${line}`);
}

const ip = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abc', namespace: 'ns1' };
const ref03 = { specversion: '0.3', id: 'a1', source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: ip };
/** An event no function handles: "ignored" without a read, so it counts once it is handled. */
const foreign = JSON.stringify({ specversion: '1.0', id: 'f1', source: '/x', type: 'com.example.other', data: {} });

describe('olm-medic replay: each line as the HTTP door decodes it', () => {
  const doorRejects: [string, string][] = [
    ['specversion 0.3', JSON.stringify(ref03)],
    ['specversion 0.3 with a non-string datacontenttype', JSON.stringify({ ...ref03, datacontenttype: 5 })],
    ['a type that is an array', JSON.stringify({ ...ref03, specversion: '1.0', type: ['dev.knative.apiserver.ref.update'] })],
    ['no id and no specversion', JSON.stringify({ source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', data: ip })],
    ['not JSON', '{oops'],
    ['not a CloudEvent', '{"a":1}'],
  ];
  it.each(doorRejects)('%s: rejected with the door\'s 400 message; the next line is still handled; exit 1', async (_, line) => {
    const r = await replay(`${line}\n${foreign}\n`);
    expect(r.report.rejected).toEqual([{ at: `${r.file}:1`, error: doorRejection(line) }]);
    expect(r.err).toContain(`rejected ${r.file}:1: `);
    // Nothing of the rejected line reached a function; the foreign line after it was handled.
    expect(r.report.outcomes).toEqual([]);
    expect(r.report.total).toBe(1);
    expect(r.code).toBe(1);
  }, 30_000);

  it('line numbers hold with CRLF, lone-CR line ends and a byte order mark', async () => {
    for (const eol of ['\r\n', '\r', '\n']) {
      const r = await replay(`\ufeff${foreign}${eol}# a comment${eol}not json${eol}${eol}${foreign}${eol}`);
      expect(r.report.rejected.map((x) => x.at), JSON.stringify(eol)).toEqual([`${r.file}:3`]);
      expect(r.report.total).toBe(2);
    }
  }, 30_000);

  it('a valid file replays clean (exit 0), nothing rejected', async () => {
    const r = await replay(`${foreign}\n${foreign}\n`);
    expect(r.report.rejected).toEqual([]);
    expect(r.report.total).toBe(2);
    expect(r.code).toBe(0);
  });
});

describe('engine.drain with a deadline past setTimeout\'s range (--wait 2147484 and more)', () => {
  const requeueing = {
    name: 'f',
    summary: 's',
    kinds: ['v1/ConfigMap'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' };
    },
    observe: async () => ({}),
    plan: () => ({ kind: 'requeue', afterSeconds: 1, reason: 'later' }),
  } as unknown as AnyFunction;

  it('waits on one quiet timer (no TimeoutOverflowWarning, no 1 ms polling), and returns when the engine is closed', async () => {
    const execute = async (f: string, _p: unknown, target: string) => ({ function: f, target, status: 'requeued', reason: 'later', requeueAfterSeconds: 3600 });
    const engine = testEngine([requeueing], {} as never, { execute });
    await engine.handle({ kind: 'sweep', meta: { id: 'x', source: 's', type: 'io.olm-medic.sweep' } });
    let warnings = 0;
    const onWarn = (w: Error): void => void (w.name === 'TimeoutOverflowWarning' && warnings++);
    process.on('warning', onWarn);
    try {
      const drained = engine.drain(Date.now() + 2_147_484 * 1000);
      await new Promise((r) => setTimeout(r, 300));
      const closed = Date.now();
      engine.close();
      const result = await drained;
      expect(Date.now() - closed).toBeLessThan(1_000);
      expect(result.pending).toEqual([]);
      expect(warnings).toBe(0);
    } finally {
      process.off('warning', onWarn);
    }
  });
});
