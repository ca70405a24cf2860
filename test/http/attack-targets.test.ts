/**
 * Red-team checks of 2026-11-24 (a helper given only the code and "make olm-medic write to the
 * wrong object, or crash"). Each test states what SHOULD hold; each failed on main when written:
 *   T1 a catalog Pod event whose spec.nodeName is not a string was answered 500 (refString threw
 *      outside every guard), through either door;
 *   T2 a crafted event whose nodeName ["node-1"] stringifies to a real node's key opened the waiting
 *      run a real event then joined: the real event was answered 2xx ("gone") without a look;
 *   T3 the duplicate filter keyed an event by the uid/resourceVersion it states: a forged event
 *      claiming a resourceVersion not reached yet made the real event at it a "duplicate";
 *   T4 a namespace on a cluster-scoped kind (an Operator "in" namespace x) was accepted and keyed
 *      apart from the real Operator, outside its per-target mutex and coalescing.
 * A second round, on the fixes of the first:
 *   T5 data nested deeper than V8's JSON.stringify goes (~4,500 levels; JSON.parse and the
 *      apiserver take more) made the whole-object digest throw: a 500, and the doors disagreed;
 *   T6 any throw while admission computed a coalescing key let the event run unadmitted: no bound,
 *      no queue limit, never a 429.
 * Found in the final read: T7 when one function's target was invalid, the functions before it had
 * already started their reconciles, which went on after the event's 400.
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import fc from 'fast-check';
import type { AddressInfo } from 'node:net';
import { withAdmission } from '../../shared/http/admission.js';
import type { Outcome } from '../../shared/core/outcome.js';
import { hashJsonText, type AnyFunction } from '../../shared/core/types.js';
import { decodeEvent } from '../../shared/events/decode.js';
import { BadRequest, type Trigger } from '../../shared/events/types.js';
import type { KubeObject, Reader, Ref } from '../../shared/kube/types.js';
import { allFunctions } from '../../functions/index.js';
import { catalogReschedule } from '../../functions/catalog-reschedule/index.js';
import { finalizerCleanup } from '../../functions/finalizer-cleanup/index.js';
import { ownerrefRepair } from '../../functions/ownerref-repair/index.js';
import { testEngine, twoDoors } from '../support/doors.js';

const tick = () => new Promise((r) => setTimeout(r, 0));
const settle = async () => {
  for (let i = 0; i < 20; i++) await tick();
};
const emptyList = () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true as const, value: undefined }) }) });
const noReads = { get: async () => undefined, list: emptyList } as unknown as Reader;

const engineOf = (functions: AnyFunction[], reader: Reader = noReads) => testEngine(functions, reader);

/** Both doors over one engine: the front door (dispatch) and the app alone. */
function doors() {
  const engine = engineOf(allFunctions);
  const { front, app } = twoDoors(engine, allFunctions);
  return { engine, listeners: { 'front door': front, 'app alone': app } };
}

async function post(listener: RequestListener, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const srv = createServer(listener).listen(0);
  await new Promise((r) => srv.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  } finally {
    srv.closeAllConnections();
    srv.close();
  }
}

const ceHeaders = (kind: string, apiVersion: string, name: string, namespace?: string): Record<string, string> => ({
  'content-type': 'application/json',
  'ce-specversion': '1.0',
  'ce-id': 'x1',
  'ce-source': 'https://10.96.0.1:443',
  'ce-type': 'dev.knative.apiserver.resource.update',
  'ce-kind': kind,
  'ce-apiversion': apiVersion,
  'ce-name': name,
  ...(namespace !== undefined ? { 'ce-namespace': namespace } : {}),
});

const catalogPod = (name: string, nodeName: unknown) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'olm', uid: `u-${name}`, resourceVersion: '7', labels: { 'olm.catalogSource': 'cat' } },
  spec: { nodeName },
  status: { conditions: [{ type: 'Ready', status: 'False' }] },
});

