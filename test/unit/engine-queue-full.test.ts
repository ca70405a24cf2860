/**
 * Red team round 6 (a helper given the code; failed on 11ab9e5): the engine ignored
 * Requeuer.schedule's 'full'. With 1,000 re-checks queued (a catalog update's Subscriptions waiting
 * out a grace period), the next event whose target needs a re-check was answered 202 "requeued" (a
 * 2xx, so the Broker never redelivers) and the re-check it promised never ran. Now it is transient
 * (503, redelivered), as after close(): never a 2xx that promises a re-check.
 */
import { describe, expect, it } from 'vitest';
import { postStructured } from '../support/cli.js';
import { configMapUpdate, fakeFunction, planReporter, testEngine, twoDoors } from '../support/doors.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ev = (name: string): string =>
  JSON.stringify({ specversion: '1.0', id: `e-${name}`, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name } });

describe('RT6-3: a re-check the full queue cannot take is not promised by a 2xx', () => {
  it('1,000 targets wait 600 s (a sweep: its answer stays); the event for x asks 1 s: 503, the Broker redelivers', async () => {
    const looks = new Map<string, number>();
    const fn = fakeFunction({
      *sweep() {
        for (let i = 0; i < 1000; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
      },
      observe: async (ref: { name: string }) => {
        looks.set(ref.name, (looks.get(ref.name) ?? 0) + 1);
        return { name: ref.name, n: looks.get(ref.name) };
      },
      plan: (o: { name: string; n: number }) =>
        o.name !== 'x' ? { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' } : o.n === 1 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' } : { kind: 'noop', reason: 'settled' },
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
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

/**
 * Red team round 7 (failed on a843b53): the Requeuer frees a key's slot when its timer fires, before the re-check runs.
 * With the queue full of legitimate waits (1,000 Subscriptions in a grace period), a new event takes
 * that slot while the re-check is still reading; the re-check, which still needs another look,
 * then gets 'full' and is dropped silently: nothing answers for it (no event to 503, no log line),
 * and the target is not looked at again until some later sweep. The new event could have been
 * answered 503 (the Broker redelivers it); the in-process re-check has no one to redeliver it.
 */
describe('RT7-slot-stolen: a running re-check keeps its place in the full queue', () => {
  it('1,000 waits (k: 1 s, the rest 600 s); an event for j arrives while k is re-checked; k still needs a look: it gets it', async () => {
    let kLooks = 0;
    let started!: () => void;
    const kStarted = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const kRelease = new Promise<void>((r) => (release = r));
    const fn = fakeFunction({
      *sweep() {
        yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'k' };
        for (let i = 0; i < 999; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
      },
      observe: async (ref: { name: string }) => {
        if (ref.name !== 'k') return { name: ref.name, n: 0 };
        const n = ++kLooks;
        if (n === 2) {
          started();
          await kRelease;
        }
        return { name: 'k', n };
      },
      plan: (o: { name: string; n: number }) =>
        o.name === 'k'
          ? o.n <= 2
            ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' }
            : { kind: 'noop', reason: 'settled' }
          : o.name === 'j'
            ? { kind: 'requeue', afterSeconds: 5, reason: 'fenced' }
            : { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' },
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    await engine.handle({ kind: 'sweep', meta: { id: 's', source: 's', type: 'io.olm-medic.sweep' } });
    await kStarted; // k's re-check (at ~1 s) is reading: its timer is gone from the queue
    const j = await engine.handle(configMapUpdate('j'));
    release(); // k's re-check still needs a look in 1 s
    await sleep(2_500);
    engine.close();
    expect({ kLooks, jStatus: j[0]!.status }).toEqual({ kLooks: 3, jStatus: 'transient' });
  }, 20_000);
});

/**
 * Red team round 7 (failed on a843b53): an event whose target hit the action budget (rate-limited: the executor asks the
 * Broker to come back after the budget's window, 429 + Retry-After) is answered 503 + Retry-After: 1
 * when the re-check queue is full. A 429 is already retried by the Broker (it never promised an
 * in-process re-check), so the full queue must not turn it into a 5xx that asks for a retry in 1 s,
 * defeating the budget's back-off.
 */
describe('RT7-ratelimit: a rate-limited event stays 429 when the re-check queue is full', () => {
  it('1,000 targets wait 600 s; the event for x hits the action budget (retry in 30 s): 429, not 503', async () => {
    const fn = fakeFunction({
      *sweep() {
        for (let i = 0; i < 1000; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
      },
      observe: async (ref: { name: string }) => ({ name: ref.name }),
      plan: (o: { name: string }) => (o.name === 'x' ? { kind: 'rate', reason: 'delete x' } : { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' }),
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    await engine.handle({ kind: 'sweep', meta: { id: 's', source: 's', type: 'io.olm-medic.sweep' } });
    const { front } = twoDoors(engine, [fn]);
    const status = await postStructured(front, ev('x'));
    const direct = await engine.handle(configMapUpdate('x', 'd'));
    engine.close();
    expect({ status, direct: direct.map((o) => o.status) }).toEqual({ status: 429, direct: ['rate-limited'] });
  }, 20_000);
});

/**
 * Red team round 7 (failed on a843b53): unpromised(o, sweep) keeps a sweep's answer when the full queue cannot take a
 * target's re-check ("a sweep's own next run is the fallback for its targets, so its answer stays"),
 * but a held follow-up inside the sweep is unpromised as if it were an event's: it turns transient,
 * folds into its parent target's status, and the whole sweep is answered 503. The Broker (or the
 * CronJob's PingSource) then redelivers the WHOLE sweep (every target read again, Retry-After: 1),
 * and again for as long as the queue stays full; the parent target itself finished cleanly.
 */
describe('RT7-sweep-held: a sweep whose held follow-up cannot be queued keeps its 2xx, as its own targets do', () => {
  it('sweep t0..t999 (wait 600 s) then d (deletes Pod p, held; p asks a re-check in 5 s): 200 (d acted), not 503', async () => {
    const fn = fakeFunction({
      kinds: ['v1/ConfigMap', 'v1/Pod'],
      *sweep() {
        for (let i = 0; i < 1000; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
        yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'd' };
      },
      observe: async (ref: { name: string }) => ({ name: ref.name }),
      plan: (o: { name: string }) =>
        o.name === 'd' ? { kind: 'act', reason: 'delete the stuck pod' } : o.name === 'p' ? { kind: 'requeue', afterSeconds: 5, reason: 'finalizer still there' } : { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' },
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    const { front } = twoDoors(engine, [fn]);
    const status = await postStructured(front, JSON.stringify({ specversion: '1.0', id: 'sweep-1', source: '/cron', type: 'io.olm-medic.sweep' }));
    engine.close();
    expect({ status, twoHundreds: status >= 200 && status < 300 }).toEqual({ status: 200, twoHundreds: true });
  }, 20_000);
});

/**
 * Red team round 8 (failed on 63b2eae): RT7 kept a running re-check's own place in the full queue (Requeuer.done), but
 * not the places its held follow-ups need. An in-process re-check (no event, no Broker behind it)
 * acts, deletes Pod p (held by a finalizer); p's immediate look needs another in 1 s; the queue is
 * full, so p's re-check gets 'full'. For an event that is a 503 (the Broker redelivers); for a
 * re-check, unpromised() turns the follow-up transient into an outcome nobody reads: p is never
 * looked at again (no event for it, not one of the sweep's targets).
 */
describe('RT8-recheck-held-full: a re-check\'s held follow-up is not dropped by the full queue', () => {
  it('999 waits of 600 s; event d waits 1 s (the 1,000th place); d\'s re-check deletes p (held, needs a look in 1 s): p is looked at again', async () => {
    const looks = new Map<string, number>();
    const fn = fakeFunction({
      kinds: ['v1/ConfigMap', 'v1/Pod'],
      *sweep() {
        for (let i = 0; i < 999; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `t${i}` };
      },
      observe: async (ref: { name: string }) => {
        const n = (looks.get(ref.name) ?? 0) + 1;
        looks.set(ref.name, n);
        return { name: ref.name, n };
      },
      plan: (o: { name: string; n: number }) =>
        o.name === 'd'
          ? o.n === 1
            ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' }
            : (looks.get('p') ?? 0) < 2
              ? { kind: 'act', reason: 'delete the stuck pod' } // while p is still there
              : { kind: 'noop', reason: 'done' }
          : o.name === 'p'
            ? o.n === 1
              ? { kind: 'requeue', afterSeconds: 1, reason: 'finalizer still there' }
              : { kind: 'noop', reason: 'gone now' }
            : { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' },
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    await engine.handle({ kind: 'sweep', meta: { id: 's', source: 's', type: 'io.olm-medic.sweep' } });
    const d = await engine.handle(configMapUpdate('d'));
    await sleep(5_000);
    engine.close();
    // d's event was answered 2xx (its re-check queued); the re-check deleted p, whose finalizer
    // needs another look: someone must look at p again.
    expect({ d: d[0]!.status, pLookedAgain: (looks.get('p') ?? 0) >= 2 }).toEqual({ d: 'requeued', pLookedAgain: true });
  }, 20_000);
});
