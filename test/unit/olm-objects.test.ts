import { describe, it, expect } from 'vitest';
import {
  BUNDLE_UNPACK_REF_LABEL,
  CSV_CLEANUP_FINALIZER,
  bundleUnpackFailedCondition,
  catalogPod,
  componentLabelKey,
  csv,
  csvClusterRole,
  csvComponentConditions,
  csvStatus,
  installPlan,
  installPlanStatus,
  jobStatusActive,
  jobStatusComplete,
  jobStatusFailed,
  node,
  operatorGroup,
  operatorObject,
  podConditionDisruptionTarget,
  rfc3339,
  subscriptionStatus,
  unpackConfigMap,
  unpackHash,
  unpackJob,
  unpackRetryJobName,
  unpackedBundleSteps,
  type ComponentRef,
  type Obj,
} from '../fixtures/olm-objects.js';

const IMAGE = 'quay.io/example/bundle:v1';
// sha256('quay.io/example/bundle:v1') = 336fa0de…6e25, computed with node:crypto; last char dropped.
const IMAGE_HASH = '336fa0de0c610ca6a57e0d1bcad34e0d5010bd03233825c68ee5656f662d6e2';
const AT = new Date('2025-03-01T12:00:00.000Z');

/** True if `conditions` has `type` with status "True" (mirrors batch validation IsConditionTrue). */
function isTrue(conditions: Obj[] | undefined, type: string): boolean {
  return (conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

describe('unpackHash', () => {
  it('is the 63-char lowercase hex sha256 prefix of the image', () => {
    expect(unpackHash(IMAGE)).toBe(IMAGE_HASH);
    expect(unpackHash(IMAGE)).toMatch(/^[0-9a-f]{63}$/);
    expect(unpackHash('quay.io/x@sha256:' + 'a'.repeat(64))).toMatch(/^[0-9a-f]{63}$/);
  });

  it('retry names keep 58 hash chars plus a 5-char generated suffix', () => {
    const name = unpackRetryJobName(IMAGE, 'x4b2z');
    expect(name).toHaveLength(63);
    expect(name).toMatch(/^[0-9a-f]{58}[0-9a-z]{5}$/);
    expect(name.startsWith(IMAGE_HASH.slice(0, 58))).toBe(true);
    expect(() => unpackRetryJobName(IMAGE, 'aeiou')).toThrow();
  });
});

describe('owner references', () => {
  it('unpack ConfigMap is owned non-blockingly by the CatalogSource', () => {
    const cm = unpackConfigMap({ namespace: 'olm', image: IMAGE, catalogSourceName: 'operatorhubio-catalog', catalogSourceUid: 'cs-uid' });
    expect(cm.metadata.name).toBe(IMAGE_HASH);
    expect(cm.metadata.labels).toEqual({ 'olm.managed': 'true' });
    expect(cm.metadata.ownerReferences).toEqual([
      { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', name: 'operatorhubio-catalog', uid: 'cs-uid', controller: false, blockOwnerDeletion: false },
    ]);
    expect(unpackConfigMap({ namespace: 'olm', image: IMAGE, catalogSourceName: 'c', catalogSourceUid: 'u', managedLabel: false }).metadata.labels).toBeUndefined();
  });

  it('InstallPlan has one NonBlockingOwner per Subscription and no component labels', () => {
    const ip = installPlan({ namespace: 'ns', csvNames: ['a.v1'], ownerSubs: [{ name: 'a', uid: 'u1' }, { name: 'b', uid: 'u2' }] });
    expect(ip.metadata.generateName).toBe('install-');
    expect(ip.metadata.name).toBeUndefined();
    expect(ip.metadata.ownerReferences).toEqual([
      { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', name: 'a', uid: 'u1', controller: false, blockOwnerDeletion: false },
      { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', name: 'b', uid: 'u2', controller: false, blockOwnerDeletion: false },
    ]);
    expect(ip.spec).toEqual({ approval: 'Automatic', approved: true, clusterServiceVersionNames: ['a.v1'], generation: 1 });
    expect(installPlan({ namespace: 'ns', name: 'install-x', csvNames: [], approval: 'Manual' }).spec.approved).toBe(false);
  });

  it('catalog pod is controller-owned without blocking deletion', () => {
    const pod = catalogPod({ namespace: 'olm', catalogSourceName: 'cat', catalogSourceUid: 'cs-uid', nodeName: 'n1', image: 'quay.io/cat:latest' });
    expect(pod.metadata.generateName).toBe('cat-');
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', name: 'cat', uid: 'cs-uid', controller: true, blockOwnerDeletion: false },
    ]);
    expect(pod.metadata.labels['olm.catalogSource']).toBe('cat');
    expect(pod.metadata.labels['olm.managed']).toBe('true');
    expect(pod.metadata.labels['olm.pod-spec-hash']).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(pod.metadata.annotations['cluster-autoscaler.kubernetes.io/safe-to-evict']).toBe('true');
    expect(pod.spec.containers[0].ports).toEqual([{ name: 'grpc', containerPort: 50051, protocol: 'TCP' }]);
    expect(pod.spec.tolerations).toContainEqual({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  });
});

describe('unpackJob', () => {
  const base = { namespace: 'olm', image: IMAGE, configMapUid: 'cm-uid' };

  it('current variant: labels, ConfigMap ownerRef and the §1.3 spec', () => {
    const job = unpackJob(base);
    expect(job.metadata.name).toBe(IMAGE_HASH);
    expect(job.metadata.labels).toEqual({ 'olm.managed': 'true', [BUNDLE_UNPACK_REF_LABEL]: IMAGE_HASH });
    expect(job.spec.template.metadata.labels).toEqual(job.metadata.labels);
    expect(job.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: IMAGE_HASH, uid: 'cm-uid', controller: false, blockOwnerDeletion: false },
    ]);
    expect(job.spec.backoffLimit).toBe(3);
    expect(job.spec.activeDeadlineSeconds).toBe(600);
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(pod.initContainers.map((c: Obj) => c.name)).toEqual(['util', 'pull']);
    expect(pod.initContainers[1].image).toBe(IMAGE);
    expect(pod.initContainers[1].imagePullPolicy).toBe('Always');
    expect(pod.containers[0].command).toEqual(['opm', 'alpha', 'bundle', 'extract', '-m', '/bundle/', '-n', 'olm', '-c', IMAGE_HASH, '-z']);
    expect(pod.containers[0].env).toEqual([{ name: 'CONTAINER_IMAGE', value: IMAGE }]);
  });

  it('older variants drop labels; options set TTL and no deadline', () => {
    expect(unpackJob({ ...base, variant: 'no-managed-label' }).metadata.labels).toEqual({ [BUNDLE_UNPACK_REF_LABEL]: IMAGE_HASH });
    const old = unpackJob({ ...base, variant: 'no-ref-label' });
    expect(old.metadata.labels).toBeUndefined();
    expect(old.spec.template.metadata.labels).toBeUndefined();
    const v43 = unpackJob({ ...base, ttlSecondsAfterFinished: 300, activeDeadlineSeconds: null });
    expect(v43.spec.ttlSecondsAfterFinished).toBe(300);
    expect('activeDeadlineSeconds' in v43.spec).toBe(false);
  });
});

describe('job statuses (Kubernetes 1.36 status validation)', () => {
  it('failed: FailureTarget + Failed, startTime, no completionTime, no active pods', () => {
    for (const reason of ['DeadlineExceeded', 'BackoffLimitExceeded'] as const) {
      const s = jobStatusFailed({ reason, at: AT });
      expect(s.conditions.map((c: Obj) => c.type)).toEqual(['FailureTarget', 'Failed']);
      expect(isTrue(s.conditions, 'FailureTarget') && isTrue(s.conditions, 'Failed')).toBe(true);
      expect(s.conditions.every((c: Obj) => c.reason === reason)).toBe(true);
      expect(s.startTime).toBeDefined();
      expect(s.completionTime).toBeUndefined();
      expect(s.active ?? 0).toBe(0);
      expect(s.conditions[1].lastTransitionTime).toBe('2025-03-01T12:00:00Z');
    }
    expect(jobStatusFailed({ reason: 'DeadlineExceeded', at: AT }).conditions[1].message).toBe('Job was active longer than specified deadline');
    expect(jobStatusFailed({ reason: 'DeadlineExceeded', at: AT }).startTime).toBe('2025-03-01T11:50:00Z');
    expect(jobStatusFailed({ reason: 'BackoffLimitExceeded', at: AT }).failed).toBe(4);
  });

  it('complete: SuccessCriteriaMet + Complete, completionTime >= startTime, succeeded >= 1', () => {
    const s = jobStatusComplete({ at: AT });
    expect(s.conditions.map((c: Obj) => c.type)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(isTrue(s.conditions, 'FailureTarget') || isTrue(s.conditions, 'Failed')).toBe(false);
    expect(s.succeeded).toBeGreaterThanOrEqual(1);
    expect(Date.parse(s.completionTime)).toBeGreaterThanOrEqual(Date.parse(s.startTime));
  });

  it('active: startTime, active > 0, ready <= active, no terminal conditions; startedAt carries over', () => {
    const started = new Date('2025-03-01T11:55:00Z');
    const s = jobStatusActive({ startedAt: started });
    expect(s.active).toBeGreaterThan(0);
    expect(s.ready).toBeLessThanOrEqual(s.active);
    expect(s.conditions).toBeUndefined();
    expect(jobStatusFailed({ reason: 'DeadlineExceeded', at: AT, startedAt: started }).startTime).toBe(s.startTime);
  });
});

describe('componentLabelKey', () => {
  it('is operators.coreos.com/<pkg>.<ns> when short', () => {
    expect(componentLabelKey('etcd', 'operators')).toBe('operators.coreos.com/etcd.operators');
  });

  it('truncates a 70-char name to 63 and strips the trailing "." left by truncation', () => {
    const pkg = 'p'.repeat(62);
    const name = `${pkg}.default`;
    expect(name).toHaveLength(70);
    expect(name[62]).toBe('.');
    expect(componentLabelKey(pkg, 'default')).toBe(`operators.coreos.com/${pkg}`);
  });

  it('strips every trailing ".", "_" and "-" after truncation', () => {
    const pkg = 'a'.repeat(60) + '-_';
    expect(componentLabelKey(pkg, 'default')).toBe(`operators.coreos.com/${'a'.repeat(60)}`);
  });
});

describe('Operator components', () => {
  it('refs are sorted by kind, apiVersion, namespace, name (byte order)', () => {
    const refs: ComponentRef[] = [
      { kind: 'Subscription', apiVersion: 'operators.coreos.com/v1alpha1', namespace: 'ns', name: 'etcd' },
      { kind: 'ClusterServiceVersion', apiVersion: 'operators.coreos.com/v1alpha1', namespace: 'ns', name: 'etcd.v2' },
      { kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', name: 'z-role' },
      { kind: 'ClusterServiceVersion', apiVersion: 'operators.coreos.com/v1alpha1', namespace: 'a-ns', name: 'etcd.v2' },
      { kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', name: 'A-role' },
      { kind: 'CustomResourceDefinition', apiVersion: 'apiextensions.k8s.io/v1', name: 'etcdclusters.etcd.database.coreos.com' },
    ];
    const op = operatorObject({ pkg: 'etcd', namespace: 'ns', refs });
    expect(op.metadata.name).toBe('etcd.ns');
    expect(op.status.components.labelSelector).toEqual({ matchExpressions: [{ key: 'operators.coreos.com/etcd.ns', operator: 'Exists' }] });
    expect(op.status.components.refs.map((r: Obj) => `${r.kind}/${r.namespace ?? ''}/${r.name}`)).toEqual([
      'ClusterRole//A-role',
      'ClusterRole//z-role',
      'ClusterServiceVersion/a-ns/etcd.v2',
      'ClusterServiceVersion/ns/etcd.v2',
      'CustomResourceDefinition//etcdclusters.etcd.database.coreos.com',
      'Subscription/ns/etcd',
    ]);
  });

  it('CSV ref conditions: type = phase, status True', () => {
    const [c] = csvComponentConditions(csvStatus({ phase: 'Succeeded', at: AT }));
    expect(c).toEqual({
      type: 'Succeeded', status: 'True', reason: 'InstallSucceeded', message: 'install strategy completed with no errors',
      lastUpdateTime: '2025-03-01T12:00:00Z', lastTransitionTime: '2025-03-01T12:00:00Z',
    });
  });
});

describe('Subscription status', () => {
  it('installPlanRef is a full ObjectReference and installplan mirrors it with uuid', () => {
    const s = subscriptionStatus({
      at: AT,
      currentCSV: 'etcd.v2',
      installPlan: { name: 'install-abcde', namespace: 'ns', uid: 'ip-uid', resourceVersion: '42' },
      state: 'UpgradePending',
      installPlanGeneration: 3,
      conditions: [bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: AT })],
    });
    expect(s.installPlanRef).toEqual({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abcde', namespace: 'ns', resourceVersion: '42', uid: 'ip-uid' });
    expect(s.installplan).toEqual({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abcde', uuid: 'ip-uid' });
    expect(s.lastUpdated).toBe(rfc3339(AT));
    expect(s.conditions[0]).toEqual({
      type: 'BundleUnpackFailed', status: 'True', reason: 'BundleUnpackFailed',
      message: 'bundle unpacking failed. Reason: DeadlineExceeded, and Message: Job was active longer than specified deadline',
      lastTransitionTime: '2025-03-01T12:00:00Z',
    });
    expect(subscriptionStatus({ at: AT })).toEqual({ lastUpdated: '2025-03-01T12:00:00Z' });
  });
});

describe('InstallPlan plan steps', () => {
  it('manifest is the UnpackedBundleReference JSON in Go field order', () => {
    const steps = unpackedBundleSteps({ csvName: 'etcd.v2', image: IMAGE, catalogSourceName: 'cat', catalogSourceNamespace: 'olm', crdNames: ['etcdclusters.etcd.database.coreos.com'] });
    const status = installPlanStatus({ phase: 'Installing', catalogSources: ['cat'], plan: steps });
    expect(status.plan.map((s: Obj) => s.resource.kind)).toEqual(['CustomResourceDefinition', 'ClusterServiceVersion']);
    expect(status.plan[1].resource.manifest).toBe(
      `{"kind":"ConfigMap","name":"${IMAGE_HASH}","namespace":"olm","catalogSourceName":"cat","catalogSourceNamespace":"olm","replaces":"","properties":""}`,
    );
  });
});

describe('CSV', () => {
  it('original carries the OperatorGroup annotations and optional finalizer', () => {
    const c = csv({ namespace: 'ops', name: 'etcd.v2', operatorGroup: 'og', targetNamespaces: ['a', 'b'], finalizers: [CSV_CLEANUP_FINALIZER] });
    expect(c.metadata.annotations).toEqual({ 'olm.operatorGroup': 'og', 'olm.operatorNamespace': 'ops', 'olm.targetNamespaces': 'a,b' });
    expect(c.metadata.finalizers).toEqual(['operators.coreos.com/csv-cleanup']);
    expect(c.metadata.labels).toBeUndefined();
  });

  it('copy: olm.copiedFrom label, no targetNamespaces, no finalizers, reason Copied', () => {
    const c = csv({ namespace: 'a', name: 'etcd.v2', copiedFrom: 'ops', finalizers: [CSV_CLEANUP_FINALIZER] });
    expect(c.metadata.labels).toEqual({ 'olm.copiedFrom': 'ops' });
    expect(c.metadata.annotations['olm.operatorNamespace']).toBe('ops');
    expect(c.metadata.annotations['olm.targetNamespaces']).toBeUndefined();
    expect(c.metadata.finalizers).toBeUndefined();
    expect(c.metadata.ownerReferences).toBeUndefined();
    expect(c.status.reason).toBe('Copied');
    expect(c.status.message).toBe('The operator is running in ops but is managing this namespace');
  });

  it('cluster RBAC is labelled by owner, not ownerRef', () => {
    const cr = csvClusterRole({ csvName: 'etcd.v2', csvNamespace: 'ops' });
    expect(cr.metadata.labels).toMatchObject({
      'olm.owner': 'etcd.v2', 'olm.owner.namespace': 'ops', 'olm.owner.kind': 'ClusterServiceVersion', 'olm.managed': 'true',
    });
    expect(cr.metadata.labels['olm.permissions.hash']).toBeTruthy();
    expect(cr.metadata.ownerReferences).toBeUndefined();
  });
});

describe('OperatorGroup', () => {
  it('upgradeStrategy is the string "Default" (type UpgradeStrategy string), AllNamespaces omits targetNamespaces', () => {
    expect(operatorGroup({ namespace: 'ns', name: 'og', targetNamespaces: ['ns'] }).spec).toEqual({ targetNamespaces: ['ns'], upgradeStrategy: 'Default' });
    expect(operatorGroup({ namespace: 'ns', name: 'og' }).spec).toEqual({ upgradeStrategy: 'Default' });
  });
});

describe('node and pod conditions', () => {
  it('node Ready condition reflects status and transition time', () => {
    const n = node({ name: 'n1', ready: 'Unknown', since: AT });
    expect(n.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'Unknown', lastTransitionTime: '2025-03-01T12:00:00Z' });
    expect(node({ name: 'n1', ready: false, since: AT }).status.conditions[0].status).toBe('False');
    expect(node({ name: 'n1', ready: true, since: AT }).status.conditions[0].status).toBe('True');
  });

  it('DisruptionTarget condition', () => {
    expect(podConditionDisruptionTarget('DeletionByTaintManager', AT)).toEqual({
      type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: '2025-03-01T12:00:00Z',
    });
  });
});
