import { describe, it, expect } from 'vitest';
import {
  BUNDLE_UNPACK_REF_LABEL,
  CSV_CLEANUP_FINALIZER,
  bundleUnpackFailedCondition,
  bundleUnpackFailedMessage,
  bundleUnpackingCondition,
  catalogPod,
  catalogServiceAccount,
  componentLabelKey,
  csv,
  csvApiService,
  csvClusterRole,
  csvClusterRoleBinding,
  csvRole,
  csvWebhook,
  csvComponentConditions,
  csvStatus,
  installPlan,
  installPlanStatus,
  jobStatusActive,
  jobStatusComplete,
  jobStatusFailed,
  node,
  olmMinor,
  operatorGroup,
  operatorObject,
  podConditionDisruptionTarget,
  rfc3339,
  subscriptionStatus,
  unpackConfigMap,
  unpackHash,
  unpackJob,
  unpackJobTolerations,
  unpackRole,
  unpackRoleBinding,
  unpackServiceAccount,
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

// ---------------------------------------------------------------------------------------------
// Per-release shapes. Each test is named after the OLM source lines it checks
// (github.com/operator-framework/operator-lifecycle-manager at the tag, paths under pkg/controller/).
// ---------------------------------------------------------------------------------------------

describe('olmVersion parsing', () => {
  it('accepts v0.X and v0.X.Y, rejects malformed input and releases before v0.19', () => {
    expect(olmMinor('v0.28.0')).toBe(28);
    expect(olmMinor('0.43')).toBe(43);
    expect(() => olmMinor('v1.0.0')).toThrow();
    expect(() => olmMinor('v0.18.3')).toThrow(/older than v0.19/);
  });
});

describe('unpack Job by OLM release', () => {
  const base = { namespace: 'olm', image: IMAGE, configMapUid: 'cm-uid' };
  const pod = (j: Obj): Obj => j.spec.template.spec;
  const containers = (j: Obj): Obj[] => [...pod(j).initContainers, ...pod(j).containers];

  it('bundle_unpacker.go v0.25.0:87-255 — v0.19–v0.25: no labels on Job or template, no TTL, no SA, no tolerations', () => {
    for (const v of ['v0.19.0', 'v0.25.0']) {
      const j = unpackJob({ ...base, olmVersion: v });
      expect(j.metadata.labels).toBeUndefined();
      expect(j.spec.template.metadata).toEqual({ name: IMAGE_HASH });
      expect('ttlSecondsAfterFinished' in j.spec).toBe(false);
      expect(pod(j).serviceAccountName).toBeUndefined();
      expect(pod(j).tolerations).toBeUndefined();
      expect(containers(j).every((c) => c.terminationMessagePolicy === undefined && c.securityContext.readOnlyRootFilesystem === undefined)).toBe(true);
      expect(j.spec.backoffLimit).toBe(3);
      expect(j.metadata.ownerReferences[0]).toMatchObject({ kind: 'ConfigMap', name: IMAGE_HASH, controller: false, blockOwnerDeletion: false });
    }
  });

  it('bundle_unpacker.go v0.26.0:98-111, :232-253 — v0.26–v0.31: both Job labels, template olm.managed only, arch tolerations only', () => {
    for (const v of ['v0.26.0', 'v0.28', 'v0.31.0']) {
      const j = unpackJob({ ...base, olmVersion: v });
      expect(j.metadata.labels).toEqual({ 'olm.managed': 'true', [BUNDLE_UNPACK_REF_LABEL]: IMAGE_HASH });
      expect(j.spec.template.metadata.labels).toEqual({ 'olm.managed': 'true' });
      expect(pod(j).tolerations.map((t: Obj) => t.key)).toEqual(['kubernetes.io/arch', 'kubernetes.io/arch', 'kubernetes.io/arch', 'kubernetes.io/arch']);
    }
    expect(containers(unpackJob({ ...base, olmVersion: 'v0.26' })).some((c) => c.terminationMessagePolicy)).toBe(false);
  });

  it('bundle_unpacker.go v0.28.0:160,186,215 — terminationMessagePolicy FallbackToLogsOnError from v0.28', () => {
    expect(containers(unpackJob({ ...base, olmVersion: 'v0.27.0' })).map((c) => c.terminationMessagePolicy)).toEqual([undefined, undefined, undefined]);
    expect(containers(unpackJob({ ...base, olmVersion: 'v0.28.0' })).map((c) => c.terminationMessagePolicy)).toEqual(Array(3).fill('FallbackToLogsOnError'));
  });

  it('bundle_unpacker.go v0.32.0:107-112 — from v0.32 the pod template also carries bundle-unpack-ref', () => {
    const j = unpackJob({ ...base, olmVersion: 'v0.32.0' });
    expect(j.spec.template.metadata.labels).toEqual({ 'olm.managed': 'true', [BUNDLE_UNPACK_REF_LABEL]: IMAGE_HASH });
  });

  it('bundle_unpacker.go v0.33.0:157, :239-280 — v0.33+: control-plane and 120s unreachable/not-ready tolerations, read-only root fs', () => {
    expect(unpackJobTolerations('v0.32.0')).toHaveLength(4);
    const t = pod(unpackJob({ ...base, olmVersion: 'v0.33.0' })).tolerations;
    expect(t).toHaveLength(7);
    expect(t).toContainEqual({ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' });
    expect(t).toContainEqual({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 });
    expect(containers(unpackJob({ ...base, olmVersion: 'v0.33.0' })).every((c) => c.securityContext.readOnlyRootFilesystem === true)).toBe(true);
    expect(unpackJobTolerations('v0.25.0')).toEqual([]);
  });

  it('bundle_unpacker.go v0.39.0:121 — from v0.39 the pod runs as SA <hash>; v0.38 leaves it unset', () => {
    expect(pod(unpackJob({ ...base, olmVersion: 'v0.38.0' })).serviceAccountName).toBeUndefined();
    expect(pod(unpackJob({ ...base, olmVersion: 'v0.39.0' })).serviceAccountName).toBe(IMAGE_HASH);
  });

  it('bundle_unpacker.go v0.43.0:108 — ttlSecondsAfterFinished 300 from v0.43 only', () => {
    expect('ttlSecondsAfterFinished' in unpackJob({ ...base, olmVersion: 'v0.42.0' }).spec).toBe(false);
    const v43 = unpackJob({ ...base, olmVersion: 'v0.43.0' });
    expect(v43.spec.ttlSecondsAfterFinished).toBe(300);
    expect(unpackJob({ ...base, olmVersion: 'v0.46.0' }).spec.ttlSecondsAfterFinished).toBe(300);
    expect(v43.metadata.labels).toEqual({ 'olm.managed': 'true', [BUNDLE_UNPACK_REF_LABEL]: IMAGE_HASH });
  });

  it('defaults are unchanged: no olmVersion is the v0.33–v0.38 shape; explicit options beat the version', () => {
    expect(unpackJob(base)).toEqual(unpackJob({ ...base, olmVersion: 'v0.35.0' }));
    expect(unpackJob({ ...base, olmVersion: 'v0.25.0', variant: 'current' }).metadata.labels[BUNDLE_UNPACK_REF_LABEL]).toBe(IMAGE_HASH);
    expect(unpackJob({ ...base, olmVersion: 'v0.43.0', ttlSecondsAfterFinished: 60 }).spec.ttlSecondsAfterFinished).toBe(60);
  });
});

describe('unpack RBAC and ServiceAccount by OLM release', () => {
  const base = { namespace: 'olm', image: IMAGE, configMapUid: 'cm-uid' };

  it('bundle_unpacker.go v0.25.0:643-730 vs v0.26.0:731,775 — Role/RoleBinding unlabelled before v0.26', () => {
    expect(unpackRole({ ...base, olmVersion: 'v0.25.0' }).metadata.labels).toBeUndefined();
    expect(unpackRoleBinding({ ...base, olmVersion: 'v0.25.0' }).metadata.labels).toBeUndefined();
    expect(unpackRole({ ...base, olmVersion: 'v0.26.0' }).metadata.labels).toEqual({ 'olm.managed': 'true' });
    expect(unpackRoleBinding({ ...base, olmVersion: 'v0.26.0' }).metadata.labels).toEqual({ 'olm.managed': 'true' });
    expect(unpackRole(base).metadata.labels).toEqual({ 'olm.managed': 'true' });
  });

  it('bundle_unpacker.go v0.33.0:804 vs v0.39.0:836 — RoleBinding subject is SA default before v0.39, SA <hash> after', () => {
    expect(unpackRoleBinding({ ...base, olmVersion: 'v0.38.0' }).subjects).toEqual([{ kind: 'ServiceAccount', name: 'default', namespace: 'olm' }]);
    expect(unpackRoleBinding({ ...base, olmVersion: 'v0.39.0' }).subjects).toEqual([{ kind: 'ServiceAccount', name: IMAGE_HASH, namespace: 'olm' }]);
    expect(unpackRoleBinding(base).subjects[0].name).toBe('default');
    expect(unpackRoleBinding({ ...base, olmVersion: 'v0.39.0', subject: 'default' }).subjects[0].name).toBe('default');
  });

  it('bundle_unpacker.go v0.39.0:807-828 — the unpack ServiceAccount exists from v0.39 only', () => {
    expect(() => unpackServiceAccount({ ...base, olmVersion: 'v0.38.0' })).toThrow(/v0.39/);
    expect(unpackServiceAccount({ ...base, olmVersion: 'v0.39.0' }).metadata).toMatchObject({ name: IMAGE_HASH, labels: { 'olm.managed': 'true' } });
  });

  it('bundle_unpacker.go v0.19.0:564 — the unpack ConfigMap is labelled olm.managed on every release', () => {
    expect(unpackConfigMap({ namespace: 'olm', image: IMAGE, catalogSourceName: 'c', catalogSourceUid: 'u' }).metadata.labels).toEqual({ 'olm.managed': 'true' });
  });
});

describe('Subscription unpack conditions by OLM release', () => {
  it('catalog/operator.go v0.25.0:1069 / v0.42.0:1401 vs v0.43.0:1412-1423 — BundleUnpackFailed message formats', () => {
    const legacy = 'bundle unpacking failed. Reason: DeadlineExceeded, and Message: Job was active longer than specified deadline';
    expect(bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: AT, olmVersion: 'v0.25.0' }).message).toBe(legacy);
    expect(bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: AT, olmVersion: 'v0.42.0' }).message).toBe(legacy);
    expect(bundleUnpackFailedCondition({ jobReason: 'DeadlineExceeded', at: AT }).message).toBe(legacy);
    expect(bundleUnpackFailedCondition({ jobReason: 'BackoffLimitExceeded', at: AT, olmVersion: 'v0.43.0' }).message).toBe(
      'Bundle unpacking failed - BackoffLimitExceeded: Job has reached the specified backoff limit. Auto-retry in ~5 min after job cleanup (TTL). '
      + 'Common causes: Missing ICSP (ppc64le/s390x/arm64), auth failure, invalid image. '
      + 'Manual retry: in the CatalogSource namespace, run `kubectl get jobs -l operatorframework.io/bundle-unpack-ref` and delete the specific failing job.',
    );
    expect(bundleUnpackFailedMessage('X', 'Common causes: already here', 'v0.43.0')).toBe('Bundle unpacking failed - X: Common causes: already here');
  });

  it('catalog/operator.go v0.25.0:1093-1100 vs v0.43.0:1497-1526 — BundleUnpacking message only on v0.43+ image-pull failures', () => {
    expect(bundleUnpackingCondition(AT, { olmVersion: 'v0.42.0', imagePullFailed: true }).message).toBeUndefined();
    expect(bundleUnpackingCondition(AT, { olmVersion: 'v0.43.0', imagePullFailed: true }).message).toMatch(/^Bundle image pull failed\. /);
    expect(bundleUnpackingCondition(AT, { olmVersion: 'v0.43.0' }).message).toBeUndefined();
    expect(bundleUnpackingCondition(AT)).toEqual({ type: 'BundleUnpacking', status: 'True', reason: 'UnpackingInProgress', lastTransitionTime: '2025-03-01T12:00:00Z' });
  });
});

