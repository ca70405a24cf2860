/**
 * CloudEvent (HTTP, binary or structured content mode) -> Trigger. Pure: no I/O.
 * Every rejection is a BadRequest naming what is wrong, mapped to a 4xx at the edge.
 */
import { CloudEvent, HTTP, ValidationError } from 'cloudevents';
import { formatRefProblem, refProblem } from '../kube/resources.js';
import type { KubeObject, Ref } from '../kube/types.js';
import { namespaceProblem } from '../kube/validate.js';
import { BadRequest, type EventMeta, type ResourceTrigger, type SweepTrigger, type Trigger, type Verb } from './types.js';

export const APISERVER_TYPE = /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/;
export const PING_TYPE = 'dev.knative.sources.ping';
/** Our own sweep type, for the CLI and tests. */
export const SWEEP_TYPE = 'io.olm-medic.sweep';

type Headers = Record<string, string | string[] | undefined>;

/** Decodes one HTTP request into a Trigger, or throws BadRequest. */
export function decodeRequest(headers: Headers, body: string): Trigger {
  const ctype = String(headers['content-type'] ?? '').toLowerCase();
  if (ctype.startsWith('application/cloudevents-batch')) {
    throw new BadRequest(400, 'batched CloudEvents are not supported: send one event per request');
  }
  if (!ctype.startsWith('application/cloudevents') && headers['ce-specversion'] === undefined) {
    throw new BadRequest(
      400,
      'not a CloudEvent: expected ce-* headers (binary mode) or Content-Type application/cloudevents+json (structured mode)',
    );
  }
  checkRequiredAttributes(headers, body, ctype);
  let event: CloudEvent<unknown>;
  try {
    const parsed = HTTP.toEvent({ headers, body });
    if (Array.isArray(parsed)) throw new BadRequest(400, 'batched CloudEvents are not supported: send one event per request');
    event = parsed as CloudEvent<unknown>;
    // validate() returns false (without checking) for spec versions it does not know.
    if (event.validate() !== true) throw new BadRequest(400, `invalid CloudEvent: unsupported specversion ${JSON.stringify(event.specversion)}`);
  } catch (e) {
    if (e instanceof BadRequest) throw e;
    throw new BadRequest(400, `invalid CloudEvent: ${describe(e)}`);
  }
  return decodeEvent(event);
}

const REQUIRED = ['specversion', 'id', 'source', 'type'] as const;

/** Names missing required attributes up front: the SDK would say only "no cloud event detected" (or invent an id). */
function checkRequiredAttributes(headers: Headers, body: string, ctype: string): void {
  let attrs: Record<string, unknown>;
  if (ctype.startsWith('application/cloudevents')) {
    try {
      attrs = JSON.parse(body) as Record<string, unknown>;
    } catch (e) {
      throw new BadRequest(400, `invalid CloudEvent: structured body is not valid JSON: ${describe(e)}`);
    }
    if (typeof attrs !== 'object' || attrs === null || Array.isArray(attrs)) throw new BadRequest(400, 'invalid CloudEvent: structured body must be a JSON object');
  } else {
    attrs = Object.fromEntries(REQUIRED.map((k) => [k, headers[`ce-${k}`]]));
  }
  const missing = REQUIRED.filter((k) => typeof attrs[k] !== 'string' || attrs[k] === '');
  const prefix = ctype.startsWith('application/cloudevents') ? '' : 'ce-';
  if (missing.length) throw new BadRequest(400, `invalid CloudEvent: missing required attribute${missing.length > 1 ? 's' : ''} ${missing.map((k) => prefix + k).join(', ')}`);
  if (attrs.specversion !== '1.0') throw new BadRequest(400, `invalid CloudEvent: unsupported specversion ${JSON.stringify(attrs.specversion)} (only 1.0)`);
  if (attrs.datacontenttype !== undefined && typeof attrs.datacontenttype !== 'string') throw new BadRequest(400, 'invalid CloudEvent: datacontenttype must be a string');
}

/** Decodes an already-parsed CloudEvent (replay files, tests). */
export function decodeEvent(event: CloudEvent<unknown>): Trigger {
  const meta: EventMeta = { id: event.id, source: event.source, type: event.type, subject: event.subject };
  const m = APISERVER_TYPE.exec(event.type);
  if (m) return decodeApiServer(event, meta, m[1] === 'resource' ? 'resource' : 'reference', m[2] as Verb);
  if (event.type === PING_TYPE || event.type === SWEEP_TYPE) return decodeSweep(event, meta);
  return { kind: 'foreign', meta };
}

