/**
 * Property-based fuzzing (fast-check, fixed seed) of CloudEvent requests against the REAL server
 * process (dist/server.mjs as the shipped ServiceAccount, connected to the control plane): random
 * and garbage ce-* headers, content types (charset variants, cloudevents+json, batch, text/plain,
 * missing), binary/structured/batch content modes, near-valid ApiServerSource events with fields
 * removed or mistyped, random JSON, invalid UTF-8, bodies up to ~2 MB around the 1 MB limit,
 * deeply nested JSON, and content encodings (gzip, deflate, identity, mislabelled, unknown).
 *
 * Some events name real decoy objects (test/support/invariants.ts) with data that lies about their
 * state (a running Job "Failed", a Ready node "NotReady", a live CSV "being deleted", ...): the
 * functions decide from what they read, so nothing may happen to them.
 *
 * Properties: never a 5xx; the process never dies; every 4xx carries a JSON body with a non-empty
 * `error` message; every 2xx has an empty body (a Broker treats anything else as a failure);
 * afterwards the decoys are untouched and the audit log shows no unsafe write.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject } from '../../shared/kube/types.js';
import { AuditLog, auditNow, createDecoys, decoyViolations, takeBaseline, unsafeActions, type Decoys, type SafetyBaseline } from '../support/invariants.js';
import { startServer, type RunningServer } from '../support/server.js';

const cp = inject('controlPlane');
const admin = createKube(loadKubeConfig(cp.adminKubeconfig));
const audit = new AuditLog(cp.auditLog);
const FUZZ_SEED = 20_261_121;
const LIMIT = 1_048_576; // BODY_LIMIT_BYTES default
let server: RunningServer;
let decoys: Decoys;
let baseline: SafetyBaseline;
let since: string;
/** Real decoy objects that lying events name (filled before the property runs). */
const lieTargets: KubeObject[] = [];

beforeAll(async () => {
  server = await startServer({ KUBECONFIG: cp.shippedKubeconfig, LOG_LEVEL: 'fatal', OLM_MEDIC_FINALIZER_CLEANUP_ORPHAN_GRACE_SECONDS: '0' });
  decoys = await createDecoys(admin, 'fuzz01');
  baseline = await takeBaseline(admin, decoys.namespaces);
  since = auditNow();
  lieTargets.push(...decoys.events().map((e) => e.data as KubeObject));
});

afterAll(async () => {
  await server?.stop();
});

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

type Json = unknown;
interface FuzzRequest {
  /** Content mode and body family, for the summary. */
  category: string;
  label: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

const printable = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&\'()*+,;= "{}<>\\^`|%'.split('')), maxLength: 40 });
const dnsName = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,30}[a-z0-9])?$/);

const KINDS: [string, string][] = [
  ['batch/v1', 'Job'],
  ['v1', 'Pod'],
  ['v1', 'Node'],
  ['operators.coreos.com/v1alpha1', 'Subscription'],
  ['operators.coreos.com/v1alpha1', 'InstallPlan'],
  ['operators.coreos.com/v1alpha1', 'ClusterServiceVersion'],
  ['operators.coreos.com/v1', 'Operator'],
  ['v1', 'ConfigMap'],
  ['example.com/v1', 'Widget'],
];

/** A plausible Kubernetes object, in namespaces that do not exist (so nothing real is touched). */
const kubeObject: fc.Arbitrary<KubeObject> = fc
  .record({
    kv: fc.constantFrom(...KINDS),
    name: fc.oneof(dnsName, fc.constant('db9d6464a8388291b487cfe4b9e6eeb097ae7568ac05ab044e8255d5f708093')),
    namespace: fc.constantFrom('fuzz-nowhere', 'kube-system', ''),
    uid: fc.uuid(),
    rv: fc.nat({ max: 1_000_000 }).map(String),
    labels: fc.option(fc.dictionary(fc.constantFrom('olm.catalogSource', 'olm.managed', 'olm.owner', 'olm.owner.kind', 'olm.owner.namespace', 'app'), dnsName, { maxKeys: 3 }), { nil: undefined }),
    deleting: fc.boolean(),
    finalizers: fc.option(fc.subarray(['olm-medic.io/csv-cleanup', 'operators.coreos.com/csv-cleanup', 'x/y']), { nil: undefined }),
    spec: fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
    status: fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
  })
  .map(({ kv, name, namespace, uid, rv, labels, deleting, finalizers, spec, status }) => ({
    apiVersion: kv[0],
    kind: kv[1],
    metadata: {
      name,
      ...(namespace && kv[1] !== 'Node' && kv[1] !== 'Operator' ? { namespace } : {}),
      uid,
      resourceVersion: rv,
      ...(labels ? { labels } : {}),
      ...(deleting ? { deletionTimestamp: new Date().toISOString() } : {}),
      ...(finalizers ? { finalizers } : {}),
    },
    ...(spec !== undefined ? { spec } : {}),
    ...(status !== undefined ? { status } : {}),
  }));

