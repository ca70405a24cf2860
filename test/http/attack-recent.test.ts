/**
 * Red-team checks of the recent changes (per-part admission, catalog-reschedule's Ready-pod filter),
 * written by a helper given only the code. Each test states what SHOULD hold; each failed on main
 * when written (a 500 from a crafted condition list; a new event answered 2xx without a look after
 * joining a waiting redelivered copy, whole or per part).
 */
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withAdmission } from '../../shared/http/admission.js';
import type { Outcome } from '../../shared/core/outcome.js';
import type { AnyFunction } from '../../shared/core/types.js';
import type { ResourceTrigger, Trigger } from '../../shared/events/types.js';
import type { Reader, Ref } from '../../shared/kube/types.js';
import { allFunctions } from '../../functions/index.js';
import { testEngine, twoDoors } from '../support/doors.js';

const tick = () => new Promise((r) => setTimeout(r, 0));
const settle = async () => {
  for (let i = 0; i < 20; i++) await tick();
};

const noReads: Reader = {
  get: async () => {
    throw new Error('no apiserver here');
  },
  list: () => ({
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        throw new Error('no apiserver here');
      },
    }),
  }),
} as unknown as Reader;

const alwaysNoop = async (fn: string, plan: { kind: string; reason?: string }, target: string) => ({ function: fn, target, status: 'noop', reason: plan.reason ?? plan.kind });
const engineOf = (functions: AnyFunction[], reader: Reader = noReads) => testEngine(functions, reader, { execute: alwaysNoop });

describe('front door + catalog-reschedule targets (c8f14b0)', () => {
  it('a crafted catalog Pod event whose status.conditions holds a null is a 4xx or a 2xx, never a 5xx the Broker retries then dead-letters', async () => {
    const engine = engineOf(allFunctions);
    const dispatch = twoDoors(engine, allFunctions).front;
    const srv = createServer(dispatch).listen(0);
    await new Promise((r) => srv.once('listening', r));
    try {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'cat-abc', namespace: 'olm', uid: 'u1', resourceVersion: '7', labels: { 'olm.catalogSource': 'cat' } },
        spec: { nodeName: 'node-1' },
        status: { conditions: [null] },
      };
      const body = JSON.stringify(pod);
      const res = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': 'x1',
          'ce-source': 'https://10.96.0.1:443',
          'ce-type': 'dev.knative.apiserver.resource.update',
          'ce-kind': 'Pod',
          'ce-apiversion': 'v1',
          'ce-name': 'cat-abc',
          'ce-namespace': 'olm',
        },
        body,
      });
      const text = await res.text();
      // A 400 naming the field: the Broker does not retry it, and the sender learns what is wrong.
      expect(res.status, text).toBe(400);
      expect(text).toContain('data.status.conditions must be a list of condition objects');
    } finally {
      srv.closeAllConnections();
      srv.close();
      engine.close();
    }
  });
});

/** A fake function over Jobs whose observe() waits until the test releases it, recording each look. */
function gatedFn(name: string, pick: (r: Ref) => boolean) {
  const looks: string[] = [];
  const gates: (() => void)[] = [];
  const fn = {
    name,
    kinds: ['batch/v1/Job'],
    summary: '',
    defaults: {},
    targets: (t: ResourceTrigger) => (pick(t.ref) ? [t.ref] : []),
    sweep: async function* () {},
    observe: async (ref: Ref) => {
      looks.push(`${ref.name}@${clock.step}`);
      await new Promise<void>((r) => gates.push(r));
      return { ref };
    },
    plan: () => ({ kind: 'noop', reason: 'ok' }),
  } as unknown as AnyFunction;
  return { fn, looks, release: () => gates.splice(0).forEach((g) => g()), get pending() { return gates.length; } };
}
const clock = { step: 0 };

const job = (name: string, rv: string, id = `${name}-${rv}`): Trigger => ({
  kind: 'resource',
  verb: 'update',
  mode: 'resource',
  ref: { apiVersion: 'batch/v1', kind: 'Job', name, namespace: 'ns' },
  object: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'ns', uid: 'u', resourceVersion: rv } },
  meta: { id, source: 's', type: 'dev.knative.apiserver.resource.update' },
});

describe('admission + per-part duplicate detection (82b2aff)', () => {
  it('a new event that joins a waiting run of a REDELIVERED (duplicate) event is still looked at after it arrived', async () => {
    clock.step = 0;
    const f = gatedFn('f', () => true);
    const a = withAdmission(engineOf([f.fn]), { functions: [f.fn], maxInFlight: 16, maxQueued: 512, retryAfterSeconds: 2 });
    const x = a.handle(job('j', '1')); // runs: its look is taken now (step 0)
    await settle();
    const xAgain = a.handle(job('j', '1')); // the Broker redelivers it (its answer timed out): waits behind the running one
    clock.step = 1;
    const e = a.handle(job('j', '2')); // NEW state (rv 2): coalesced into the waiting run
    await settle();
    f.release();
    await settle();
    f.release();
    await settle();
    const [ox, oxa, oe] = await Promise.all([x, xAgain, e]);
    expect(ox[0]!.status).toBe('noop');
    expect(oxa).toBe(oe); // shared answer
    // The event with rv 2 arrived after the only look (step 0): some look must start after it.
    expect({ answer: oe.map((o: Outcome) => o.status), looks: f.looks }).toEqual({ answer: ['noop'], looks: ['j@0', 'j@1'] });
  });

  it('per-part variant: after a partial 429 the redelivery is a duplicate for the part that succeeded; a new event joining that part is answered 2xx unseen', async () => {
    clock.step = 0;
    const fa = gatedFn('a', (r) => r.name === 'j');
    const fb = gatedFn('b', () => true); // targets every Job, has a backlog
    const fns = [fa.fn, fb.fn];
    const a = withAdmission(engineOf(fns), { functions: fns, maxInFlight: 1, maxQueued: 1, retryAfterSeconds: 1 });
    const backlog = Promise.all([a.handle(job('k1', '1')), a.handle(job('k2', '1'))]); // b full: one running, one waiting
    await settle();
    const e1 = a.handle(job('j', '1')); // a runs, b: 429
    await settle();
    fa.release();
    expect((await e1).map((o: Outcome) => o.status).sort()).toEqual(['noop', 'rate-limited']); // HTTP 429 -> redelivered later
    const e2 = a.handle(job('j', '2')); // another change: a runs (look at step 0), b 429
    await settle();
    const e1again = a.handle(job('j', '1')); // the Broker's retry of e1: a's part waits (a duplicate of e1's a part)
    fb.release(); // b's backlog drains
    await settle();
    fb.release();
    await backlog;
    clock.step = 1;
    const e3 = a.handle(job('j', '3')); // NEW change: a's part joins the waiting duplicate, b's part runs
    await settle();
    for (let i = 0; i < 5; i++) {
      fa.release();
      fb.release();
      await settle();
    }
    await Promise.all([e2, e1again]);
    const o3 = await e3;
    const lookedAfterE3 = fa.looks.filter((l) => l.endsWith('@1'));
    // e3 is answered 2xx (ignored + noop): the Broker never redelivers it. a must have looked at j after e3 arrived.
    expect({ answer: o3.map((o: Outcome) => o.status), aLooksAfterE3: lookedAfterE3 }).toEqual({ answer: expect.anything(), aLooksAfterE3: ['j@1'] });
  });
});