describe('T1 a target derived from event data is held to the reference rule', () => {
  it.each([
    ['front door', { toString: null }, 'name (an object) must be a non-empty string'],
    ['app alone', { toString: null }, 'name (an object) must be a non-empty string'],
    ['front door', ['node-1'], 'name (an array) must be a non-empty string'],
    ['app alone', ['node-1'], 'name (an array) must be a non-empty string'],
    ['front door', 'Node_1', 'name "Node_1" must be a DNS-1123 subdomain (lowercase letters, digits, "-" and ".", at most 253 characters)'],
    ['app alone', 7, 'name (a number) must be a non-empty string'],
  ] as const)('%s: spec.nodeName %j is a 400 naming it, never a 5xx', async (door, nodeName, says) => {
    const d = doors();
    try {
      const { status, text } = await post(d.listeners[door], ceHeaders('Pod', 'v1', 'cat-abc', 'olm'), catalogPod('cat-abc', nodeName));
      expect(status, text).toBe(400);
      expect(JSON.parse(text).error).toBe(`dev.knative.apiserver.resource.update data gives catalog-reschedule a target Node ${says}`);
    } finally {
      d.engine.close();
    }
  });

  it('a valid nodeName still reaches the engine (the rule passes what the apiserver writes)', async () => {
    const d = doors();
    try {
      const { status, text } = await post(d.listeners['front door'], ceHeaders('Pod', 'v1', 'cat-abc', 'olm'), catalogPod('cat-abc', 'node-1.example'));
      // No such Node in this empty cluster: gone, a success.
      expect({ status, text }).toEqual({ status: 200, text: '' });
    } finally {
      d.engine.close();
    }
  });
});

