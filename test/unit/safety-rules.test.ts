/**
 * The small pure rules the safety principles rest on (issue 8): validation of values that reach
 * URLs and selectors, the retry-job alphabet, which namespaces a component label key can name.
 */
import { describe, expect, it } from 'vitest';
import { equalitySelector, hasLabels, isDnsLabel, isDnsSubdomain, isLabelKey, isLabelValue, nameProblem } from '../../shared/kube/validate.js';
import { formatRefProblem, refProblem, resourceFor, resourcePath } from '../../shared/kube/resources.js';
import { componentLabelKey, isUnpackJobName, namespaceFitsKey, unpackHash } from '../../shared/olm/olm.js';

describe('validation of values that reach a URL or a selector', () => {
  it.each([
    ['etcd.v0.9.4', true],
    ['a,olm.owner.kind=ClusterServiceVersion', false],
    ['etcd ', false],
    ['../etcd', false],
    ['Etcd', false],
    ['x'.repeat(254), false],
    ['ñ', false],
  ])('DNS-1123 subdomain %j: %s', (s, ok) => expect(isDnsSubdomain(s)).toBe(ok));

  it('labels, label values, label keys', () => {
    expect(isDnsLabel('openshift-marketplace')).toBe(true);
    expect(isDnsLabel('a.b')).toBe(false);
    expect(isLabelValue('')).toBe(true);
    expect(isLabelValue('My_Catalog')).toBe(true);
    expect(isLabelValue('a,b=c')).toBe(false);
    expect(isLabelKey('operators.coreos.com/etcd.olm')).toBe(true);
    expect(isLabelKey('operators.coreos.com/Bad Name.ns')).toBe(false);
  });

  it('equalitySelector builds nothing for a value no label can carry, and hasLabels re-checks exactly', () => {
    expect(equalitySelector({ 'olm.owner': 'etcd.v1', 'olm.owner.namespace': 'ops' })).toBe('olm.owner=etcd.v1,olm.owner.namespace=ops');
    expect(equalitySelector({ 'olm.owner': 'etcd.v1,olm.owner.kind=ClusterServiceVersion' })).toBeUndefined();
    expect(equalitySelector({ 'olm.owner': 'x'.repeat(64) })).toBeUndefined();
    expect(hasLabels({ metadata: { labels: { a: '1', b: '2' } } }, { a: '1' })).toBe(true);
    expect(hasLabels({ metadata: { labels: { a: '1 ' } } }, { a: '1' })).toBe(false);
  });

  it('resourcePath refuses names and namespaces that are not, and namespaced kinds without a namespace', () => {
    const jobs = resourceFor('batch/v1', 'Job');
    expect(resourcePath(jobs, 'olm', 'abc')).toBe('/apis/batch/v1/namespaces/olm/jobs/abc');
    expect(() => resourcePath(jobs, 'olm', 'a b')).toThrow(/DNS-1123 subdomain/);
    expect(() => resourcePath(jobs, 'a/b', 'abc')).toThrow(/DNS-1123 label/);
    expect(() => resourcePath(jobs, undefined, 'abc')).toThrow(/namespace .* is required/);
    // RBAC names may use any path segment (system:aggregate-to-admin)
    expect(resourcePath(resourceFor('rbac.authorization.k8s.io/v1', 'ClusterRole'), undefined, 'system:x')).toMatch(/system%3Ax$/);
    expect(nameProblem('a/b', false)).toBeDefined();
    // A namespace for a cluster-scoped kind is an error, never dropped in silence (red team 10, R10-U1): object and list alike.
    const clusterRoles = resourceFor('rbac.authorization.k8s.io/v1', 'ClusterRole');
    expect(() => resourcePath(clusterRoles, 'shop', 'other-live')).toThrow(/must be empty: clusterroles are cluster-scoped/);
    expect(() => resourcePath(clusterRoles, 'shop')).toThrow(/must be empty/);
    expect(resourcePath(clusterRoles, '', 'other-live')).toBe('/apis/rbac.authorization.k8s.io/v1/clusterroles/other-live');
  });

  it('refProblem: one rule for an event\'s reference, whole (decode) or partial (envelope extensions)', () => {
    const sub = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription' };
    expect(refProblem({ ...sub, namespace: 'ns', name: 'a.b' })).toBeUndefined();
    expect(refProblem({ apiVersion: '../v1', kind: 'Job', name: 'x' })).toMatchObject({ field: 'apiVersion', value: '../v1' });
    expect(refProblem({ apiVersion: 'v1', kind: 'configmap', name: 'x' })).toMatchObject({ field: 'kind' });
    expect(refProblem({ ...sub, namespace: 'NS!', name: 'x' })).toMatchObject({ field: 'namespace', value: 'NS!' });
    // A known namespaced kind needs its namespace; only a partial reference may leave it out.
    expect(refProblem({ ...sub, name: 'x' })).toEqual({ field: 'namespace', problem: 'is missing: Subscription is a namespaced kind' });
    expect(refProblem({ ...sub, name: 'x' }, true)).toBeUndefined();
    expect(refProblem({ ...sub, namespace: '', name: 'x' }, true)).toMatchObject({ field: 'namespace' });
    // Names: strict for kinds olm-medic handles, path segments for the rest; absent only when partial.
    expect(refProblem({ ...sub, namespace: 'ns', name: 'A_b' })).toMatchObject({ field: 'name', value: 'A_b' });
    expect(refProblem({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'ns', name: 'A_b' })).toBeUndefined();
    expect(refProblem({ apiVersion: 'example.com/v1', kind: 'Widget', name: '..' })).toMatchObject({ field: 'name' });
    expect(refProblem({ ...sub, namespace: 'ns' }, true)).toBeUndefined();
    expect(refProblem({ ...sub, namespace: 'ns', name: '' }, true)).toMatchObject({ field: 'name' });
    expect(refProblem({ ...sub, namespace: 'ns' })).toMatchObject({ field: 'name' });
    // Cluster-scoped kinds have no namespace (the apiserver clears one): given one, it is wrong.
    expect(refProblem({ apiVersion: 'v1', kind: 'Node', name: 'n1' })).toBeUndefined();
    expect(refProblem({ apiVersion: 'v1', kind: 'Node', namespace: '', name: 'n1' }, true)).toBeUndefined();
    expect(refProblem({ apiVersion: 'operators.coreos.com/v1', kind: 'Operator', namespace: 'x', name: 'op' })).toEqual({ field: 'namespace', value: 'x', problem: 'must be empty: Operator is cluster-scoped' });
    // RBAC names are path segments, as resourcePath takes them (system:aggregate-to-admin).
    expect(refProblem({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'system:aggregate-to-admin' })).toBeUndefined();
    expect(refProblem({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'a/b' })).toMatchObject({ field: 'name' });
    // Values from JSON need not be strings: named by their type, never coerced (which could throw).
    expect(formatRefProblem(refProblem({ apiVersion: 'v1', kind: 'Node', name: { toString: null } as never })!)).toBe('name (an object) must be a non-empty string');
    expect(formatRefProblem(refProblem({ apiVersion: { toString: null } as never, kind: 'Node', name: 'n' })!, 'data.')).toBe('data.apiVersion (an object) is not a valid API version');
  });
});

