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

export interface RefProblem {
  field: 'apiVersion' | 'kind' | 'namespace' | 'name';
  /** The offending value; absent for a missing namespace. */
  value?: string;
  /** Follows the field and value in a message: "is not a valid kind". */
  problem: string;
}

/**
 * The first value of an object reference that no object the apiserver serves could have, or
 * undefined. An event's values choose URLs and selectors, so the event decoder (decode.ts) and the
 * front door's envelope rule (envelope.ts) both hold them to this one rule: API version and kind
 * shapes, the namespace a DNS-1123 label and present for a known namespaced kind, and the name a
 * DNS-1123 subdomain for a kind olm-medic handles (a path segment otherwise). With `partial` (the
 * envelope's extensions may leave them out), an absent namespace or name is unknown and not
 * checked; an empty one is still wrong.
 */
export function refProblem(ref: { apiVersion: string; kind: string; namespace?: string; name?: string }, partial = false): RefProblem | undefined {
  if (!isApiVersion(ref.apiVersion)) return { field: 'apiVersion', value: ref.apiVersion, problem: 'is not a valid API version' };
  if (!isKindName(ref.kind)) return { field: 'kind', value: ref.kind, problem: 'is not a valid kind' };
  const nsProblem = namespaceProblem(ref.namespace);
  if (nsProblem) return { field: 'namespace', value: ref.namespace, problem: nsProblem };
  const info = table[`${ref.apiVersion}/${ref.kind}`];
  if (info?.namespaced && !ref.namespace && !(partial && ref.namespace === undefined)) {
    return { field: 'namespace', problem: `is missing: ${ref.kind} is a namespaced kind` };
  }
  if (partial && ref.name === undefined) return undefined;
  const nProblem = nameProblem(ref.name, info !== undefined);
  return nProblem ? { field: 'name', value: ref.name, problem: nProblem } : undefined;
}

/** RBAC objects may be named with any path segment (e.g. "system:aggregate-to-admin"); the rest are DNS subdomains. */
const PATH_SEGMENT_NAMED = new Set(['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']);

/** The REST path of a collection or of one object. Names and namespaces are validated first. */
export function resourcePath(info: ResourceInfo, namespace?: string, name?: string): string {
  const nsProblem = info.namespaced ? namespaceProblem(namespace) : undefined;
  if (nsProblem) throw new InvalidValue('namespace', namespace, nsProblem);
  if (info.namespaced && name !== undefined && !namespace) throw new InvalidValue('namespace', namespace, `is required for ${info.plural}`);
  const nProblem = name === undefined ? undefined : nameProblem(name, !PATH_SEGMENT_NAMED.has(info.plural));
  if (nProblem) throw new InvalidValue(`${info.plural} name`, name, nProblem);
  const base = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name ? `/${encodeURIComponent(name)}` : '';
  return `${base}${ns}/${info.plural}${obj}`;
}
