import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { pino } from 'pino';
import { CloudEvent, HTTP } from 'cloudevents';
import { createApp } from '../../shared/http/app.js';
import { createMetrics } from '../../shared/http/metrics.js';
import type { Engine } from '../../shared/core/engine.js';
import type { Outcome } from '../../shared/core/outcome.js';
import type { Trigger } from '../../shared/events/types.js';

/** A stub Engine: records triggers, answers with whatever `next` says (or throws). */
class StubEngine implements Engine {
  triggers: Trigger[] = [];
  next: Outcome[] | (() => Outcome[] | Promise<Outcome[]>) = [];
  async handle(trigger: Trigger): Promise<Outcome[]> {
    this.triggers.push(trigger);
    return typeof this.next === 'function' ? this.next() : this.next;
  }
  async reconcile(): Promise<Outcome> {
    throw new Error('reconcile is not used by the HTTP edge');
  }
  /** Kinds the stub claims nobody handles (the fast path answers those without the engine). */
  unwanted = new Set<string>();
  wants(apiVersion: string, kind: string): boolean {
    return !this.unwanted.has(`${apiVersion}/${kind}`);
  }
  isDuplicate(): boolean {
    return false;
  }
  trackLooks(): void {}
  async drain(): Promise<{ looks: Map<string, Outcome[]>; pending: string[] }> {
    return { looks: new Map(), pending: [] };
  }
  close(): void {}
}

const BODY_LIMIT = 2048;
const engine = new StubEngine();
const metrics = createMetrics();
let ready = true;
let srv: Server;
let base: string;

beforeAll(async () => {
  const app = createApp({ engine, metrics, log: pino({ level: 'silent' }), bodyLimitBytes: BODY_LIMIT, ready: () => ready });
  srv = app.listen(0);
  await new Promise<void>((resolve) => srv.once('listening', resolve));
  base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
});

afterAll(async () => {
  srv.closeAllConnections();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
});

beforeEach(() => {
  engine.triggers = [];
  engine.next = [];
  engine.unwanted.clear();
  ready = true;
});

// ---------------------------------------------------------------------------------------------

const APISERVER = 'https://10.96.0.1:443';

function jobEvent(verb: 'add' | 'update' | 'delete' = 'update'): CloudEvent<unknown> {
  return new CloudEvent<unknown>({
    type: `dev.knative.apiserver.resource.${verb}`,
    source: APISERVER,
    subject: '/apis/batch/v1/namespaces/olm/jobs/unpack-abc',
    datacontenttype: 'application/json',
    kind: 'Job',
    name: 'unpack-abc',
    namespace: 'olm',
    apiversion: 'batch/v1',
    data: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'unpack-abc', namespace: 'olm', uid: 'u1' } },
  });
}

function message(ev: CloudEvent<unknown>, mode: 'binary' | 'structured'): { headers: Record<string, string>; body: string } {
  const m = mode === 'binary' ? HTTP.binary(ev) : HTTP.structured(ev);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers)) headers[k] = String(v);
  const body = m.body === undefined || m.body === null ? '' : typeof m.body === 'string' ? m.body : JSON.stringify(m.body);
  return { headers, body };
}

async function post(headers: Record<string, string>, body: string | Uint8Array, path = '/'): Promise<Response> {
  return fetch(`${base}${path}`, { method: 'POST', headers, body });
}

async function send(ev: CloudEvent<unknown>, mode: 'binary' | 'structured' = 'binary', extra: Record<string, string> = {}): Promise<Response> {
  const m = message(ev, mode);
  return post({ ...m.headers, ...extra }, m.body);
}

async function expectJsonError(res: Response, status: number, pattern: RegExp): Promise<{ error: string; status: number }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { error: string; status: number };
  expect(body.status).toBe(status);
  expect(typeof body.error).toBe('string');
  expect(body.error).toMatch(pattern);
  return body;
}

// ---------------------------------------------------------------------------------------------

