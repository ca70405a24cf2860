/** Pure helpers over OLM objects (olm-facts.md). No I/O. */
import { createHash } from 'node:crypto';
import type { KubeObject, OwnerReference } from '../kube/types.js';
import { ANN_OPERATOR_NAMESPACE, COMPONENT_LABEL_PREFIX, LABEL_COPIED_FROM } from './constants.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** OLM's unpack hash: sha256 hex of the bundle image, last char dropped (63 chars). §1.1 */
export function unpackHash(image: string): string {
  return createHash('sha256').update(image).digest('hex').slice(0, 63);
}

/**
 * `<hash>`, or a retry job `<hash[0:58]>` + 5 characters from apiserver's names.SimpleNameGenerator
 * alphabet (utilrand.String: "bcdfghjklmnpqrstvwxz2456789" — no vowels, no 0/1/3). §1.1, §1.2
 */
export function isUnpackJobName(name: string): boolean {
  return /^[0-9a-f]{63}$/.test(name) || /^[0-9a-f]{58}[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(name);
}

/** The ConfigMap a job name belongs to: same name, or a retry name sharing the first 58 chars. */
export function jobBelongsToConfigMap(jobName: string, cmName: string): boolean {
  return /^[0-9a-f]{63}$/.test(cmName) && isUnpackJobName(jobName) && (jobName === cmName || jobName.slice(0, 58) === cmName.slice(0, 58));
}

export function conditions(obj: KubeObject | undefined): Condition[] {
  const st = obj?.status as { conditions?: Condition[] } | undefined;
  // Objects read from the API always carry well-formed conditions; anything else is skipped, never a crash.
  return Array.isArray(st?.conditions) ? st!.conditions!.filter((c) => typeof c === 'object' && c !== null) : [];
}

export function condition(obj: KubeObject | undefined, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

export function isTrue(obj: KubeObject | undefined, type: string): boolean {
  return condition(obj, type)?.status === 'True';
}

export function ownerRefs(obj: KubeObject): OwnerReference[] {
  return obj.metadata.ownerReferences ?? [];
}

/** api IsCopied(): status.reason Copied, operatorNamespace annotation elsewhere, or olm.copiedFrom. §4.4 */
export function isCopiedCsv(csv: KubeObject): boolean {
  const st = csv.status as { reason?: string } | undefined;
  const opNs = csv.metadata.annotations?.[ANN_OPERATOR_NAMESPACE];
  return st?.reason === 'Copied' || (opNs !== undefined && opNs !== csv.metadata.namespace) || csv.metadata.labels?.[LABEL_COPIED_FROM] !== undefined;
}

/** OLM's component label key for <pkg>.<ns>: truncate to 63, strip trailing . _ -. §2.2 */
export function componentLabelKey(pkg: string, namespace: string): string {
  let name = `${pkg}.${namespace}`;
  if (name.length > 63) name = name.slice(0, 63).replace(/[._-]+$/, '');
  return `${COMPONENT_LABEL_PREFIX}${name}`;
}

/** Whether `obj` carries the component label of an operator other than `key`'s (it is shared). */
export function hasOtherComponentKey(obj: KubeObject, key: string): boolean {
  return Object.keys(obj.metadata.labels ?? {}).some((k) => k.startsWith(COMPONENT_LABEL_PREFIX) && k !== key);
}

/**
 * Whether objects in namespace `ns` can belong to the component label `key`: some package P gives
 * componentLabelKey(P, ns) === key (the key names `<P>.<ns>`, possibly truncated to 63 characters).
 * Objects elsewhere that carry the label are someone else's (or mislabelled) and are never acted on.
 */
export function namespaceFitsKey(key: string, ns: string): boolean {
  if (!key.startsWith(COMPONENT_LABEL_PREFIX) || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns)) return false;
  const name = key.slice(COMPONENT_LABEL_PREFIX.length);
  for (let i = name.indexOf('.'); i > 0; i = name.indexOf('.', i + 1)) {
    if (componentLabelKey(name.slice(0, i), ns) === key) return true;
  }
  // A dot-free package of 62+ characters fills the whole key (`.<ns>` is cut off): every namespace
  // fits. A package with dots that fills it is not recognised (nothing would tell it from one that
  // ends at one of its dots): its objects are never acted on, the safe direction.
  return !name.includes('.') && componentLabelKey(name, ns) === key;
}

export function seconds(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t / 1000;
}

/**
 * The latest time the APISERVER stamped on a write to `obj` (metadata.managedFields[].time), among
 * the entries of `manager` (any, if undefined) that are (`status`) or are not (`spec`) writes to the
 * status subresource; undefined if there is none. A controller's own timestamps (a Job's Failed
 * transition, a taint's timeAdded) carry ITS clock; the write that carried them happened no later
 * than this, on the clock olm-medic's deadlines use (red team 32).
 */
export function managedWriteTime(obj: KubeObject, where: 'status' | 'spec', manager?: string): number | undefined {
  const entries = (obj.metadata as { managedFields?: unknown }).managedFields;
  if (!Array.isArray(entries)) return undefined;
  let latest: number | undefined;
  for (const e of entries as { manager?: unknown; time?: unknown; subresource?: unknown }[]) {
    if (!e || typeof e !== 'object' || typeof e.time !== 'string') continue;
    if (manager !== undefined && e.manager !== manager) continue;
    if ((e.subresource === 'status') !== (where === 'status')) continue;
    const t = seconds(e.time);
    if (t !== undefined && (latest === undefined || t > latest)) latest = t;
  }
  return latest;
}

/**
 * The field managers on record (managedFields, FieldsV1) as owning one field of an object, e.g.
 * ['metadata', 'annotations', 'olm-medic.io/uninstall']: whoever last set it, and anyone who applied it.
 */
export function fieldOwners(obj: KubeObject, path: string[]): string[] {
  const entries = (obj.metadata as { managedFields?: unknown }).managedFields;
  if (!Array.isArray(entries)) return [];
  const out: string[] = [];
  for (const e of entries as { manager?: unknown; fieldsV1?: unknown }[]) {
    if (!e || typeof e !== 'object' || typeof e.manager !== 'string') continue;
    let node: unknown = e.fieldsV1;
    for (const key of path) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[`f:${key}`] : undefined;
    if (node !== undefined && node !== null) out.push(e.manager);
  }
  return out;
}

/** The latest of some times (seconds), ignoring the unknown ones; undefined if all are. */
export function latestOf(...ts: (number | undefined)[]): number | undefined {
  const known = ts.filter((t): t is number => t !== undefined && Number.isFinite(t));
  return known.length ? Math.max(...known) : undefined;
}

/** Go's duration units in nanoseconds (time.unitMap: "µs" is U+00B5, "μs" U+03BC). */
const GO_UNIT_NS: Record<string, bigint> = { ns: 1n, us: 1_000n, '\u00b5s': 1_000n, '\u03bcs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };
const GO_MAX = 1n << 63n;

/**
 * Go's time.ParseDuration, in seconds; undefined where Go returns an error. OLM reads its
 * annotations with it (bundle_unpacker.go v0.28.0:896, :921), so olm-medic must accept exactly
 * what Go accepts: a sign ("+5m"), "0", fractions without an integer or fraction part (".5h",
 * "5.m"), both micro signs — and refuse what overflows int64 nanoseconds. A value OLM reads but
 * olm-medic called malformed made a namespace look unresolved and its retry interval was not
 * waited for (red team 29b, D1).
 */
export function goDurationSeconds(s: string | undefined): number | undefined {
  if (typeof s !== 'string') return undefined;
  let rest = s;
  let neg = false;
  if (rest[0] === '-' || rest[0] === '+') {
    neg = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let d = 0n;
  while (rest !== '') {
    // [0-9]*(\.[0-9]*)? with at least one digit, then a unit: every character up to the next [0-9.].
    const num = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest)!;
    const int = num[1]!;
    const frac = num[2] ?? '';
    if (int === '' && frac === '') return undefined;
    rest = rest.slice(num[0].length);
    const u = /^[^0-9.]*/.exec(rest)![0];
    const unit = GO_UNIT_NS[u];
    if (!u || unit === undefined) return undefined;
    rest = rest.slice(u.length);
    const v = BigInt(int || '0');
    if (v > GO_MAX / unit) return undefined;
    let part = v * unit;
    if (frac) part += BigInt(Math.floor(Number(`0.${frac}`) * Number(unit)));
    if (part > GO_MAX) return undefined;
    d += part;
    if (d > GO_MAX) return undefined;
  }
  if (!neg && d > GO_MAX - 1n) return undefined;
  const secs = Number(d) / 1e9;
  return neg ? -secs : secs;
}