function decodeApiServer(event: CloudEvent<unknown>, meta: EventMeta, mode: ResourceTrigger['mode'], verb: Verb): ResourceTrigger {
  requireJson(event);
  const data = dataObject(event);
  if (mode === 'resource') {
    const obj = data as Partial<KubeObject>;
    const md = obj.metadata;
    const missing = [
      typeof obj.apiVersion !== 'string' && 'apiVersion',
      typeof obj.kind !== 'string' && 'kind',
      (typeof md !== 'object' || md === null) && 'metadata',
      typeof md?.name !== 'string' && 'metadata.name',
    ].filter(Boolean);
    if (missing.length) throw new BadRequest(400, `${event.type} data is not a Kubernetes object: missing ${missing.join(', ')}`);
    const object = obj as KubeObject;
    checkMetadata(event.type, object.metadata as unknown as Record<string, unknown>);
    checkStatus(event.type, (object as { status?: unknown }).status);
    const ref = withNamespace({ apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name }, object.metadata.namespace);
    checkRef(event.type, ref, 'data.metadata.');
    checkExtensions(event, ref);
    return { kind: 'resource', verb, mode, ref, object, meta };
  }
  const r = data as { apiVersion?: unknown; kind?: unknown; name?: unknown; namespace?: unknown };
  const missing = (['apiVersion', 'kind', 'name'] as const).filter((k) => typeof r[k] !== 'string' || r[k] === '');
  if (missing.length) throw new BadRequest(400, `${event.type} data is not an object reference: missing ${missing.join(', ')}`);
  const ref = withNamespace(
    { apiVersion: r.apiVersion as string, kind: r.kind as string, name: r.name as string },
    typeof r.namespace === 'string' ? r.namespace : undefined,
  );
  if (r.namespace !== undefined && typeof r.namespace !== 'string') throw new BadRequest(400, `${event.type} data.namespace must be a string`);
  checkRef(event.type, ref, 'data.');
  checkExtensions(event, ref);
  return { kind: 'resource', verb, mode, ref, meta };
}

/**
 * An event is only a hint, but its values choose URLs and selectors: each must be a value the
 * apiserver itself could have produced, or the event is rejected (400 naming the field) before
 * any request (resources.ts refProblem has the rule).
 */
function checkRef(type: string, ref: Ref, at: string): void {
  const p = refProblem(ref);
  if (p) throw new BadRequest(400, `${type} ${formatRefProblem(p, at)}`);
}

const isStringMap = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** The metadata fields the functions read have the types Kubernetes gives them (else 400, naming the field). */
function checkMetadata(type: string, md: Record<string, unknown>): void {
  const bad = (field: string, what: string): never => {
    throw new BadRequest(400, `${type} data.metadata.${field} must be ${what}`);
  };
  for (const f of ['namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'generateName'] as const) {
    if (md[f] !== undefined && (typeof md[f] !== 'string' || (md[f] as string).length > 1024)) bad(f, 'a string (at most 1024 characters)');
  }
  for (const f of ['labels', 'annotations'] as const) if (md[f] !== undefined && !isStringMap(md[f])) bad(f, 'an object of strings');
  if (md.finalizers !== undefined && !(Array.isArray(md.finalizers) && md.finalizers.every((x) => typeof x === 'string'))) bad('finalizers', 'a list of strings');
  if (md.ownerReferences !== undefined) {
    const ok = Array.isArray(md.ownerReferences) && md.ownerReferences.every((o) => typeof o === 'object' && o !== null && ['apiVersion', 'kind', 'name', 'uid'].every((k) => typeof (o as Record<string, unknown>)[k] === 'string'));
    if (!ok) bad('ownerReferences', 'a list of owner references (apiVersion, kind, name, uid strings)');
  }
}

/** status.conditions, which the functions read, is a list of objects (else 400; a CSV's entries carry phase, not type). */
function checkStatus(type: string, status: unknown): void {
  if (status === undefined || status === null) return;
  if (typeof status !== 'object' || Array.isArray(status)) throw new BadRequest(400, `${type} data.status must be an object`);
  const conditions = (status as { conditions?: unknown }).conditions;
  if (conditions === undefined || conditions === null) return;
  const ok = Array.isArray(conditions) && conditions.every((c) => typeof c === 'object' && c !== null && !Array.isArray(c));
  if (!ok) throw new BadRequest(400, `${type} data.status.conditions must be a list of condition objects`);
}

function decodeSweep(event: CloudEvent<unknown>, meta: EventMeta): SweepTrigger {
  const data = event.data;
  if (data === undefined || data === null || data === '') return { kind: 'sweep', meta };
  // Structured mode's data_base64 arrives as bytes (the SDK decodes it): the same JSON, never a scope
  // with no fields (which would widen a scoped sweep to everything).
  const bytes = base64Text(data);
  const scope = typeof data === 'string' ? parseJsonOrEmpty(data) : bytes !== undefined ? parseJsonOrEmpty(bytes) : data;
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope) || ArrayBuffer.isView(scope)) {
    throw new BadRequest(400, `${event.type} data must be a JSON object like {"functions":["job-conflict"],"namespace":"ns"}`);
  }
  const s = scope as { functions?: unknown; namespace?: unknown };
  if (s.functions !== undefined && (!Array.isArray(s.functions) || s.functions.some((f) => typeof f !== 'string'))) {
    throw new BadRequest(400, `${event.type} data.functions must be an array of function names`);
  }
  // An empty list or an empty namespace (a PingSource filled from an unset variable) is a mistake:
  // [] would sweep nothing and answer 200 forever, "" would widen a scoped sweep to every namespace.
  if (Array.isArray(s.functions) && s.functions.length === 0) {
    throw new BadRequest(400, `${event.type} data.functions must name at least one function (leave it out to sweep with every function)`);
  }
  if (s.namespace === '') {
    throw new BadRequest(400, `${event.type} data.namespace must not be empty (leave it out to sweep every namespace)`);
  }
  if (s.namespace !== undefined && typeof s.namespace !== 'string') {
    throw new BadRequest(400, `${event.type} data.namespace must be a string`);
  }
  const nsProblem = namespaceProblem(s.namespace);
  if (nsProblem) throw new BadRequest(400, `${event.type} data.namespace ${JSON.stringify(String(s.namespace).slice(0, 100))} ${nsProblem}`);
  return {
    kind: 'sweep',
    meta,
    ...(s.functions ? { functions: s.functions as string[] } : {}),
    ...(s.namespace ? { namespace: s.namespace } : {}),
  };
}