describe('POST / with CloudEvents', () => {
  it.each(['binary', 'structured'] as const)('%s mode: the decoded trigger reaches engine.handle', async (mode) => {
    const ev = jobEvent('update');
    engine.next = [{ function: 'job-conflict', target: 'Job olm/unpack-abc', status: 'noop', reason: 'fine' }];
    const res = await send(ev, mode);
    expect(res.status).toBe(200);
    expect(engine.triggers).toHaveLength(1);
    expect(engine.triggers[0]).toMatchObject({
      kind: 'resource',
      verb: 'update',
      mode: 'resource',
      ref: { apiVersion: 'batch/v1', kind: 'Job', name: 'unpack-abc', namespace: 'olm' },
      meta: { id: ev.id, source: APISERVER, type: 'dev.knative.apiserver.resource.update', subject: '/apis/batch/v1/namespaces/olm/jobs/unpack-abc' },
    });
  });

  it('a PingSource tick reaches the engine as a sweep', async () => {
    const ev = new CloudEvent<unknown>({ type: 'dev.knative.sources.ping', source: '/apis/v1/namespaces/ns/pingsources/sweep', datacontenttype: 'application/json', data: '{"functions":["job-conflict"]}' });
    const res = await send(ev);
    expect(res.status).toBe(200);
    expect(engine.triggers[0]).toMatchObject({ kind: 'sweep', functions: ['job-conflict'] });
  });

  it('a foreign event is answered 200 with an empty body', async () => {
    const ev = new CloudEvent<unknown>({ type: 'com.example.other', source: '/x', data: 'hi' });
    const res = await send(ev);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(engine.triggers[0]?.kind).toBe('foreign');
  });

  it.each(['acted', 'dry-run', 'noop', 'refused', 'deferred', 'gone', 'ignored'] as const)(
    'outcome %s: 200 with an EMPTY body and an olm-medic-outcome header',
    async (status) => {
      engine.next = [
        { function: 'f', target: 't1', status, reason: 'r' },
        { function: 'f', target: 't2', status, reason: 'r' },
      ];
      const res = await send(jobEvent());
      expect(res.status).toBe(200);
      // A Broker treats a non-empty, non-CloudEvent 2xx body as a failed delivery.
      expect(await res.text()).toBe('');
      expect(res.headers.get('content-length') ?? '0').toBe('0');
      expect(res.headers.get('ce-id')).toBeNull();
      expect(res.headers.get('olm-medic-outcome')).toBe(`${status}=2`);
    },
  );

  it('requeued: 202 with an empty body', async () => {
    engine.next = [{ status: 'requeued', reason: 'fence', requeueAfterSeconds: 10 }];
    const res = await send(jobEvent());
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    expect(res.headers.get('olm-medic-outcome')).toBe('requeued=1');
  });

  it('the outcome header summarises mixed outcomes', async () => {
    engine.next = [
      { status: 'acted', reason: 'a' },
      { status: 'noop', reason: 'b' },
      { status: 'acted', reason: 'c' },
    ];
    const res = await send(jobEvent());
    expect(res.status).toBe(200);
    expect(res.headers.get('olm-medic-outcome')).toBe('acted=2 noop=1');
    expect(await res.text()).toBe('');
  });

  it('olm-medic-report: json gives the outcomes as a JSON body', async () => {
    const outcomes: Outcome[] = [
      { function: 'job-conflict', target: 'Job olm/unpack-abc', status: 'acted', reason: 'deleted', actions: [{ verb: 'delete', target: 'Job olm/unpack-abc', reason: 'UnpackJobDeleted', result: 'done' }] },
      { function: 'other', status: 'noop', reason: 'fine' },
    ];
    engine.next = outcomes;
    const res = await send(jobEvent(), 'binary', { 'olm-medic-report': 'json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: 'acted', outcomes });
  });

  it('olm-medic-report: json keeps the error status code', async () => {
    engine.next = [{ status: 'transient', reason: 'apiserver 503' }];
    const res = await send(jobEvent(), 'structured', { 'olm-medic-report': 'json' });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'transient', outcomes: [{ status: 'transient', reason: 'apiserver 503' }] });
  });

  it('transient → 503 with Retry-After and a JSON error', async () => {
    engine.next = [
      { function: 'job-conflict', target: 'Job olm/x', status: 'transient', reason: 'apiserver unavailable' },
      { function: 'job-conflict', target: 'Job olm/y', status: 'acted', reason: 'ok' },
    ];
    const res = await send(jobEvent());
    expect(res.headers.get('retry-after')).toBe('1');
    const body = await expectJsonError(res, 503, /apiserver unavailable/);
    expect(body.error).toContain('job-conflict Job olm/x');
    expect(res.headers.get('olm-medic-outcome')).toBe('transient=1 acted=1');
  });

  it('rate-limited → 429 with Retry-After from the outcome', async () => {
    engine.next = [{ function: 'f', status: 'rate-limited', reason: 'budget used up', requeueAfterSeconds: 17 }];
    const res = await send(jobEvent());
    expect(res.headers.get('retry-after')).toBe('17');
    await expectJsonError(res, 429, /budget used up/);
  });

  it('rate-limited without a delay → Retry-After 30', async () => {
    engine.next = [{ status: 'rate-limited', reason: 'budget' }];
    const res = await send(jobEvent());
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('30');
  });

  it('failed → 500 with a JSON error and no Retry-After', async () => {
    engine.next = [{ function: 'f', target: 't', status: 'failed', reason: 'forbidden: RBAC' }];
    const res = await send(jobEvent());
    expect(res.headers.get('retry-after')).toBeNull();
    await expectJsonError(res, 500, /forbidden: RBAC/);
  });

  it('engine throwing → 500, and the server keeps answering', async () => {
    engine.next = () => {
      throw new Error('boom in engine');
    };
    const res = await send(jobEvent());
    await expectJsonError(res, 500, /boom in engine/);
    engine.next = () => Promise.reject(new Error('async boom'));
    await expectJsonError(await send(jobEvent()), 500, /async boom/);
    engine.next = [{ status: 'acted', reason: 'ok' }];
    const ok = await send(jobEvent());
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('');
    expect((await fetch(`${base}/health/liveness`)).status).toBe(200);
  });
});