describe('retry-job names use the apiserver name generator\'s alphabet', () => {
  const hash = unpackHash('quay.io/x/bundle:v1');
  it.each([
    [hash, true],
    [`${hash.slice(0, 58)}bcd2x`, true],
    [`${hash.slice(0, 58)}aeiou`, false], // vowels are never generated
    [`${hash.slice(0, 58)}yyyyy`, false], // nor y (nor 0, 1, 3)
    [`${hash.slice(0, 57)}`, false],
  ])('%s: %s', (name, ok) => expect(isUnpackJobName(name)).toBe(ok));
});

describe('namespaceFitsKey: which namespaces a component label key can name', () => {
  it('an untruncated key names exactly its namespace', () => {
    const key = componentLabelKey('etcd', 'team-a');
    expect(namespaceFitsKey(key, 'team-a')).toBe(true);
    expect(namespaceFitsKey(key, 'team-b')).toBe(false);
    expect(namespaceFitsKey(key, 'a')).toBe(false);
  });

  it('a truncated key names every namespace it truncates from, and no other', () => {
    const ns = 'openshift-cluster-observability-operator';
    const key = componentLabelKey('cluster-observability-operator', ns);
    expect(key.length - 'operators.coreos.com/'.length).toBeLessThanOrEqual(63);
    expect(namespaceFitsKey(key, ns)).toBe(true);
    expect(namespaceFitsKey(key, `${ns}-2`)).toBe(true); // a colliding install
    expect(namespaceFitsKey(key, 'openshift-monitoring')).toBe(false);
    expect(namespaceFitsKey(key, 'default')).toBe(false);
  });

  it('a dot-free package of 62+ characters fills the key: every namespace fits it (its installs all share one key)', () => {
    const pkg = 'a'.repeat(40) + '-operator-with-a-very-long-name';
    expect(pkg.length).toBeGreaterThanOrEqual(62);
    const key = componentLabelKey(pkg, 'ns1');
    expect(componentLabelKey(pkg, 'other')).toBe(key);
    expect(namespaceFitsKey(key, 'ns1')).toBe(true);
    expect(namespaceFitsKey(key, 'other')).toBe(true);
  });

  it('package names with dots are handled', () => {
    expect(namespaceFitsKey(componentLabelKey('a.b.c', 'ns1'), 'ns1')).toBe(true);
    expect(namespaceFitsKey(componentLabelKey('a.b.c', 'ns1'), 'c.ns1')).toBe(false);
  });
});