describe('catalog registry objects by OLM release', () => {
  const p = { namespace: 'olm', catalogSourceName: 'cat', catalogSourceUid: 'cs-uid', nodeName: 'n1', image: 'quay.io/cat:latest' };

  it('reconciler.go v0.26.0:126 (absent in v0.25.0:110-233) — registry pod olm.managed from v0.26', () => {
    expect(catalogPod({ ...p, olmVersion: 'v0.25.0' }).metadata.labels['olm.managed']).toBeUndefined();
    expect(catalogPod({ ...p, olmVersion: 'v0.26.0' }).metadata.labels['olm.managed']).toBe('true');
    expect(catalogPod({ ...p, olmVersion: 'v0.25.0', managedLabel: true }).metadata.labels['olm.managed']).toBe('true');
    expect(catalogPod(p).metadata.labels['olm.managed']).toBe('true');
  });

  it('reconciler.go v0.25.0:230 (added in v0.21) — safe-to-evict annotation', () => {
    expect(catalogPod({ ...p, olmVersion: 'v0.20.0' }).metadata.annotations).toBeUndefined();
    expect(catalogPod({ ...p, olmVersion: 'v0.21.0' }).metadata.annotations).toEqual({ 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' });
  });

  it('grpc.go v0.25.0:96-123 vs v0.28.0:121 — catalog ServiceAccount olm.managed from v0.26; ownerRef controller+blocking always', () => {
    const old = catalogServiceAccount({ namespace: 'olm', catalogSourceName: 'cat', catalogSourceUid: 'u', olmVersion: 'v0.25.0' });
    expect(old.metadata.labels).toBeUndefined();
    expect(old.metadata.ownerReferences[0]).toMatchObject({ controller: true, blockOwnerDeletion: true });
    expect(catalogServiceAccount({ namespace: 'olm', catalogSourceName: 'cat', catalogSourceUid: 'u' }).metadata.labels).toEqual({ 'olm.managed': 'true' });
  });
});

describe('CSV and CSV-derived objects by OLM release', () => {
  it('olm/operator.go v0.28.0:1286-1299 (v0.27: operatorconditiongenerator_controller.go v0.27.0:184-195) — csv-cleanup finalizer from v0.27, never on copies', () => {
    expect(csv({ namespace: 'ops', name: 'a.v1', olmVersion: 'v0.26.0' }).metadata.finalizers).toBeUndefined();
    expect(csv({ namespace: 'ops', name: 'a.v1', olmVersion: 'v0.27.0' }).metadata.finalizers).toEqual([CSV_CLEANUP_FINALIZER]);
    expect(csv({ namespace: 'ops', name: 'a.v1', olmVersion: 'v0.46.0', finalizers: [] }).metadata.finalizers).toBeUndefined();
    expect(csv({ namespace: 't', name: 'a.v1', copiedFrom: 'ops', olmVersion: 'v0.46.0' }).metadata.finalizers).toBeUndefined();
    expect(csv({ namespace: 'ops', name: 'a.v1' }).metadata.finalizers).toBeUndefined();
  });

  it('catalog/operator.go v0.26.0:2356 + operatorgroup.go v0.46.0:1147-1176 — CSV olm.managed from v0.26, inherited by copies; no $copyhash annotations', () => {
    expect(csv({ namespace: 'ops', name: 'a.v1', olmVersion: 'v0.25.0' }).metadata.labels).toBeUndefined();
    expect(csv({ namespace: 'ops', name: 'a.v1', olmVersion: 'v0.26.0' }).metadata.labels).toEqual({ 'olm.managed': 'true' });
    const copy = csv({ namespace: 't', name: 'a.v1', copiedFrom: 'ops', olmVersion: 'v0.46.0' });
    expect(copy.metadata.labels).toEqual({ 'olm.managed': 'true', 'olm.copiedFrom': 'ops' });
    expect(Object.keys(copy.metadata.annotations).some((k) => k.startsWith('$copyhash'))).toBe(false);
  });

  it('registry/resolver/rbac.go v0.25.0:65-168 vs v0.26.0:68,141 — CSV RBAC: owner labels only before v0.26; +permissions hash and olm.managed after', () => {
    const owner = { 'olm.owner': 'a.v1', 'olm.owner.namespace': 'ops', 'olm.owner.kind': 'ClusterServiceVersion' };
    expect(csvClusterRole({ csvName: 'a.v1', csvNamespace: 'ops', olmVersion: 'v0.25.0' }).metadata.labels).toEqual(owner);
    expect(csvRole({ csvName: 'a.v1', csvNamespace: 'ops', csvUid: 'u', olmVersion: 'v0.25.0' }).metadata.labels).toEqual(owner);
    const v26 = csvClusterRoleBinding({ csvName: 'a.v1', csvNamespace: 'ops', roleName: 'r', olmVersion: 'v0.26.0' }).metadata.labels;
    expect(Object.keys(v26).sort()).toEqual(['olm.managed', 'olm.owner', 'olm.owner.kind', 'olm.owner.namespace', 'olm.permissions.hash']);
  });

  it('install/webhook.go v0.25.0:283-293 vs v0.28.0:281-296 — webhook hash label on all, olm.managed from v0.26', () => {
    const v25 = csvWebhook('Validating', { csvName: 'a.v1', csvNamespace: 'ops', olmVersion: 'v0.25.0' }).metadata.labels;
    expect(v25['olm.webhook-description-hash']).toBeTruthy();
    expect(v25['olm.managed']).toBeUndefined();
    expect(csvWebhook('Mutating', { csvName: 'a.v1', csvNamespace: 'ops', olmVersion: 'v0.28.0' }).metadata.labels['olm.managed']).toBe('true');
    expect(csvApiService({ csvName: 'a.v1', csvNamespace: 'ops', group: 'g.io', version: 'v1', olmVersion: 'v0.25.0' }).metadata.labels['olm.managed']).toBeUndefined();
  });
});

describe('Operator component label key by OLM release', () => {
  it('decorators/operator.go v0.19.0:136-139 vs v0.21.0+ — v0.19–v0.20 truncate without stripping the trailing "."', () => {
    const pkg = 'p'.repeat(62);
    expect(componentLabelKey(pkg, 'default', 'v0.20.0')).toBe(`operators.coreos.com/${pkg}.`);
    expect(componentLabelKey(pkg, 'default', 'v0.21.0')).toBe(`operators.coreos.com/${pkg}`);
    expect(operatorObject({ pkg, namespace: 'default', refs: [], olmVersion: 'v0.46.0' }).metadata.name).toBe(pkg);
  });
});
