/**
 * Validation of every value that reaches a URL or a selector. Event data (names, namespaces,
 * labels) only chooses what to LOOK at; before it is used it must be a value Kubernetes itself
 * could have produced, so it can never inject selector syntax or path segments.
 * Rules from k8s.io/apimachinery/pkg/util/validation (IsDNS1123Subdomain, IsDNS1123Label,
 * IsValidLabelValue, IsQualifiedName).
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** An apiVersion ("v1", "batch/v1", "operators.coreos.com/v1alpha1") and a kind ("Pod") as Kubernetes spells them. */
const API_VERSION = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
export const isApiVersion = (s: string): boolean => API_VERSION.test(s);
export const isKindName = (s: string): boolean => KIND.test(s);

export const isDnsLabel = (s: unknown): s is string => typeof s === 'string' && s.length <= 63 && DNS1123_LABEL.test(s);
export const isDnsSubdomain = (s: unknown): s is string => typeof s === 'string' && s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
export const isLabelValue = (s: unknown): s is string => typeof s === 'string' && s.length <= 63 && LABEL_VALUE.test(s);

/** A label key: optional DNS-subdomain prefix and "/", then a qualified name of at most 63 chars. */
export function isLabelKey(s: unknown): s is string {
  if (typeof s !== 'string') return false;
  const i = s.lastIndexOf('/');
  const [prefix, name] = i < 0 ? [undefined, s] : [s.slice(0, i), s.slice(i + 1)];
  if (prefix !== undefined && !isDnsSubdomain(prefix)) return false;
  return name.length > 0 && name.length <= 63 && QUALIFIED_NAME.test(name);
}

/**
 * Object names: DNS-1123 subdomains for every kind olm-medic reads or writes except RBAC objects,
 * and kinds it does not handle, which get the apiserver's path-segment rule (not "." or "..", no
 * "/" or "%"; RBAC names like "system:aggregate-to-admin" or even "evil role" are valid there).
 */
export function nameProblem(name: unknown, strict: boolean): string | undefined {
  if (typeof name !== 'string' || name === '') return 'must be a non-empty string';
  if (strict) return isDnsSubdomain(name) ? undefined : 'must be a DNS-1123 subdomain (lowercase letters, digits, "-" and ".", at most 253 characters)';
  // The apiserver's own rule (path.IsValidPathSegmentName): not "." or "..", no "/" or "%".
  if (name === '.' || name === '..' || /[/%]/.test(name)) return 'is not a valid object name (path segment)';
  return undefined;
}

export function namespaceProblem(ns: unknown): string | undefined {
  if (ns === undefined || ns === '') return undefined;
  return isDnsLabel(ns) ? undefined : 'must be a DNS-1123 label (lowercase letters, digits and "-", at most 63 characters)';
}

/** A value that cannot be put into a URL or selector. Raised before any request is made. */
export class InvalidValue extends Error {
  constructor(
    readonly field: string,
    readonly value: unknown,
    problem: string,
  ) {
    super(`${field} ${JSON.stringify(typeof value === 'string' ? value.slice(0, 300) : value)} ${problem}`);
    this.name = 'InvalidValue';
  }
}

/**
 * An equality label selector "k1=v1,k2=v2" from validated parts, or undefined when a value cannot
 * be a label value at all (then no object can match, and the caller lists nothing).
 */
export function equalitySelector(pairs: Record<string, string>): string | undefined {
  for (const [k, v] of Object.entries(pairs)) {
    if (!isLabelKey(k)) throw new InvalidValue('label key', k, 'is not a valid label key');
    if (!isLabelValue(v)) return undefined;
  }
  return Object.entries(pairs).map(([k, v]) => `${k}=${v}`).join(',');
}

/** After a list by selector: keep only objects whose labels equal every expected value exactly. */
export function hasLabels(obj: { metadata: { labels?: Record<string, string> } }, pairs: Record<string, string>): boolean {
  const l = obj.metadata.labels ?? {};
  return Object.entries(pairs).every(([k, v]) => l[k] === v);
}

const RESOURCE_VERSION = /^[1-9][0-9]*$/;

/**
 * Compares two resourceVersions of the SAME resource as KEP-5504 (Kubernetes v1.35, GA) allows:
 * both must be positive decimal integers without leading zeros (else undefined: not comparable);
 * -1, 0 or 1 as a < b, a == b, a > b (by length, then digit by digit: no precision limit).
 */
export function compareResourceVersions(a: unknown, b: unknown): -1 | 0 | 1 | undefined {
  if (typeof a !== 'string' || typeof b !== 'string' || !RESOURCE_VERSION.test(a) || !RESOURCE_VERSION.test(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
