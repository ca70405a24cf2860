/**
 * Red team round 3 (a helper given the code and "make olm-medic write to the wrong object, or
 * crash"; this failed on a39c4e0): the replay measures a line's size after decoding the file as UTF-8 (each
 * invalid byte becomes U+FFFD, 3 bytes); the door measures the bytes it received.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../shared/cli/run.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { testEngine, twoDoors } from '../support/doors.js';
import { unreachableCluster, postStructured } from '../support/cli.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-cli-bytes-');

const post = postStructured;

const fn = {
  name: 'fake',
  summary: 's',
  kinds: ['v1/ConfigMap'],
  targets: (t: { ref: unknown }) => [t.ref],
  async *sweep() {},
  observe: async () => ({}),
  plan: () => ({ kind: 'noop', reason: 'fine' }),
} as unknown as AnyFunction;

describe('H6: a line the door accepts (within BODY_LIMIT_BYTES as sent) is not rejected 413 by the replay', () => {
  it('1,000 raw bytes holding a few non-UTF-8 bytes, BODY_LIMIT_BYTES=1024', async () => {
    const head = JSON.stringify({ specversion: '1.0', id: 'e1', source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'cm', pad: '' } });
    const [pre, post_] = [head.slice(0, -3), head.slice(-3)]; // ...,"pad":"  |  "}}
    const fill = 1000 - Buffer.byteLength(pre) - Buffer.byteLength(post_);
    const line = Buffer.concat([Buffer.from(pre), Buffer.alloc(20, 0xff), Buffer.alloc(fill - 20, 0x78), Buffer.from(post_)]);
    expect(line.length).toBe(1000);
    const { front, app } = twoDoors(testEngine([fn], {} as never), [fn], 1024);
    expect(await post(front, line)).toBe(200);
    expect(await post(app, line)).toBe(200);
    const f = join(dir, 'bytes.jsonl');
    writeFileSync(f, Buffer.concat([line, Buffer.from('\n')]));
    const out: string[] = [];
    const code = await runCli(['replay', f, '-o', 'json', '--wait', '0'], { out: (s) => out.push(s), err: () => {}, env: { KUBECONFIG, BODY_LIMIT_BYTES: '1024' } }, [fn]);
    const rep = JSON.parse(out.join('')) as { rejected: unknown[] };
    expect({ code, rejected: rep.rejected }).toEqual({ code: 0, rejected: [] });
  }, 30_000);
});