/**
 * The text of data the SDK decoded from `data_base64`: a Uint8Array (the CloudEvent constructor) or
 * a Uint32Array holding one byte per element (its HTTP structured-mode parser). Anything else:
 * undefined.
 */
function base64Text(data: unknown): string | undefined {
  if (data instanceof Uint8Array) return Buffer.from(data).toString('utf8');
  if (data instanceof Uint32Array && data.every((b) => b <= 0xff)) return Buffer.from(Array.from(data)).toString('utf8');
  return undefined;
}

function requireJson(event: CloudEvent<unknown>): void {
  const dct = (event.datacontenttype ?? 'application/json').toLowerCase();
  if (!/^application\/([a-z0-9.+-]+\+)?json\b/.test(dct)) {
    throw new BadRequest(415, `${event.type} must carry JSON data, got datacontenttype ${dct}`);
  }
}

function dataObject(event: CloudEvent<unknown>): Record<string, unknown> {
  let data = event.data;
  if (typeof data === 'string') data = parseJsonOrThrow(data, event.type);
  const bytes = base64Text(data);
  if (bytes !== undefined) data = parseJsonOrThrow(bytes, event.type);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new BadRequest(400, `${event.type} must carry a JSON object as data`);
  }
  return data as Record<string, unknown>;
}

/** The adapter copies kind/name/namespace/apiversion into extensions; they must agree with data. */
function checkExtensions(event: CloudEvent<unknown>, ref: Ref): void {
  const ext = event as unknown as Record<string, unknown>;
  const pairs: [string, string | undefined][] = [
    ['kind', ref.kind],
    ['name', ref.name],
    ['apiversion', ref.apiVersion],
    ['namespace', ref.namespace ?? ''],
  ];
  for (const [key, want] of pairs) {
    const got = ext[key];
    if (typeof got === 'string' && got !== want) {
      throw new BadRequest(400, `extension ${key}="${got}" does not match the object in data ("${want}")`);
    }
  }
}

function withNamespace(ref: Ref, ns: string | undefined): Ref {
  return ns ? { ...ref, namespace: ns } : ref;
}

function parseJsonOrThrow(text: string, type: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadRequest(400, `${type} data is not valid JSON: ${describe(e)}`);
  }
}

function parseJsonOrEmpty(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest(400, `sweep data is not valid JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
}

function describe(e: unknown): string {
  if (e instanceof ValidationError) {
    const errs = (e as ValidationError & { errors?: unknown[] }).errors;
    const detail = Array.isArray(errs) && errs.length ? `: ${errs.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('; ')}` : '';
    return `${e.message}${detail}`;
  }
  return e instanceof Error ? e.message : String(e);
}
