/**
 * Admission in front of engine.handle: coalescing of events for the same targets while one waits,
 * bounded concurrency per function, 429 (rate-limited) beyond the queue, pass-through otherwise.
 */
import { describe, expect, it } from 'vitest';
import { withAdmission } from '../../shared/http/admission.js';
import type { Engine } from '../../shared/core/engine.js';
import type { Outcome } from '../../shared/core/outcome.js';
import type { AnyFunction } from '../../shared/core/types.js';
import type { ResourceTrigger, Trigger } from '../../shared/events/types.js';

const fn = (name: string, kind: string): AnyFunction =>
  ({ name, kinds: [`v1/${kind}`], targets: (t: ResourceTrigger) => (t.ref.kind === kind && !t.ref.name.startsWith('quiet') ? [t.ref] : []) }) as unknown as AnyFunction;

const ev = (kind: string, name: string, rv = '1'): Trigger => ({
  kind: 'resource',
  verb: 'update',
  mode: 'resource',
  ref: { apiVersion: 'v1', kind, name, namespace: 'ns' },
  object: { apiVersion: 'v1', kind, metadata: { name, namespace: 'ns', resourceVersion: rv } },
  meta: { id: `${name}-${rv}`, source: 's', type: 'dev.knative.apiserver.resource.update' },
});

