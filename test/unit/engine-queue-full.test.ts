/**
 * Red team round 6 (a helper given the code; failed on 11ab9e5): the engine ignored
 * Requeuer.schedule's 'full'. With 1,000 re-checks queued (a catalog update's Subscriptions waiting
 * out a grace period), the next event whose target needs a re-check was answered 202 "requeued" (a
 * 2xx, so the Broker never redelivers) and the re-check it promised never ran. Now it is transient
 * (503, redelivered), as after close(): never a 2xx that promises a re-check.
 */
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { postStructured } from '../support/cli.js';
import { testEngine, twoDoors } from '../support/doors.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ev = (name: string): string =>
  JSON.stringify({ specversion: '1.0', id: `e-${name}`, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name } });

describe('RT6-3: a re-check the full queue cannot take is not promised by a 2xx', () => {
  it('1,000 targets wait 600 s (a sweep: its answer stays); the event for x asks 1 s: 503, the Broker redelivers', async () => {
    const looks = new Map<string, number>();
    const fn = {
      name: 'fake',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: unknown }) => [t.ref],
      async *sweep() {
        for (let i = 0; i < 1000; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
      },
      observe: async (ref: { name: string }) => {
        looks.set(ref.name, (looks.get(ref.name) ?? 0) + 1);
        return { name: ref.name, n: looks.get(ref.name) };
      },
      plan: (o: { name: string; n: number }) =>
        o.name !== 'x' ? { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' } : o.n === 1 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' } : { kind: 'noop', reason: 'settled' },
    } as unknown as AnyFunction;
    const execute = async (f: string, p: { kind: string; reason: string; afterSeconds?: number }, target: string) =>
      p.kind === 'requeue' ? { function: f, target, status: 'requeued', reason: p.reason, requeueAfterSeconds: p.afterSeconds } : { function: f, target, status: 'noop', reason: p.reason };
    const engine = testEngine([fn], {} as never, { execute });
    const swept = await engine.handle({ kind: 'sweep', meta: { id: 's', source: 's', type: 'io.olm-medic.sweep' } });
    expect(new Set(swept.map((o) => o.status))).toEqual(new Set(['requeued']));
    const { front } = twoDoors(engine, [fn]);
    const status = await postStructured(front, ev('x'));
    await sleep(2_500);
    engine.close();
    const xLooks = looks.get('x') ?? 0;
    expect({ status, xLooks }).toEqual({ status: 503, xLooks: 1 });
  }, 20_000);
});