const plural = (kind: string): string => `${kind.toLowerCase()}${kind.endsWith('s') ? 'es' : 's'}`;

const t = (): string => new Date(Date.now() - 3 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const LIES: Record<string, (o: any) => void> = {
  none: () => {},
  failed: (o) => void (o.status = { failed: 4, startTime: t(), conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', lastTransitionTime: t() }] }),
  notReady: (o) => void (o.status = { conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: t() }] }),
  deleting: (o) => void Object.assign(o.metadata, { deletionTimestamp: t(), finalizers: ['olm-medic.io/csv-cleanup'] }),
  unlabelled: (o) => void (o.metadata.labels = {}),
  stuck: (o) => void (o.status = { conditions: [{ type: 'BundleUnpackFailed', status: 'True', lastTransitionTime: t() }] }),
  otherNode: (o) => void (o.spec = { ...(o.spec ?? {}), nodeName: 'fuzz-nowhere-node' }),
  noUid: (o) => void delete o.metadata.uid,
};

/** An event about a real decoy object whose data lies about its state. */
const lyingEvent: fc.Arbitrary<Record<string, Json>> = fc
  .record({ i: fc.nat(), verb: fc.constantFrom('add', 'update', 'delete'), lies: fc.subarray(Object.keys(LIES), { minLength: 1, maxLength: 3 }), id: fc.uuid() })
  .map(({ i, verb, lies, id }) => {
    const obj = structuredClone(lieTargets[i % Math.max(1, lieTargets.length)]) as any;
    if (!obj) return { specversion: '1.0', id, source: '/fuzz', type: 'com.example.none' };
    for (const l of lies) LIES[l]!(obj);
    const ns = obj.metadata.namespace ?? '';
    return {
      specversion: '1.0',
      id,
      source: 'https://10.96.0.1:443',
      type: `dev.knative.apiserver.resource.${verb}`,
      subject: `/apis/${obj.apiVersion}/namespaces/${ns}/${plural(obj.kind)}/${obj.metadata.name}`,
      datacontenttype: 'application/json',
      kind: obj.kind,
      name: obj.metadata.name,
      namespace: ns,
      apiversion: obj.apiVersion,
      data: obj,
    };
  });

/** A CloudEvent as a plain attribute map (structured-mode JSON), valid before mutation. */
const validEvent: fc.Arbitrary<Record<string, Json>> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ verb: fc.constantFrom('add', 'update', 'delete'), mode: fc.constantFrom('resource', 'ref'), obj: kubeObject, id: fc.uuid() }).map(({ verb, mode, obj, id }) => {
    const ns = obj.metadata.namespace ?? '';
    return {
      specversion: '1.0',
      id,
      source: 'https://10.96.0.1:443',
      type: `dev.knative.apiserver.${mode}.${verb}`,
      subject: `/apis/${obj.apiVersion}/namespaces/${ns}/${plural(obj.kind)}/${obj.metadata.name}`,
      datacontenttype: 'application/json',
      kind: obj.kind,
      name: obj.metadata.name,
      namespace: ns,
      apiversion: obj.apiVersion,
      data: mode === 'resource' ? obj : { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, ...(ns ? { namespace: ns } : {}) },
    };
  }) },
  // PingSource ticks: scoped to a namespace that does not exist (a full sweep now and then).
  { weight: 1, arbitrary: fc.record({ id: fc.uuid(), data: fc.oneof(fc.constant(undefined), fc.constant({ namespace: 'fuzz-nowhere' }), fc.constant({ functions: ['job-conflict'], namespace: 'fuzz-nowhere' }), fc.jsonValue({ maxDepth: 2 })) }).map(({ id, data }) => ({
    specversion: '1.0',
    id,
    source: '/apis/v1/namespaces/olm-medic/pingsources/sweep',
    type: 'dev.knative.sources.ping',
    datacontenttype: 'application/json',
    ...(data === undefined ? {} : { data: data === null || typeof data !== 'object' || Array.isArray(data) ? data : data }),
  })) },
  { weight: 3, arbitrary: lyingEvent },
  { weight: 1, arbitrary: fc.record({ id: fc.uuid(), type: printable, data: fc.jsonValue({ maxDepth: 2 }) }).map(({ id, type, data }) => ({ specversion: '1.0', id, source: '/fuzz', type: type || 'com.example.other', data })) },
);

