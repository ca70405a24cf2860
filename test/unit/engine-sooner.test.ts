/**
 * Red team round 6 (a helper given the code; failed on 11ab9e5): a later look that needs a
 * re-check SOONER than the one queued for its target (a long fence or grace wait, then an event whose
 * state needs a look in 1 s) got none until the old timer fired (up to Requeuer.MAX_DELAY_MS, 6 h):
 * Requeuer.schedule answered 'already'. The CLI reported the target "in progress". One timer per
 * key, due at the soonest time asked.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyFunction } from '../../shared/core/types.js';
import { KubeError } from '../../shared/kube/errors.js';
import { runCliCaptured, unreachableCluster } from '../support/cli.js';
import { configMapUpdate, fakeFunction, planReporter, testEngine } from '../support/doors.js';

const { dir, kubeconfig: KUBECONFIG } = unreachableCluster('olm-medic-engine-sooner-');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const line = (id: string, name: string): string =>
  JSON.stringify({ specversion: '1.0', id, source: '/apis/v1', type: 'dev.knative.apiserver.ref.update', datacontenttype: 'application/json', data: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name } });

/** Look 1: wait 600 s (a grace period); look 2: wait 1 s (the state changed: look again soon); then settled. */
function waiting(): { fn: AnyFunction; looks: () => number } {
  let n = 0;
  const fn = fakeFunction({
    observe: async () => ({ n: ++n }),
    plan: (o: { n: number }) =>
      o.n === 1 ? { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' } : o.n === 2 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for owned objects to finish deleting' } : { kind: 'noop', reason: 'settled' },
  });
  return { fn, looks: () => n };
}

describe('RT6-2: a sooner re-check asked while a later one is queued runs when asked', () => {
  it('engine: the second event asks a re-check in 1 s; it runs within 3 s, not after the first one\'s 600 s', async () => {
    const s = waiting();
    const engine = testEngine([s.fn], {} as never, { execute: planReporter });
    const ev = (id: string) => configMapUpdate('a', id);
    const first = await engine.handle(ev('1'));
    const second = await engine.handle(ev('2'));
    await sleep(3_000);
    engine.close();
    expect({ first: first[0]!.status, second: second[0]!.requeueAfterSeconds, looks: s.looks() }).toEqual({ first: 'requeued', second: 1, looks: 3 });
  }, 20_000);

  it('CLI replay a, a: the last look asks 1 s; --wait 6 finishes (waited, then settled: exit 0), not "in progress" (exit 4)', async () => {
    const s = waiting();
    const file = join(dir, 'aa.jsonl');
    writeFileSync(file, [line('1', 'a'), line('2', 'a')].join('\n') + '\n');
    const r = await runCliCaptured(['replay', file, '-o', 'json', '--wait', '6'], [s.fn], { KUBECONFIG });
    const rep = JSON.parse(r.out) as { inProgress: string[] };
    expect({ looks: s.looks(), code: r.code, inProgress: rep.inProgress }).toEqual({ looks: 3, code: 0, inProgress: [] });
  }, 30_000);
});

/**
 * Red team round 7 (failed on a843b53): the Requeuer compares due times on the wall clock (Date.now()) while its timers
 * run on the monotonic clock. After the host's clock steps forward (NTP step, VM resume), a timer
 * queued before the step looks "due sooner" than any new ask: a look that needs a re-check in 1 s is
 * answered 'already' and waits behind the earlier look's 600 s grace period (the very case RT6-2
 * fixed), and the CLI reports the target in progress. Due times must be monotonic (performance.now()).
 */
afterEach(() => vi.restoreAllMocks());

describe('RT7-clock-step: a sooner re-check after the wall clock stepped forward still runs when asked', () => {
  it('look 1 waits 600 s; the clock steps +1 h; look 2 asks 1 s: it runs within 3 s', async () => {
    let n = 0;
    const fn = fakeFunction({
      observe: async () => ({ n: ++n }),
      plan: (o: { n: number }) =>
        o.n === 1 ? { kind: 'requeue', afterSeconds: 600, reason: 'inside the grace period' } : o.n === 2 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' } : { kind: 'noop', reason: 'settled' },
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    const ev = (id: string) => configMapUpdate('a', id);
    await engine.handle(ev('1'));
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000); // the host clock steps forward 1 h
    await engine.handle(ev('2'));
    await sleep(3_000);
    engine.close();
    expect(n).toBe(3);
  }, 20_000);
});

/**
 * Red team rounds 8 (failed on 63b2eae) and 9 (failed on 6936119): an event answered 2xx "requeued"
 * promises an in-process re-check. When that re-check meets a transient apiserver error (503,
 * connection reset: 'transient') or an unexpected answer such as a 403 while RBAC is being rolled out
 * ('failed'), nothing scheduled another look, and there is no event to redeliver (the Broker already
 * got its 2xx). For the event itself either would be a 5xx that the Broker retries.
 */
describe.each([
  { round: 'RT8-recheck-transient', ends: 'transient', error: new KubeError(503, 'ServiceUnavailable', 'apiserver unavailable'), from: 'a 503 from the apiserver', waitMs: 6_000 },
  { round: 'RT9-recheck-failed', ends: 'failed', error: new KubeError(403, 'Forbidden', 'configmaps "x" is forbidden'), from: 'a 403 (RBAC not yet applied)', waitMs: 5_000 },
])('$round: a re-check that ends $ends is tried again', ({ error, from, waitMs }) => {
  it(`event x: wait 1 s (2xx); the re-check gets ${from}; x is looked at again`, async () => {
    let n = 0;
    const fn = fakeFunction({
      observe: async () => {
        n++;
        if (n === 2) throw error;
        return { n };
      },
      plan: (o: { n: number }) => (o.n === 1 ? { kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' } : { kind: 'noop', reason: 'settled' }),
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    const x = await engine.handle(configMapUpdate('x'));
    await sleep(waitMs);
    engine.close();
    expect({ x: x[0]!.status, lookedAgain: n >= 3 }).toEqual({ x: 'requeued', lookedAgain: true });
  }, 20_000);
});

/**
 * The in-process retries are bounded, as the Broker's are: a re-check that keeps failing is tried
 * again 6 times (2 s doubling, ±20 %), then given up (an error in the log; the next sweep looks
 * again), so a target that never gets through does not hold a queue place for ever.
 */
describe('a re-check that never gets through is given up after 6 retries', () => {
  afterEach(() => vi.useRealTimers());
  it('event x: wait 1 s (2xx); every later read 403: 1 + 1 + 6 looks within 10 minutes, then none', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    let n = 0;
    const fn = fakeFunction({
      observe: async () => {
        n++;
        if (n >= 2) throw new KubeError(403, 'Forbidden', 'configmaps "x" is forbidden');
        return { n };
      },
      plan: () => ({ kind: 'requeue', afterSeconds: 1, reason: 'waiting for GC' }),
    });
    const engine = testEngine([fn], {} as never, { execute: planReporter });
    await engine.handle(configMapUpdate('x'));
    await vi.advanceTimersByTimeAsync(600_000);
    const within = n;
    await vi.advanceTimersByTimeAsync(6 * 3_600_000);
    engine.close();
    expect({ within, after: n }).toEqual({ within: 8, after: 8 });
  });
});