/** An engine whose handle() waits until the test releases it; records what ran. */
function gatedEngine() {
  const started: string[] = [];
  const parts: string[] = [];
  const gates: (() => void)[] = [];
  let running = 0;
  let maxRunning = 0;
  const engine: Engine = {
    async handle(t: Trigger, only?: readonly string[]): Promise<Outcome[]> {
      started.push(t.meta.id);
      parts.push(`${t.meta.id}:${only?.join(',') ?? '*'}`);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((r) => gates.push(r));
      running--;
      return [{ status: 'noop', reason: `handled ${t.meta.id}` }];
    },
    wants: (_a, k) => k === 'Job' || k === 'Node',
    isDuplicate: () => false,
    reconcile: async () => ({ status: 'noop', reason: '' }),
    trackLooks: () => undefined,
    drain: async () => ({ looks: new Map(), pending: [] }),
    close: () => {},
  };
  const releaseAll = async (): Promise<void> => {
    while (gates.length) gates.shift()!();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { engine, started, parts, releaseAll, get maxRunning() { return maxRunning; }, get gates() { return gates.length; } };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('admission', () => {
  it('events for the same target while one waits share that run; one arriving while it runs queues exactly one more', async () => {
    const g = gatedEngine();
    const a = withAdmission(g.engine, { functions: [fn('f', 'Job')], maxInFlight: 4, maxQueued: 10, retryAfterSeconds: 2 });
    const p1 = a.handle(ev('Job', 'x', '1'));
    await tick();
    expect(g.started).toEqual(['x-1']); // running
    const p2 = a.handle(ev('Job', 'x', '2')); // queued behind the running one
    const p3 = a.handle(ev('Job', 'x', '3')); // joins the waiting one
    const p4 = a.handle(ev('Job', 'x', '4'));
    await g.releaseAll();
    await tick();
    expect(g.started).toEqual(['x-1', 'x-2']);
    await g.releaseAll();
    const [o1, o2, o3, o4] = await Promise.all([p1, p2, p3, p4]);
    expect(o1[0]!.reason).toBe('handled x-1');
    expect(o2[0]!.reason).toBe('handled x-2');
    expect(o3).toBe(o2);
    expect(o4).toBe(o2);
    expect(a.stats).toEqual({ ran: 2, coalesced: 2, rejected: 0 });
  });

  it("targets with a hint (the event's claim about the object) coalesce only with the same claim: a run never answers for another claim", async () => {
    const g = gatedEngine();
    const hinted = {
      name: 'h',
      kinds: ['v1/Job'],
      targets: (t: ResourceTrigger) => [{ ...t.ref, hint: { object: t.object! } }],
    } as unknown as AnyFunction;
    const a = withAdmission(g.engine, { functions: [hinted], maxInFlight: 1, maxQueued: 10, retryAfterSeconds: 2 });
    const p1 = a.handle(ev('Job', 'x', '1'));
    await tick();
    const p2 = a.handle(ev('Job', 'x', '2')); // waits: another claim about x
    const p2dup = a.handle(ev('Job', 'x', '2')); // the same claim redelivered: joins it
    const p3 = a.handle(ev('Job', 'x', '3')); // a third claim: its own run
    for (let i = 0; i < 4; i++) await g.releaseAll();
    const [o1, o2, o2dup, o3] = await Promise.all([p1, p2, p2dup, p3]);
    expect([o1, o2, o3].map((o) => o[0]!.reason)).toEqual(['handled x-1', 'handled x-2', 'handled x-3']);
    expect(o2dup).toBe(o2);
    expect(g.started).toEqual(['x-1', 'x-2', 'x-3']);
    expect(a.stats).toEqual({ ran: 3, coalesced: 1, rejected: 0 });
  });

  it('different targets do not coalesce; at most maxInFlight run at once per function, then 429 past the queue', async () => {
    const g = gatedEngine();
    const a = withAdmission(g.engine, { functions: [fn('f', 'Job')], maxInFlight: 2, maxQueued: 3, retryAfterSeconds: 7 });
    const ps = Array.from({ length: 5 }, (_, i) => a.handle(ev('Job', `j${i}`)));
    const rejected = await a.handle(ev('Job', 'j5'));
    expect(rejected).toEqual([expect.objectContaining({ function: 'f', status: 'rate-limited', requeueAfterSeconds: 7 })]);
    await tick();
    expect(g.started).toHaveLength(2);
    for (let i = 0; i < 10; i++) await g.releaseAll();
    const outs = await Promise.all(ps);
    expect(outs.map((o) => o[0]!.status)).toEqual(['noop', 'noop', 'noop', 'noop', 'noop']);
    expect(g.maxRunning).toBe(2);
    expect(a.stats).toEqual({ ran: 5, coalesced: 0, rejected: 1 });
    // Capacity is back once the runs finished.
    const again = a.handle(ev('Job', 'j5'));
    await tick();
    await g.releaseAll();
    expect((await again)[0]!.status).toBe('noop');
  });

  it('functions have separate limits', async () => {
    const g = gatedEngine();
    const a = withAdmission(g.engine, { functions: [fn('f', 'Job'), fn('n', 'Node')], maxInFlight: 1, maxQueued: 0, retryAfterSeconds: 1 });
    const p1 = a.handle(ev('Job', 'a'));
    await tick();
    expect((await a.handle(ev('Job', 'b')))[0]!.status).toBe('rate-limited');
    const p2 = a.handle(ev('Node', 'n1')); // the other function still has room
    await tick();
    expect(g.started).toEqual(['a-1', 'n1-1']);
    await g.releaseAll();
    await Promise.all([p1, p2]);
  });

  it('events no function targets, other kinds and sweeps pass straight through', async () => {
    const g = gatedEngine();
    const a = withAdmission(g.engine, { functions: [fn('f', 'Job')], maxInFlight: 1, maxQueued: 0, retryAfterSeconds: 1 });
    const busy = a.handle(ev('Job', 'a'));
    await tick();
    const quiet = a.handle(ev('Job', 'quiet-1'));
    const other = a.handle(ev('Pod', 'p'));
    const sweep = a.handle({ kind: 'sweep', meta: { id: 'sw', source: 's', type: 'dev.knative.sources.ping' } });
    await tick();
    expect(g.started).toEqual(['a-1', 'quiet-1-1', 'p-1', 'sw']);
    await g.releaseAll();
    await Promise.all([busy, quiet, other, sweep]);
    expect(a.stats.rejected).toBe(0);
  });
  it("one function's backlog never holds back another function's part of the same event (nor gets it a 429)", async () => {
    const g = gatedEngine();
    const verify = fn('verify', 'Job'); // targets every Job (like ownerref-repair every installed Subscription)
    const fix = { name: 'fix', kinds: ['v1/Job'], targets: (t: ResourceTrigger) => (t.ref.name.startsWith('stuck') ? [t.ref] : []) } as unknown as AnyFunction;
    const a = withAdmission(g.engine, { functions: [verify, fix], maxInFlight: 1, maxQueued: 1, retryAfterSeconds: 3 });
    const backlog = [a.handle(ev('Job', 'ok-0')), a.handle(ev('Job', 'ok-1'))]; // verify: one running, one waiting: full
    await tick();
    const stuck = a.handle(ev('Job', 'stuck-7'));
    await tick();
    // fix's part started at once, alone; verify's part was answered rate-limited without waiting.
    expect(g.parts).toEqual(['ok-0-1:verify', 'stuck-7-1:fix']);
    await g.releaseAll();
    await g.releaseAll();
    const outcomes = await stuck;
    expect(outcomes).toEqual(expect.arrayContaining([
      expect.objectContaining({ function: 'verify', status: 'rate-limited', requeueAfterSeconds: 3 }),
      expect.objectContaining({ status: 'noop', reason: 'handled stuck-7-1' }),
    ]));
    await g.releaseAll();
    await Promise.all(backlog);
    expect(a.stats).toEqual({ ran: 3, coalesced: 0, rejected: 1 });
  });

  it('sweeps (red team 15, F1: a flood of them each listed the cluster at once): the same scope coalesces into one running + one waiting; distinct scopes run at most maxSweepsInFlight at once, maxSweepsQueued more wait, the rest get 429', async () => {
    const g = gatedEngine();
    const a = withAdmission(g.engine, { functions: [fn('f', 'Job')], maxInFlight: 32, maxQueued: 512, retryAfterSeconds: 2, maxSweepsInFlight: 2, maxSweepsQueued: 3 });
    const sweep = (id: string, namespace?: string): Trigger => ({ kind: 'sweep', ...(namespace ? { namespace } : {}), meta: { id, source: 's', type: 'dev.knative.sources.ping' } });
    // 1,000 sweeps of one scope, all before it starts: one run answers them all.
    const same = Array.from({ length: 1000 }, (_, i) => a.handle(sweep(`same-${i}`)));
    await tick();
    expect(g.started).toEqual(['same-0']);
    // Distinct scopes: one more runs (2 at once), three more wait (the queue holds 5 scopes), the rest 429.
    const distinct = Array.from({ length: 10 }, (_, i) => a.handle(sweep(`ns-${i}`, `ns-${i}`)));
    await tick();
    expect(g.started).toEqual(['same-0', 'ns-0']);
    const answered = await Promise.all(distinct.slice(4));
    expect(answered.map((o) => o[0]!.status)).toEqual(Array(6).fill('rate-limited'));
    for (let i = 0; i < 10 && g.gates; i++) await g.releaseAll();
    const outs = await Promise.all(same);
    expect(new Set(outs.map((o) => o[0]!.reason))).toEqual(new Set(['handled same-0']));
    expect(g.started.filter((id) => id.startsWith('same-'))).toEqual(['same-0']);
    expect(g.maxRunning).toBe(2);
    // One arriving while its scope runs queues one more run behind it (it may carry news).
    const running = a.handle(sweep('again-0'));
    await tick();
    const later = [a.handle(sweep('again-1')), a.handle(sweep('again-2'))];
    await tick();
    expect(g.started.filter((id) => id.startsWith('again-'))).toEqual(['again-0']);
    for (let i = 0; i < 10 && g.gates; i++) await g.releaseAll();
    await Promise.all([running, ...later]);
    expect(g.started.filter((id) => id.startsWith('again-'))).toEqual(['again-0', 'again-1']);
    await Promise.all(distinct.slice(0, 4));
  });
});