function podTrigger(id: string, podName: string, nodeName: unknown): Trigger {
  return decodeEvent({ specversion: '1.0', id, source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.resource.update', datacontenttype: 'application/json', data: catalogPod(podName, nodeName) } as never);
}

describe('T2 coalescing never lets a crafted event answer for a real one', () => {
  it('a crafted event whose nodeName ["node-1"] stringifies to a real key is rejected before admission; the real event that follows is looked at', async () => {
    const nodeReads: string[] = [];
    const gates: (() => void)[] = [];
    let phase = 'A';
    const reader = {
      get: async (ref: Ref) => {
        if (ref.kind !== 'Node') return undefined;
        nodeReads.push(`${ref.name}@${phase}`);
        await new Promise<void>((r) => gates.push(r));
        return { apiVersion: 'v1', kind: 'Node', metadata: { name: ref.name, uid: 'n' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
      },
      list: emptyList,
    } as unknown as Reader;
    const fns = [catalogReschedule];
    const engine = engineOf(fns, reader);
    const a = withAdmission(engine, { functions: fns, maxInFlight: 16, maxQueued: 512, retryAfterSeconds: 2 });
    try {
      const first = a.handle(podTrigger('a', 'cat-a', 'node-1')); // a real event: its run is reading node-1
      await settle();
      const crafted = a.handle(podTrigger('x', 'evil', ['node-1'])).then(
        () => 'answered',
        (e: unknown) => (e instanceof BadRequest ? e.status : e),
      );
      await settle();
      phase = 'L';
      const real = a.handle(podTrigger('l', 'cat-b', 'node-1')); // a new real event about node-1
      await settle();
      for (let i = 0; i < 5; i++) {
        gates.splice(0).forEach((g) => g());
        await settle();
      }
      await first;
      expect({ crafted: await crafted, real: (await real).map((o: Outcome) => o.status), readsAfterRealEvent: nodeReads.filter((r) => r.endsWith('@L')) }).toEqual({
        crafted: 400,
        real: ['noop'],
        readsAfterRealEvent: ['node-1@L'],
      });
    } finally {
      engine.close();
    }
  });
});

const csvAt = (rv: string, phase?: string): KubeObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'op.v1', namespace: 'ns', uid: 'csv-uid', resourceVersion: rv },
  ...(phase ? { status: { phase } } : {}),
});
const csvTrigger = (id: string, obj: KubeObject): Trigger =>
  decodeEvent({ specversion: '1.0', id, source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.resource.update', datacontenttype: 'application/json', data: obj } as never);

describe('T3 the duplicate filter keys an event by everything its object claims', () => {
  it('a forged event claiming a resourceVersion not reached yet does not make the real event at it a duplicate', async () => {
    let live = csvAt('100');
    let reads = 0;
    const reader = {
      get: async () => {
        reads++;
        return live;
      },
      list: emptyList,
    } as unknown as Reader;
    const engine = engineOf([finalizerCleanup], reader);
    try {
      expect((await engine.handle(csvTrigger('forged', csvAt('101')))).map((o) => o.status)).toEqual(['noop']);
      live = csvAt('101', 'Succeeded');
      const before = reads;
      const real = await engine.handle(csvTrigger('real', csvAt('101', 'Succeeded')));
      expect({ real: real.map((o) => o.status), looked: reads > before }).toEqual({ real: ['acted'], looked: true });
      // A redelivery of the real event (the same object) is still a duplicate: nothing read.
      const after = reads;
      expect((await engine.handle(csvTrigger('real-again', csvAt('101', 'Succeeded')))).map((o) => o.reason)).toEqual(['duplicate of an event already handled']);
      expect(reads).toBe(after);
    } finally {
      engine.close();
    }
  });
});

describe('T4 a namespace on a cluster-scoped kind is the event\'s 400', () => {
  const operator = (namespace?: string) => ({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', metadata: { name: 'op', ...(namespace ? { namespace } : {}), uid: 'u', resourceVersion: '1' } });

  it.each(['front door', 'app alone'] as const)('%s: an Operator "in" namespace x is rejected, naming the field', async (door) => {
    const d = doors();
    try {
      const { status, text } = await post(d.listeners[door], ceHeaders('Operator', 'operators.coreos.com/v1', 'op', 'x'), operator('x'));
      expect(status, text).toBe(400);
      expect(JSON.parse(text).error).toBe('dev.knative.apiserver.resource.update data.metadata.namespace "x" must be empty: Operator is cluster-scoped');
    } finally {
      d.engine.close();
    }
  });

  it('the same Operator without one (as the apiserver writes it, ce-namespace empty) is accepted', async () => {
    const d = doors();
    try {
      const { status } = await post(d.listeners['front door'], ceHeaders('Operator', 'operators.coreos.com/v1', 'op', ''), operator());
      expect(status).toBe(200);
    } finally {
      d.engine.close();
    }
  });
});

/** 20,000 nested arrays: 40 KB, which JSON.parse takes and V8's JSON.stringify does not. */
const DEEP = '['.repeat(20_000) + ']'.repeat(20_000);

describe('T5 deeply nested data is digested without recursion', () => {
  const plainJob = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"plain","namespace":"ns","uid":"u1","resourceVersion":"5"},"spec":{"x":${DEEP}}}`;
  const notReadyCatalogPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"cat-abc","namespace":"olm","uid":"u2","resourceVersion":"7","labels":{"olm.catalogSource":"cat"}},"spec":{"nodeName":"node-1","x":${DEEP}},"status":{"conditions":[{"type":"Ready","status":"False"}]}}`;

  it('the premise: JSON.parse takes it, JSON.stringify throws', () => {
    expect(() => JSON.stringify(JSON.parse(plainJob))).toThrow(RangeError);
  });

  it.each([
    ['front door', 'Job', 'batch/v1', 'plain', 'ns', plainJob],
    ['app alone', 'Job', 'batch/v1', 'plain', 'ns', plainJob],
    ['front door', 'Pod', 'v1', 'cat-abc', 'olm', notReadyCatalogPod],
    ['app alone', 'Pod', 'v1', 'cat-abc', 'olm', notReadyCatalogPod],
  ] as const)('%s: a %s with a deep field is answered 200 as without it (the Job: not targeted; the Pod: no such Node, gone)', async (door, kind, apiVersion, name, namespace, body) => {
    const d = doors();
    try {
      const { status, text } = await post(d.listeners[door], ceHeaders(kind, apiVersion, name, namespace), body);
      expect({ status, text }).toEqual({ status: 200, text: '' });
    } finally {
      d.engine.close();
    }
  });

  it('hashJsonText feeds the hash JSON.stringify\'s exact text: for any JSON value, and past the recursion limit', () => {
    const viaStringify = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('base64');
    const viaWalk = (v: unknown) => {
      const h = createHash('sha256');
      hashJsonText(h, v);
      return h.digest('base64');
    };
    fc.assert(
      fc.property(fc.jsonValue(), (text) => {
        const v = JSON.parse(JSON.stringify(text));
        expect(viaWalk(v)).toBe(viaStringify(v));
      }),
      { numRuns: 2000 },
    );
    // Key order, escapes, lone surrogates, -0, a huge number, __proto__ as an own key, >64 KiB text.
    for (const t of ['{"b":1,"a":[true,null,-0,1e400],"2":"x","1":"\\ud800\\n\\u2028"}', '{"__proto__":{"a":1}}', JSON.stringify({ s: 'é'.repeat(70_000), n: [1, [2, [3]]] })]) {
      expect(viaWalk(JSON.parse(t))).toBe(viaStringify(JSON.parse(t)));
    }
    expect(viaWalk(JSON.parse(`{"x":${DEEP}}`))).toBe(createHash('sha256').update(`{"x":${DEEP}}`).digest('base64'));
  });
});

describe('T6 admission bounds hold for every targeted event', () => {
  function subEvent(id: string, name: string, deep: boolean): Trigger {
    const data = JSON.parse(
      `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"${name}","namespace":"ns","uid":"u-${name}"},` +
        `"spec":{"name":"pkg"${deep ? `,"x":${DEEP}` : ''}},"status":{"installPlanRef":{"name":"ip-1","uid":"ip-uid"}}}`,
    );
    return decodeEvent({ specversion: '1.0', id, source: 'https://10.96.0.1:443', type: 'dev.knative.apiserver.resource.update', datacontenttype: 'application/json', data } as never);
  }

  it.each([false, true])('three hinted Subscription events (deep field: %s), 1 slot + 1 queued: one reads at a time, one is 429', async (deep) => {
    const gets: string[] = [];
    const gates: (() => void)[] = [];
    const reader = {
      get: async (ref: Ref) => {
        gets.push(`${ref.kind}/${ref.name}`);
        await new Promise<void>((r) => gates.push(r));
        return undefined;
      },
      list: emptyList,
    } as unknown as Reader;
    const engine = engineOf([ownerrefRepair], reader);
    const admitted = withAdmission(engine, { functions: [ownerrefRepair], maxInFlight: 1, maxQueued: 1, retryAfterSeconds: 2 });
    try {
      const ps = ['a', 'b', 'c'].map((n) => admitted.handle(subEvent(n, `sub-${n}`, deep)));
      await settle();
      const concurrentReads = gets.length;
      for (let i = 0; i < 10; i++) {
        gates.splice(0).forEach((g) => g());
        await settle();
      }
      const statuses = (await Promise.all(ps)).map((o: Outcome[]) => o.map((x) => x.status).join());
      expect({ concurrentReads, statuses: [...statuses].sort() }).toEqual({ concurrentReads: 1, statuses: ['gone', 'gone', 'rate-limited'] });
    } finally {
      engine.close();
    }
  });
});

describe('T7 an event one function finds invalid starts no reconcile of another', () => {
  it('the 400 comes before any look: the valid function\'s observe never runs', async () => {
    const looks: string[] = [];
    const fake = (name: string, target: (t: Trigger & { kind: 'resource' }) => Ref) =>
      ({
        name,
        kinds: ['batch/v1/Job'],
        summary: '',
        defaults: {},
        targets: (t: Trigger & { kind: 'resource' }) => [target(t)],
        sweep: async function* () {},
        observe: async (ref: Ref) => void looks.push(`${name}:${ref.name}`),
        plan: () => ({ kind: 'noop', reason: 'ok' }),
      }) as unknown as AnyFunction;
    const good = fake('good', (t) => t.ref);
    const bad = fake('bad', (t) => ({ ...t.ref, name: 'Not_A_Name' }));
    const engine = engineOf([good, bad]);
    try {
      const job: Trigger = { kind: 'resource', verb: 'update', mode: 'resource', ref: { apiVersion: 'batch/v1', kind: 'Job', name: 'j', namespace: 'ns' }, object: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'ns', uid: 'u', resourceVersion: '1' } }, meta: { id: 'i', source: 's', type: 'dev.knative.apiserver.resource.update' } };
      const answer = await engine.handle(job).then(
        () => 'handled',
        (e: unknown) => (e instanceof BadRequest ? `${e.status} ${e.message}` : e),
      );
      await settle();
      expect({ answer, looks }).toEqual({ answer: expect.stringMatching(/^400 .*gives bad a target Job name "Not_A_Name"/), looks: [] });
    } finally {
      engine.close();
    }
  });
});