const mistyped: fc.Arbitrary<Json> = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }), printable);

/** Removes or mistypes attributes and data fields: "near-valid" events. */
type Mutation = { path: string[]; op: 'remove' | 'set'; value?: Json };
function mutateEvent(ev: Record<string, Json>, ops: Mutation[]): Record<string, Json> {
  const out = structuredClone(ev) as Record<string, any>;
  for (const { path, op, value } of ops) {
    let cur: any = out;
    for (const p of path.slice(0, -1)) {
      if (cur === null || typeof cur !== 'object') break;
      cur = cur[p];
    }
    if (cur === null || typeof cur !== 'object') continue;
    const last = path[path.length - 1]!;
    if (op === 'remove') delete cur[last];
    else cur[last] = value;
  }
  return out;
}

const PATHS: string[][] = [
  ['specversion'], ['id'], ['source'], ['type'], ['subject'], ['datacontenttype'], ['kind'], ['name'], ['namespace'], ['apiversion'], ['data'],
  ['data', 'apiVersion'], ['data', 'kind'], ['data', 'metadata'], ['data', 'metadata', 'name'], ['data', 'metadata', 'namespace'],
  ['data', 'metadata', 'uid'], ['data', 'metadata', 'resourceVersion'], ['data', 'metadata', 'labels'], ['data', 'metadata', 'ownerReferences'],
  ['data', 'metadata', 'deletionTimestamp'], ['data', 'metadata', 'finalizers'], ['data', 'spec'], ['data', 'status'], ['data', 'name'],
  ['data', 'status', 'conditions'], ['data', 'spec', 'nodeName'], ['data', 'status', 'installPlanRef'],
];
const mutation = fc.record({ path: fc.constantFrom(...PATHS), op: fc.constantFrom<'remove' | 'set'>('remove', 'set'), value: fc.oneof(mistyped, fc.constantFrom('2.0', '0.3', '', 'application/xml', 'text/plain', 'dev.knative.apiserver.resource.add')) });
// Half of the events stay valid, so the engine path (reads against the real apiserver) is fuzzed too.
const nearValid = fc.tuple(validEvent, fc.oneof(fc.constant<Mutation[]>([]), fc.array(mutation, { minLength: 1, maxLength: 3 }))).map(([ev, ops]) => mutateEvent(ev, ops));

