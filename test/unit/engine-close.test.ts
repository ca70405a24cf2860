/**
 * Red team round 3 (a helper given the code and "make olm-medic write to the wrong object, or
 * crash"; this failed on a39c4e0): the server after engine.close() (SIGTERM: serve.ts closes the engine, then
 * waits up to 10 s for server.close). Requests still arriving (keep-alive connections) are handled;
 * one whose outcome is "requeued" is answered 202 although the closed Requeuer drops its re-check.
 */
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { testEngine, twoDoors } from '../support/doors.js';
import { postStructured } from '../support/cli.js';

const post = postStructured;

describe('H5: after engine.close(), a "requeued" answer must not promise a re-check that never comes', () => {
  it('either the re-check runs, or the Broker is told to redeliver (not 2xx)', async () => {
    let observes = 0;
    const fn = {
      name: 'fake',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {},
      observe: async () => (observes++, {}),
      plan: () => ({ kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' }),
    } as unknown as AnyFunction;
    const execute = async (f: string, _p: unknown, target: string) => ({ function: f, target, status: 'requeued', reason: 'waiting for GC', requeueAfterSeconds: 1 });
    const engine = testEngine([fn], {} as never, { execute });
    const { front } = twoDoors(engine, [fn]);
    engine.close(); // SIGTERM
    const body = JSON.stringify({ specversion: '1.0', id: 'e1', source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'cm' } });
    const status = await post(front, body);
    await new Promise((r) => setTimeout(r, 2_500));
    expect({ status, recheckedOrRedelivered: observes >= 2 || status >= 400 }).toEqual({ status, recheckedOrRedelivered: true });
  }, 20_000);
});