describe('POST / events of kinds no function handles', () => {
  // Answered from the headers under the front door's own envelope rule (envelope.ts); what the rule
  // does not vouch for is decoded and validated in full (the app once had a looser header check of
  // its own that answered 200 to envelopes the SDK rejects, e.g. an empty subject).
  it('a binary-mode event whose envelope the rule vouches for is answered from its headers, without the engine and with an empty body', async () => {
    engine.unwanted.add('batch/v1/Job');
    const res = await send(jobEvent());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(res.headers.get('olm-medic-outcome')).toBe('ignored=1');
    expect(engine.triggers).toHaveLength(0);
  });

  it('structured-mode events and kinds a function handles are still decoded', async () => {
    engine.unwanted.add('batch/v1/Job');
    const structured = await send(jobEvent(), 'structured');
    expect(structured.status).toBe(200);
    expect(engine.triggers).toHaveLength(1); // structured: the kind is only known after parsing
    engine.unwanted.clear();
    await send(jobEvent());
    expect(engine.triggers).toHaveLength(2);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['an empty subject', { 'ce-subject': '' }, /subject/],
    ['a source that is not a URI reference', { 'ce-source': '::not a uri' }, /source/],
    ['an extension named validate', { 'ce-validate': 'x' }, /validate/],
  ])('get the same 400 as any other kind for %s', async (_what, extra, named) => {
    engine.unwanted.add('batch/v1/Job');
    const m = message(jobEvent(), 'binary');
    await expectJsonError(await post({ ...m.headers, ...extra }, m.body), 400, named);
    expect(engine.triggers).toHaveLength(0);
  });

  it('do not bypass validation of the required attributes or the body limit', async () => {
    engine.unwanted.add('batch/v1/Job');
    const m = message(jobEvent(), 'binary');
    const { 'ce-id': _id, ...noId } = m.headers;
    await expectJsonError(await post(noId, m.body), 400, /ce-id/);
    await expectJsonError(await post(m.headers, 'x'.repeat(BODY_LIMIT + 10)), 413, /limit/);
  });
});

