/**
 * Red team round 4 (a helper given the code; each failed on 3c32ddd): engine.close() and the HTTP
 * answers, and the held follow-up chain.
 */
import { describe, expect, it } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { testEngine, twoDoors } from '../support/doors.js';
import { postStructured } from '../support/cli.js';

const post = postStructured;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ev = (name: string): string =>
  JSON.stringify({ specversion: '1.0', id: `e-${name}`, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name } });

describe('R4-1: close() while an event is handled: a re-check it needs and will not get is not a 2xx', () => {
  it('an event with two targets: a requeues at once, b is slow; SIGTERM (close) between: not 2xx, or the re-check runs', async () => {
    let observesA = 0;
    let closeNow: () => void = () => undefined;
    const fn = {
      name: 'fake',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      // One event, two targets (e.g. a CSV and its Subscription).
      targets: (t: { ref: { name: string } }) => [t.ref, { ...t.ref, name: `${t.ref.name}-b` }],
      async *sweep() {},
      observe: async (ref: { name: string }) => {
        if (ref.name.endsWith('-b')) {
          await sleep(150); // a has been answered "requeued" and its re-check scheduled by now
          closeNow(); // SIGTERM arrives while b is still being looked at
          await sleep(150);
        } else observesA++;
        return { name: ref.name };
      },
      plan: (o: { name: string }) => (o.name.endsWith('-b') ? { kind: 'noop', reason: 'fine' } : { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' }),
    } as unknown as AnyFunction;
    const execute = async (f: string, p: { kind: string; reason: string }, target: string) =>
      p.kind === 'requeue' ? { function: f, target, status: 'requeued', reason: p.reason, requeueAfterSeconds: 1 } : { function: f, target, status: 'noop', reason: p.reason };
    const engine = testEngine([fn], {} as never, { execute });
    closeNow = () => engine.close();
    const { front } = twoDoors(engine, [fn]);
    const status = await post(front, ev('cm'));
    await sleep(2_500);
    expect({ status, recheckedOrRedelivered: observesA >= 2 || status >= 400 }).toEqual({ status, recheckedOrRedelivered: true });
  }, 20_000);
});

describe('R4-2: the held follow-up chain: an outcome that must be retried reaches the answer', () => {
  function fns(held: 'requeue' | 'throw'): { fns: AnyFunction[]; execute: unknown; observed: () => number } {
    let heldObserves = 0;
    const deleter = {
      name: 'deleter',
      summary: 's',
      kinds: ['v1/ConfigMap'],
      targets: (t: { ref: { kind: string } }) => (t.ref.kind === 'ConfigMap' ? [t.ref] : []),
      async *sweep() {},
      observe: async () => ({}),
      plan: () => ({ kind: 'act', reason: 'delete the stuck pod' }),
    } as unknown as AnyFunction;
    const cleaner = {
      name: 'cleaner',
      summary: 's',
      kinds: ['v1/Pod'],
      targets: (t: { ref: { kind: string } }) => (t.ref.kind === 'Pod' ? [t.ref] : []),
      async *sweep() {},
      observe: async () => {
        heldObserves++;
        if (held === 'throw') throw new Error('RBAC: forbidden');
        return {};
      },
      plan: () => ({ kind: 'requeue', afterSeconds: 1, reason: 'finalizer still there' }),
    } as unknown as AnyFunction;
    const execute = async (f: string, p: { kind: string; reason: string }, target: string) =>
      p.kind === 'act'
        ? { function: f, target, status: 'acted', reason: p.reason, actions: [{ verb: 'delete', target: 'Pod/ns/p', reason: 'stuck', result: 'done', held: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' } }] }
        : { function: f, target, status: 'requeued', reason: p.reason, requeueAfterSeconds: 1 };
    return { fns: [deleter, cleaner], execute, observed: () => heldObserves };
  }

  it('after close(): the held Pod needs a re-check that will not run here; the event must not be answered 2xx', async () => {
    const s = fns('requeue');
    const engine = testEngine(s.fns, {} as never, { execute: s.execute });
    const { front } = twoDoors(engine, s.fns);
    engine.close(); // SIGTERM; keep-alive requests still arrive
    const status = await post(front, ev('cm'));
    await sleep(1_500);
    expect({ heldLookedAt: s.observed(), status, recheckedOrRedelivered: s.observed() >= 2 || status >= 400 }).toEqual({ heldLookedAt: s.observed(), status, recheckedOrRedelivered: true });
  }, 20_000);

  it('the held re-check fails (RBAC): the failure must surface (not 200, the Broker never retries)', async () => {
    const s = fns('throw');
    const engine = testEngine(s.fns, {} as never, { execute: s.execute });
    const { front } = twoDoors(engine, s.fns);
    const status = await post(front, ev('cm'));
    engine.close();
    expect({ heldLookedAt: s.observed(), status }).toEqual({ heldLookedAt: 1, status: 500 });
  }, 20_000);
});