/** Deeply nested JSON text (arrays or objects), optionally as the data of a valid event. */
const deepJson = fc.record({ depth: fc.constantFrom(64, 1_000, 10_000, 100_000), obj: fc.boolean() }).map(({ depth, obj }) =>
  obj ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}1${']'.repeat(depth)}`,
);

/** Sizes around the 1 MB limit, up to ~2 MB. */
const hugeSize = fc.constantFrom(LIMIT - 200, LIMIT - 1, LIMIT + 1, LIMIT + 4096, 2 * LIMIT - 100);

type Body = { kind: 'event'; ev: Record<string, Json> } | { kind: 'raw'; bytes: Uint8Array; label: string };

const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 18, arbitrary: nearValid.map((ev) => ({ kind: 'event' as const, ev })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((j) => ({ kind: 'raw' as const, bytes: Buffer.from(JSON.stringify(j) ?? 'null'), label: 'random JSON' })) },
  { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => ({ kind: 'raw' as const, bytes: Buffer.concat([Buffer.from('{"x":"'), Buffer.from(b), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]), label: 'invalid UTF-8' })) },
  { weight: 1, arbitrary: fc.tuple(validEvent, fc.uint8Array({ minLength: 1, maxLength: 40 })).map(([ev, b]) => {
    // A valid event whose data bytes are not UTF-8 (binary mode takes the body as data).
    const json = Buffer.from(JSON.stringify({ ...ev, name: '\u0000' }));
    return { kind: 'raw' as const, bytes: Buffer.concat([json.subarray(0, json.length - 1), Buffer.from(',"z":"'), Buffer.from(b), Buffer.from([0x80, 0xbf]), Buffer.from('"}')]), label: 'event with invalid UTF-8' };
  }) },
  { weight: 2, arbitrary: fc.tuple(hugeSize, fc.boolean(), validEvent).map(([n, wrap, ev]) => ({
    kind: 'raw' as const,
    bytes: wrap ? Buffer.from(JSON.stringify({ ...ev, data: { ...(typeof ev.data === 'object' && ev.data ? ev.data : {}), blob: 'x'.repeat(n) } })) : Buffer.alloc(n, 0x61),
    label: `huge ${n}`,
  })) },
  { weight: 2, arbitrary: fc.tuple(deepJson, fc.boolean(), validEvent).map(([deep, wrap, ev]) => {
    const bytes = wrap ? Buffer.from(JSON.stringify({ ...ev, data: { ...(typeof ev.data === 'object' && ev.data ? ev.data : {}), spec: '@@DEEP@@' } }).replace('"@@DEEP@@"', deep)) : Buffer.from(deep);
    return { kind: 'raw' as const, bytes, label: `deep ${deep.length}` };
  }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((s) => ({ kind: 'raw' as const, bytes: Buffer.from(s), label: 'random text' })) },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json;charset=UTF-16',
  'application/cloudevents+json',
  'application/cloudevents+json; charset=UTF-8',
  'APPLICATION/CLOUDEVENTS+JSON',
  'application/cloudevents-batch+json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/octet-stream',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=',
  ';;;',
  'garbage',
];

const mode = fc.constantFrom<'binary' | 'structured' | 'batch'>('binary', 'binary', 'structured', 'structured', 'batch');
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | undefined>('@mode') }, // what the content mode implies
  { weight: 3, arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) }, // missing
  { weight: 1, arbitrary: printable.map<string | undefined>((s) => s) },
);
const garbageCeAny = fc.dictionary(
  fc.oneof(fc.constantFrom('ce-specversion', 'ce-id', 'ce-source', 'ce-type', 'ce-subject', 'ce-kind', 'ce-name', 'ce-namespace', 'ce-apiversion', 'ce-datacontenttype', 'ce-time'), fc.stringMatching(/^ce-[a-z0-9]{1,12}$/)),
  fc.oneof(printable, fc.constantFrom('1.0', '0.3', '', 'dev.knative.apiserver.resource.update', 'not-a-time')),
  { maxKeys: 4 },
);
const garbageCe = fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: garbageCeAny });
const dropCe = fc.oneof({ weight: 4, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.subarray(['ce-specversion', 'ce-id', 'ce-source', 'ce-type', 'ce-kind', 'ce-name']) });
type Encoding = 'none' | 'identity' | 'gzip' | 'deflate' | 'gzip-lie' | 'deflate-lie' | 'br-lie' | 'unknown' | 'gzip,identity';
const encoding = fc.oneof(
  { weight: 16, arbitrary: fc.constant<Encoding>('none') },
  { weight: 8, arbitrary: fc.constantFrom<Encoding>('identity', 'gzip', 'gzip', 'deflate', 'gzip-lie', 'deflate-lie', 'br-lie', 'unknown', 'gzip,identity') },
);

function attr(v: Json): string {
  return typeof v === 'string' ? v.replace(/[^\x20-\x7e]/g, '?') : JSON.stringify(v) ?? '';
}

const request: fc.Arbitrary<FuzzRequest> = fc.record({ mode, contentType, garbageCe, dropCe, encoding, body }).map(({ mode, contentType, garbageCe, dropCe, encoding, body }) => {
  const headers: Record<string, string> = {};
  let bytes: Uint8Array;
  let label: string;
  let implied: string;
  if (body.kind === 'event') {
    const ev = body.ev;
    label = `${mode} ${attr(ev.type).slice(0, 40)}`;
    if (mode === 'binary') {
      for (const [k, v] of Object.entries(ev)) if (k !== 'data' && k !== 'datacontenttype' && v !== undefined) headers[`ce-${k}`] = attr(v);
      implied = typeof ev.datacontenttype === 'string' ? ev.datacontenttype : 'application/json';
      bytes = Buffer.from(ev.data === undefined ? '' : typeof ev.data === 'string' ? ev.data : JSON.stringify(ev.data) ?? '');
    } else if (mode === 'structured') {
      implied = 'application/cloudevents+json';
      bytes = Buffer.from(JSON.stringify(ev));
    } else {
      implied = 'application/cloudevents-batch+json';
      bytes = Buffer.from(JSON.stringify([ev, ev]));
    }
  } else {
    label = `${mode} ${body.label}`;
    bytes = body.bytes;
    implied = mode === 'binary' ? 'application/json' : mode === 'structured' ? 'application/cloudevents+json' : 'application/cloudevents-batch+json';
    if (mode === 'binary') Object.assign(headers, { 'ce-specversion': '1.0', 'ce-id': 'fuzz', 'ce-source': '/fuzz', 'ce-type': 'dev.knative.apiserver.resource.update' });
  }
  for (const k of dropCe) delete headers[k];
  Object.assign(headers, garbageCe);
  const ct = contentType === '@mode' ? implied : contentType;
  if (ct !== undefined) headers['content-type'] = ct;
  switch (encoding) {
    case 'identity':
      headers['content-encoding'] = 'identity';
      break;
    case 'gzip':
    case 'gzip,identity':
      bytes = gzipSync(bytes);
      headers['content-encoding'] = encoding === 'gzip' ? 'gzip' : 'gzip, identity';
      break;
    case 'deflate':
      bytes = deflateSync(bytes);
      headers['content-encoding'] = 'deflate';
      break;
    case 'gzip-lie':
      headers['content-encoding'] = 'gzip';
      break;
    case 'deflate-lie':
      headers['content-encoding'] = 'deflate';
      break;
    case 'br-lie':
      headers['content-encoding'] = 'br';
      break;
    case 'unknown':
      headers['content-encoding'] = 'x-snappy-garbage';
      break;
    case 'none':
  }
  const category = `${mode}/${body.kind === 'event' ? 'event' : body.label.split(' ')[0]}`;
  return { category, label: `${label} ct=${ct ?? '(none)'} enc=${encoding} ${bytes.length}B`, headers, body: bytes };
});

// ---------------------------------------------------------------------------------------------

describe('fuzzing POST / on the real server', () => {
  it('never answers 5xx, never dies, every 4xx has a JSON {error}, every 2xx an empty body', async () => {
    const statuses: Record<string, number> = {};
    const labels: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const res = await fetch(server.url, { method: 'POST', headers: r.headers, body: r.body });
        const text = await res.text();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        labels[r.category] = (labels[r.category] ?? 0) + 1;
        expect(server.proc.exitCode, 'server process died').toBeNull();
        expect(res.status, `${r.label}: ${text.slice(0, 300)}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.headers.get('content-type') ?? '', r.label).toMatch(/^application\/json/);
          const parsed = JSON.parse(text) as { error?: unknown };
          expect(typeof parsed.error, r.label).toBe('string');
          expect((parsed.error as string).trim().length, r.label).toBeGreaterThan(0);
        } else {
          expect(res.status, r.label).toBeGreaterThanOrEqual(200);
          expect(text, `${r.label}: a 2xx body`).toBe('');
        }
      }),
      { seed: FUZZ_SEED, numRuns: 300, endOnFailure: true },
    );
    expect(server.proc.exitCode).toBeNull();
    expect((await fetch(`${server.url}/health/liveness`)).status).toBe(200);
    expect(statuses['200'] ?? 0, 'some requests were accepted').toBeGreaterThan(0);
    expect(statuses['413'] ?? 0, 'some bodies were over the limit').toBeGreaterThan(0);
    // Lying events changed nothing that matters.
    expect(await decoyViolations(admin, decoys)).toEqual([]);
    await audit.settle(cp.shippedUser, 1_000);
    expect(unsafeActions(audit.since(since), cp.shippedUser, baseline)).toEqual([]);
    console.log(`[fuzz] statuses ${JSON.stringify(statuses)}; inputs ${JSON.stringify(labels)}`);
  });
});