describe('POST / rejections', () => {
  const binary = (type = 'dev.knative.apiserver.resource.add'): Record<string, string> => ({
    'ce-specversion': '1.0',
    'ce-id': 'r-1',
    'ce-source': APISERVER,
    'ce-type': type,
    'content-type': 'application/json',
  });

  it.each<[string, Record<string, string>, string, number, RegExp]>([
    ['plain JSON without ce headers', { 'content-type': 'application/json' }, '{"a":1}', 400, /not a CloudEvent/],
    ['no content type, no body', {}, '', 400, /not a CloudEvent/],
    ['batch content mode', { 'content-type': 'application/cloudevents-batch+json' }, '[]', 400, /batch/],
    ['structured body not JSON', { 'content-type': 'application/cloudevents+json' }, '{oops', 400, /invalid CloudEvent/],
    ['missing ce-source', { 'ce-specversion': '1.0', 'ce-id': 'x', 'ce-type': 't', 'content-type': 'application/json' }, '{}', 400, /source/],
    ['Resource data missing metadata.name', binary(), '{"apiVersion":"v1","kind":"Pod","metadata":{}}', 400, /metadata\.name/],
    ['data not JSON', binary(), '{"apiVersion":', 400, /JSON/],
    ['data a JSON array', binary(), '[]', 400, /JSON object/],
    ['Reference data missing kind', binary('dev.knative.apiserver.ref.add'), '{"apiVersion":"v1","name":"p","namespace":"n"}', 400, /missing kind/],
    ['extension mismatch', { ...binary(), 'ce-kind': 'Job' }, '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}', 400, /extension kind="Job"/],
    ['namespaced kind without a namespace', binary(), '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}', 400, /namespace is missing/],
    ['name with selector syntax', binary(), '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p,a=b","namespace":"n"}}', 400, /name "p,a=b" must be a DNS-1123 subdomain/],
    ['ownerReferences not a list of references', binary(), '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","ownerReferences":[null]}}', 400, /ownerReferences/],
    ['finalizers not a list of strings', binary(), '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","finalizers":1}}', 400, /finalizers/],
    ['text/plain apiserver data', { ...binary(), 'content-type': 'text/plain' }, '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}', 415, /text\/plain/],
    ['sweep functions not an array', { ...binary('dev.knative.sources.ping') }, '{"functions":"x"}', 400, /data\.functions/],
  ])('%s → %i JSON error naming the problem', async (_name, headers, body, status, pattern) => {
    const res = await post(headers, body);
    await expectJsonError(res, status, pattern);
    expect(engine.triggers).toHaveLength(0);
  });

  it('a body over the limit → 413 naming the limit', async () => {
    const big = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', annotations: { big: 'x'.repeat(4096) } } });
    const res = await post(binary(), big);
    await expectJsonError(res, 413, /2048 bytes/);
    expect(engine.triggers).toHaveLength(0);
  });

  it('a body exactly at the limit is accepted', async () => {
    const base = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n', annotations: { pad: '' } } };
    const pad = BODY_LIMIT - Buffer.byteLength(JSON.stringify(base));
    const body = JSON.stringify({ ...base, metadata: { ...base.metadata, annotations: { pad: 'x'.repeat(pad) } } });
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT);
    const res = await post(binary(), body);
    expect(res.status).toBe(200);
  });

  it('a gzip body is inflated before decoding', async () => {
    const body = gzipSync(Buffer.from('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}'));
    const res = await post({ ...binary(), 'content-encoding': 'gzip' }, body);
    expect(res.status).toBe(200);
    expect(engine.triggers[0]).toMatchObject({ kind: 'resource', ref: { name: 'p' } });
  });

  it('an unknown content-encoding → 415 JSON', async () => {
    const res = await post({ ...binary(), 'content-encoding': 'snappy' }, '{}');
    await expectJsonError(res, 415, /encoding/);
  });

  it('a corrupt gzip body → 4xx JSON', async () => {
    const res = await post({ ...binary(), 'content-encoding': 'gzip' }, 'not gzip at all');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as { error: string; status: number };
    expect(body.status).toBe(res.status);
    expect(body.error).toMatch(/body/);
  });

  // BUG (decode.ts): specversion other than "1.0" skips CloudEvent validation (validate() returns
  // false instead of throwing), so a nonsense structured event is accepted and sent to the engine.
  it('a structured event with specversion 2.0 and no id/source/type is rejected with 400', async () => {
    const res = await post({ 'content-type': 'application/cloudevents+json' }, '{"specversion":"2.0"}');
    expect(res.status).toBe(400);
  });
});

