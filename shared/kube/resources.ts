/**
 * The static resource table: every kind olm-medic reads or writes, with its REST path parts.
 * Static on purpose — no discovery requests, so an event costs only the reads its decision needs.
 */
import { InvalidValue, isApiVersion, isKindName, nameProblem, namespaceProblem } from './validate.js';

export interface ResourceInfo {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

const table: Record<string, ResourceInfo> = {};
function add(apiVersion: string, kind: string, plural: string, namespaced: boolean): void {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  table[`${apiVersion}/${kind}`] = { group: group!, version: version!, plural, namespaced };
}

add('v1', 'Namespace', 'namespaces', false);
add('v1', 'Node', 'nodes', false);
add('v1', 'Pod', 'pods', true);
add('v1', 'ConfigMap', 'configmaps', true);
add('v1', 'Secret', 'secrets', true);
add('v1', 'Service', 'services', true);
add('v1', 'ServiceAccount', 'serviceaccounts', true);
add('apps/v1', 'Deployment', 'deployments', true);
add('batch/v1', 'Job', 'jobs', true);
add('rbac.authorization.k8s.io/v1', 'Role', 'roles', true);
add('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true);
add('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false);
add('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false);
add('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false);
add('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false);
add('apiregistration.k8s.io/v1', 'APIService', 'apiservices', false);
add('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false);
add('events.k8s.io/v1', 'Event', 'events', true);
add('operators.coreos.com/v1alpha1', 'Subscription', 'subscriptions', true);
add('operators.coreos.com/v1alpha1', 'InstallPlan', 'installplans', true);
add('operators.coreos.com/v1alpha1', 'ClusterServiceVersion', 'clusterserviceversions', true);
add('operators.coreos.com/v1alpha1', 'CatalogSource', 'catalogsources', true);
add('operators.coreos.com/v1', 'OperatorGroup', 'operatorgroups', true);
add('operators.coreos.com/v1', 'Operator', 'operators', false);
add('operators.coreos.com/v2', 'OperatorCondition', 'operatorconditions', true);

export class UnknownKindError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(`olm-medic does not handle ${kind} (${apiVersion})`);
  }
}

export function resourceFor(apiVersion: string, kind: string): ResourceInfo {
  const info = table[`${apiVersion}/${kind}`];
  if (!info) throw new UnknownKindError(apiVersion, kind);
  return info;
}

export function isKnownKind(apiVersion: string, kind: string): boolean {
  return table[`${apiVersion}/${kind}`] !== undefined;
}

/** RBAC objects may be named with any path segment (e.g. "system:aggregate-to-admin"); the rest are DNS subdomains. */
const PATH_SEGMENT_NAMED = new Set(['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']);

export interface RefProblem {
  field: 'apiVersion' | 'kind' | 'namespace' | 'name';
  /** The offending value; absent for a missing namespace. */
  value?: unknown;
  /** Follows the field and value in a message: "is not a valid kind". */
  problem: string;
}

/**
 * The first value of an object reference that no object the apiserver serves could have, or
 * undefined. An event's values choose keys, URLs and selectors, so the event decoder (decode.ts),
 * the front door's envelope rule (envelope.ts) and the targets functions derive from an event's
 * data (core/types.ts targetsOf) are all held to this one rule: API version and kind shapes; a
 * namespace that is a DNS-1123 label, present for a known namespaced kind and absent for a known
 * cluster-scoped one (the apiserver clears it there); a name as resourcePath takes it (a DNS-1123
 * subdomain for a kind olm-medic handles, any path segment for RBAC kinds and kinds it does not
 * handle). Values need not be strings at run time (they come from JSON). With `partial` (the
 * envelope's extensions may leave them out), an absent namespace or name is unknown and not
 * checked; an empty one is still wrong.
 */
export function refProblem(ref: { apiVersion: string; kind: string; namespace?: string; name?: string }, partial = false): RefProblem | undefined {
  if (typeof ref.apiVersion !== 'string' || !isApiVersion(ref.apiVersion)) return { field: 'apiVersion', value: ref.apiVersion, problem: 'is not a valid API version' };
  if (typeof ref.kind !== 'string' || !isKindName(ref.kind)) return { field: 'kind', value: ref.kind, problem: 'is not a valid kind' };
  const nsProblem = namespaceProblem(ref.namespace);
  if (nsProblem) return { field: 'namespace', value: ref.namespace, problem: nsProblem };
  const info = table[`${ref.apiVersion}/${ref.kind}`];
  if (info?.namespaced && !ref.namespace && !(partial && ref.namespace === undefined)) {
    return { field: 'namespace', problem: `is missing: ${ref.kind} is a namespaced kind` };
  }
  if (info && !info.namespaced && ref.namespace) return { field: 'namespace', value: ref.namespace, problem: `must be empty: ${ref.kind} is cluster-scoped` };
  if (partial && ref.name === undefined) return undefined;
  const nProblem = nameProblem(ref.name, info !== undefined && !PATH_SEGMENT_NAMED.has(info.plural));
  return nProblem ? { field: 'name', value: ref.name, problem: nProblem } : undefined;
}

/** "<at><field> <value> <problem>", the value quoted (a string, cut to 300 characters for names, 100 else) or named by its type. */
export function formatRefProblem(p: RefProblem, at = ''): string {
  const v = p.value;
  const shown = v === undefined ? '' : typeof v === 'string' ? ` ${JSON.stringify(v.slice(0, p.field === 'name' ? 300 : 100))}` : ` (${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`})`;
  return `${at}${p.field}${shown} ${p.problem}`;
}

/** The REST path of a collection or of one object. Names and namespaces are validated first (a namespace for a cluster-scoped kind is an error). */
export function resourcePath(info: ResourceInfo, namespace?: string, name?: string): string {
  const nsProblem = info.namespaced ? namespaceProblem(namespace) : undefined;
  if (nsProblem) throw new InvalidValue('namespace', namespace, nsProblem);
  if (info.namespaced && name !== undefined && !namespace) throw new InvalidValue('namespace', namespace, `is required for ${info.plural}`);
  // Never dropped in silence: a namespace given for a cluster-scoped kind means the caller took the
  // object for a namespaced one (a ref in an Operator's status naming one, red team R10-U1).
  if (!info.namespaced && namespace) throw new InvalidValue('namespace', namespace, `must be empty: ${info.plural} are cluster-scoped`);
  const nProblem = name === undefined ? undefined : nameProblem(name, !PATH_SEGMENT_NAMED.has(info.plural));
  if (nProblem) throw new InvalidValue(`${info.plural} name`, name, nProblem);
  const base = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name ? `/${encodeURIComponent(name)}` : '';
  return `${base}${ns}/${info.plural}${obj}`;
}
