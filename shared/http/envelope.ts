/**
 * The envelope check of a binary-mode apiserver CloudEvent from its headers alone: required
 * attributes, spec version, source/time shapes, extension names, the kind/apiversion/name/namespace
 * extensions' values (decode.ts holds them to the object in data), content type and length. Shared
 * by the front door (dispatch.ts, exit 1 and its body look) and the app's own header-only answer
 * (app.ts), so both answer an event no function wants from its headers under the same rule and
 * pass everything else to the full decode. Being conservative is the rule: an envelope the SDK
 * might reject is never vouched for here. Loads no SDK.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Verb } from '../events/types.js';
import { refProblem } from '../kube/resources.js';

/** Same as decode.ts APISERVER_TYPE (a test keeps them equal); kept here so this module loads no SDK. */
export const APISERVER_TYPE = /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/;

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\b/;
/** A URI reference of the plain shape adapters send (https://10.96.0.1:443, /apis/v1/...); anything else goes to the app. */
const SAFE_SOURCE = /^(?:[a-z][a-z0-9+.-]*:\/\/[a-z0-9.-]+(?::\d+)?)?(?:\/[A-Za-z0-9._~\/-]*)?$/;
const SAFE_ID = /^[\x21-\x7e]+$/;
const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?Z$/;
/** Extension names the SDK accepts (and that decode.ts treats as plain attributes). */
const EXT_NAME = /^[a-z0-9]{1,20}$/;
/**
 * Names the SDK's CloudEvent treats specially although they match EXT_NAME: attributes of other
 * spec versions (it rejects schemaurl on a 1.0 event) and its own method `validate`, which an
 * extension of that name would shadow (the SDK then fails with a 400). Such events go to the app.
 */
const SDK_RESERVED = new Set(['schemaurl', 'datacontentencoding', 'validate']);

/** A time the SDK's date-time format would accept: only plain UTC forms whose date is real. */
function safeTime(t: string): boolean {
  const m = RFC3339_UTC.exec(t);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  return d.getUTCFullYear() === +m[1]! && d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]! && d.getUTCHours() === +m[4]! && d.getUTCMinutes() === +m[5]! && d.getUTCSeconds() === +m[6]!;
}

export interface Envelope {
  type: string;
  mode: 'resource' | 'ref';
  verb: Verb;
  kind: string;
  apiVersion: string;
  /** Every attribute from ce-* headers (extensions included), as the SDK would expose them. */
  attrs: Record<string, string>;
  /** The Content-Type header: binary mode's datacontenttype. */
  contentType: string;
}

/**
 * A binary-mode apiserver event whose envelope the SDK and the full decode certainly accept, or
 * undefined (not sure: the app decides). The checks are the module comment's list.
 */
export function envelope(req: IncomingMessage, limit: number): Envelope | undefined {
  if (req.method !== 'POST' || req.url !== '/') return undefined;
  const h = req.headers;
  if (h['ce-specversion'] !== '1.0') return undefined;
  const type = h['ce-type'];
  if (typeof type !== 'string') return undefined;
  const m = APISERVER_TYPE.exec(type);
  if (!m) return undefined;
  const ce = h['content-encoding'];
  if (ce !== undefined && ce.toLowerCase() !== 'identity') return undefined;
  const contentType = h['content-type'] ?? '';
  const ctype = contentType.toLowerCase();
  if (!JSON_TYPE.test(ctype) || /charset=(?!"?utf-8"?\s*(;|$))/.test(ctype)) return undefined;
  // application/cloudevents+json and -batch+json are structured and batched modes, not binary.
  if (ctype.startsWith('application/cloudevents')) return undefined;
  // Known length within the limit: an unknown or larger one is the app's (413, chunked bodies).
  const len = Number(h['content-length']);
  if (!(len > 0 && len <= limit) || h['transfer-encoding'] !== undefined) return undefined;
  if (h['olm-medic-report'] !== undefined) return undefined;
  const attrs: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (!name.startsWith('ce-')) continue;
    const key = name.slice(3);
    if (typeof value !== 'string' || !EXT_NAME.test(key) || SDK_RESERVED.has(key)) return undefined;
    if (key === 'datacontenttype' || key === 'dataschema' || key === 'data') return undefined;
    attrs[key] = value;
  }
  const { id, source, time, subject, kind, apiversion } = attrs;
  if (!id || !SAFE_ID.test(id) || !source || !SAFE_SOURCE.test(source)) return undefined;
  if (time !== undefined && !safeTime(time)) return undefined;
  if (subject !== undefined && subject === '') return undefined;
  if (!kind || !apiversion) return undefined;
  // decode.ts requires the kind/name/apiversion/namespace extensions to equal the object in data,
  // which must itself pass refProblem: values no object could have are the full decode's 400, not
  // ignored. Extensions left out are unknown here (partial), and decided by the full decode.
  if (refProblem({ apiVersion: apiversion, kind, namespace: attrs.namespace, name: attrs.name }, true)) return undefined;
  return { type, mode: m[1] as 'resource' | 'ref', verb: m[2] as Verb, kind, apiVersion: apiversion, attrs, contentType };
}

export function answerIgnored(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('olm-medic-outcome', 'ignored=1');
  res.setHeader('Content-Length', '0');
  res.end();
}