describe('other routes', () => {
  it('GET / → 405 with Allow: POST', async () => {
    const res = await fetch(`${base}/`);
    expect(res.headers.get('allow')).toBe('POST');
    await expectJsonError(res, 405, /POST/);
  });

  it('PUT / → 405', async () => {
    const res = await fetch(`${base}/`, { method: 'PUT', body: 'x' });
    expect(res.status).toBe(405);
  });

  it('POST /other → 404 JSON', async () => {
    const m = message(jobEvent(), 'binary');
    const res = await post(m.headers, m.body, '/other');
    await expectJsonError(res, 404, /POST \//);
    expect(engine.triggers).toHaveLength(0);
  });

  it('/health/liveness → 200 OK', async () => {
    const res = await fetch(`${base}/health/liveness`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });

  it('/health/readiness → 200 OK, or 503 when not ready', async () => {
    let res = await fetch(`${base}/health/readiness`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
    ready = false;
    res = await fetch(`${base}/health/readiness`);
    expect(res.status).toBe(503);
    await res.text();
  });

  it('/metrics exposes olm_medic_cloudevents_total after an event', async () => {
    engine.next = [{ status: 'acted', reason: 'ok' }];
    expect((await send(jobEvent('delete'))).status).toBe(200);
    await expectJsonError(await post({ 'content-type': 'application/json' }, '{}'), 400, /not a CloudEvent/);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('# TYPE olm_medic_cloudevents_total counter');
    expect(text).toMatch(/olm_medic_cloudevents_total\{type="dev\.knative\.apiserver\.resource\.delete",kind="Job",outcome="acted"\} [1-9]/);
    expect(text).toMatch(/olm_medic_cloudevents_total\{type="other",kind="",outcome="rejected-400"\} [1-9]/);
    expect(text).toContain('olm_medic_cloudevent_duration_seconds_bucket');
  });

  it('metric label values come from a fixed set: 500 distinct types and kinds add at most a few series', async () => {
    const series = async (): Promise<number> => (await (await fetch(`${base}/metrics`)).text()).split('\n').filter((l) => l.startsWith('olm_medic_cloudevents_total{')).length;
    const before = await series();
    for (let i = 0; i < 250; i++) {
      engine.unwanted.add(`v1/Kind${i}`);
      engine.next = [{ status: 'ignored', reason: 'x' }];
      const ev = jobEvent('update').cloneWith({ type: `com.example.t${i}`, kind: `Kind${i}`, apiversion: 'v1' } as never);
      await send(ev);
      // an unwanted kind through the header fast path and through the full path (structured mode)
      await send(jobEvent('update').cloneWith({ kind: `Kind${i}`, apiversion: 'v1', data: { apiVersion: 'v1', kind: `Kind${i}`, metadata: { name: 'x', namespace: 'olm' } } } as never));
      await post({ 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', id: `i${i}`, source: 's', type: `bad.${i}`, data: 1 }));
    }
    const added = (await series()) - before;
    expect(added).toBeLessThanOrEqual(6);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).not.toMatch(/Kind\d|com\.example|bad\.\d/);
  }, 60_000);
});

describe('property: random input never gets a 5xx', () => {
  it('answers only 2xx or 4xx, with a JSON error body on every 4xx', async () => {
    const token = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-.+/;= '.split('')), maxLength: 30 });
    const contentType = fc.oneof(
      fc.constantFrom(
        'application/json',
        'application/cloudevents+json',
        'application/cloudevents+json; charset=utf-8',
        'application/cloudevents-batch+json',
        'text/plain',
        'application/octet-stream',
        'application/json; charset=latin1',
        'multipart/form-data; boundary=x',
      ),
      token,
    );
    const ceType = fc.constantFrom(
      'dev.knative.apiserver.resource.add',
      'dev.knative.apiserver.ref.update',
      'dev.knative.apiserver.resource.delete',
      'dev.knative.sources.ping',
      'io.olm-medic.sweep',
      'com.example.other',
    );
    const ceHeaders = fc.record(
      {
        'ce-specversion': fc.constantFrom('1.0', '0.3', '2.0', ''),
        'ce-id': fc.oneof(fc.uuid(), token),
        'ce-source': fc.constantFrom(APISERVER, '/x', ''),
        'ce-type': fc.oneof(ceType, token),
        'ce-kind': fc.constantFrom('Job', 'Pod', ''),
        'ce-name': token,
        'ce-namespace': fc.constantFrom('olm', ''),
      },
      { requiredKeys: [] },
    );
    const contentEncoding = fc.option(fc.constantFrom('identity', 'gzip', 'deflate', 'br', 'snappy'), { nil: undefined });
    const body = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.json({ maxDepth: 3 }),
      fc.constantFrom(
        '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"olm"}}',
        '{"apiVersion":"v1","kind":"Pod","name":"p","namespace":"olm"}',
        '{"specversion":"1.0","id":"x","source":"s","type":"dev.knative.apiserver.resource.add","data":{}}',
        '{"functions":["job-conflict"]}',
      ),
      fc.string({ minLength: BODY_LIMIT, maxLength: BODY_LIMIT + 200 }),
    );
    engine.next = [{ status: 'noop', reason: 'stub' }];
    await fc.assert(
      fc.asyncProperty(contentType, ceHeaders, contentEncoding, body, async (ct, ce, enc, b) => {
        const headers: Record<string, string> = { 'content-type': ct, ...ce };
        if (enc) headers['content-encoding'] = enc;
        const res = await post(headers, b);
        const text = await res.text();
        expect([2, 4]).toContain(Math.floor(res.status / 100));
        if (res.status >= 400) {
          expect(res.headers.get('content-type')).toMatch(/^application\/json/);
          const parsed = JSON.parse(text) as { error: unknown; status: unknown };
          expect(parsed.status).toBe(res.status);
          expect(typeof parsed.error).toBe('string');
        } else {
          expect(text).toBe('');
        }
      }),
      { numRuns: 200 },
    );
  });
});
