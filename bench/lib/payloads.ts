/**
 * Realistic payloads of declared kinds that need no action (bench/dispatch-throughput.ts,
 * bench/cold-start.ts, bench/memory.ts): what a busy cluster sends all day to an ApiServerSource
 * watching OLM's kinds. Deterministic; sizes like the real objects (managedFields included).
 */
import type { KubeObj } from './events.js';

const T = '2026-11-20T09:14:00Z';

/** A Ready Node's status heartbeat (~15 KB: images, managedFields, nodeInfo). */
export function readyNodeUpdate(name = 'worker-3', rv = 8_123_456): KubeObj {
  const images = Array.from({ length: 62 }, (_, i) => ({
    names: [`registry.example.com/team-${i % 9}/service-${i}@sha256:${hex(64, i)}`, `registry.example.com/team-${i % 9}/service-${i}:v1.${i}.${(i * 7) % 13}`],
    sizeBytes: 12_000_000 + i * 1_733_117,
  }));
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `4c3b2a19-0f8e-4d7c-9b6a-${hex(12, 3)}`,
      resourceVersion: String(rv),
      creationTimestamp: '2026-10-01T08:00:00Z',
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node-role.kubernetes.io/worker': '',
        'node.kubernetes.io/instance-type': 'm6i.2xlarge',
        'topology.kubernetes.io/region': 'eu-west-1',
        'topology.kubernetes.io/zone': 'eu-west-1b',
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': `{"ebs.csi.aws.com":"i-0${hex(16, 5)}"}`,
      },
      managedFields: [
        { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"DiskPressure"}': { 'f:lastHeartbeatTime': {} }, 'k:{"type":"MemoryPressure"}': { 'f:lastHeartbeatTime': {} }, 'k:{"type":"PIDPressure"}': { 'f:lastHeartbeatTime': {} }, 'k:{"type":"Ready"}': { 'f:lastHeartbeatTime': {}, 'f:lastTransitionTime': {}, 'f:message': {}, 'f:reason': {}, 'f:status': {} } }, 'f:images': {}, 'f:nodeInfo': { 'f:bootID': {} } } }, subresource: 'status' },
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-10-01T08:01:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:node.alpha.kubernetes.io/ttl': {} } }, 'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, 'v:"10.244.3.0/24"': {} } } } },
      ],
    },
    spec: { podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.3.0/24'], providerID: `aws:///eu-west-1b/i-0${hex(16, 5)}` },
    status: {
      addresses: [{ type: 'InternalIP', address: '10.0.12.34' }, { type: 'Hostname', address: name }],
      allocatable: { cpu: '7910m', 'ephemeral-storage': '95551679124', memory: '31619712Ki', pods: '58' },
      capacity: { cpu: '8', 'ephemeral-storage': '104845292Ki', memory: '32631424Ki', pods: '58' },
      conditions: [
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available', lastHeartbeatTime: T, lastTransitionTime: '2026-10-01T08:00:00Z' },
        { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure', lastHeartbeatTime: T, lastTransitionTime: '2026-10-01T08:00:00Z' },
        { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available', lastHeartbeatTime: T, lastTransitionTime: '2026-10-01T08:00:00Z' },
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: T, lastTransitionTime: '2026-10-01T08:00:40Z' },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      images,
      nodeInfo: { architecture: 'amd64', bootID: hex(32, 9), containerRuntimeVersion: 'containerd://2.1.4', kernelVersion: '6.12.48', kubeProxyVersion: '', kubeletVersion: 'v1.36.3', machineID: hex(32, 10), operatingSystem: 'linux', osImage: 'Debian GNU/Linux 13 (trixie)', systemUUID: hex(32, 11) },
    },
  };
}

/** A CronJob's Job (not an unpack Job: its name is no bundle hash), mid-run status update. */
export function nonOlmJob(name = 'backup-29384756', rv = 9_001_234): KubeObj {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: 'ops',
      uid: `0b5e7c1a-3d2f-4e6a-9c8b-${hex(12, 4)}`,
      resourceVersion: String(rv),
      generation: 1,
      labels: { 'batch.kubernetes.io/controller-uid': '0b5e7c1a-3d2f-4e6a-9c8b-000000000001', 'batch.kubernetes.io/job-name': name, 'controller-uid': '0b5e7c1a-3d2f-4e6a-9c8b-000000000001', 'job-name': name },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'backup', uid: '7f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b', controller: true, blockOwnerDeletion: true }],
      managedFields: [
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'batch/v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:ownerReferences': { '.': {}, 'k:{"uid":"7f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"}': {} } }, 'f:spec': { 'f:backoffLimit': {}, 'f:completionMode': {}, 'f:completions': {}, 'f:parallelism': {}, 'f:suspend': {}, 'f:template': {} } } },
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'batch/v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:active': {}, 'f:ready': {}, 'f:startTime': {}, 'f:terminating': {}, 'f:uncountedTerminatedPods': {} } }, subresource: 'status' },
      ],
    },
    spec: {
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      completions: 1,
      parallelism: 1,
      suspend: false,
      template: { metadata: { labels: { 'job-name': name } }, spec: { restartPolicy: 'OnFailure', containers: [{ name: 'backup', image: 'registry.example.com/ops/backup:1.4', args: ['--target', 's3://backups/daily', '--compress'], resources: { requests: { cpu: '250m', memory: '256Mi' } }, env: [{ name: 'AWS_REGION', value: 'eu-west-1' }] }] } },
    },
    status: { active: 1, ready: 1, terminating: 0, startTime: T, uncountedTerminatedPods: {} },
  };
}

/**
 * A CatalogSource registry pod's status update while it serves (~6 KB: probes, tolerations,
 * managedFields, container statuses). The catalog Pods the source selects send these all day
 * (probe flaps, restarts, OLM's catalog polling); Ready and not being deleted: no action.
 */
export function readyCatalogPodUpdate(name = 'redhat-operators-7xq2p', rv = 5_432_100): KubeObj {
  const catalog = 'redhat-operators';
  const csUid = '5d0f6a1e-2b3c-4d5e-8f90-a1b2c3d4e5f6';
  const probe = { exec: { command: ['grpc_health_probe', '-addr=:50051'] }, failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 10, successThreshold: 1, timeoutSeconds: 5 };
  const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: T });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${catalog}-`,
      namespace: 'openshift-marketplace',
      uid: `9a8b7c6d-5e4f-4a3b-8c2d-${hex(12, 21)}`,
      resourceVersion: String(rv),
      creationTimestamp: T,
      labels: { 'olm.catalogSource': catalog, 'olm.managed': 'true', 'olm.pod-spec-hash': 'Bq4Xr9kLm2Tz8Vd1Wc7Ye3Hn6Jf5Gs0Pa' },
      annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true', 'openshift.io/scc': 'restricted-v2', 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' },
      ownerReferences: [{ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', name: catalog, uid: csUid, controller: true, blockOwnerDeletion: false }],
      managedFields: [
        { manager: 'catalog', operation: 'Update', apiVersion: 'v1', time: T, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:cluster-autoscaler.kubernetes.io/safe-to-evict': {} }, 'f:generateName': {}, 'f:labels': { '.': {}, 'f:olm.catalogSource': {}, 'f:olm.managed': {}, 'f:olm.pod-spec-hash': {} }, 'f:ownerReferences': { '.': {}, [`k:{"uid":"${csUid}"}`]: {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"registry-server"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:livenessProbe': {}, 'f:name': {}, 'f:ports': {}, 'f:readinessProbe': {}, 'f:resources': {}, 'f:securityContext': {}, 'f:startupProbe': {}, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {} } }, 'f:nodeSelector': {}, 'f:securityContext': {}, 'f:serviceAccount': {}, 'f:serviceAccountName': {}, 'f:tolerations': {} } } },
        { manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: T, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"ContainersReady"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"Initialized"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"PodReadyToStartContainers"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:hostIPs': {}, 'f:phase': {}, 'f:podIP': {}, 'f:podIPs': { '.': {}, 'k:{"ip":"10.128.2.17"}': { '.': {}, 'f:ip': {} } }, 'f:startTime': {} } } },
      ],
    },
    spec: {
      containers: [{
        name: 'registry-server',
        image: 'registry.redhat.io/redhat/redhat-operator-index:v4.18',
        imagePullPolicy: 'Always',
        ports: [{ name: 'grpc', containerPort: 50051, protocol: 'TCP' }],
        livenessProbe: probe,
        readinessProbe: { ...probe, initialDelaySeconds: 5 },
        startupProbe: { ...probe, failureThreshold: 10, initialDelaySeconds: 0 },
        resources: { requests: { cpu: '10m', memory: '50Mi' } },
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: false, runAsNonRoot: true, runAsUser: 1000680000 },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'FallbackToLogsOnError',
        volumeMounts: [{ name: 'kube-api-access-x7k2q', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
      }],
      nodeName: 'worker-3',
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      serviceAccountName: catalog,
      serviceAccount: catalog,
      securityContext: { fsGroup: 1000680000, seLinuxOptions: { level: 's0:c26,c15' }, seccompProfile: { type: 'RuntimeDefault' } },
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
      ],
      volumes: [{ name: 'kube-api-access-x7k2q', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } }],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      priority: 0,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
    },
    status: {
      phase: 'Running',
      conditions: [cond('PodReadyToStartContainers'), cond('Initialized'), cond('Ready'), cond('ContainersReady'), cond('PodScheduled')],
      hostIP: '10.0.3.41',
      hostIPs: [{ ip: '10.0.3.41' }],
      podIP: '10.128.2.17',
      podIPs: [{ ip: '10.128.2.17' }],
      startTime: T,
      qosClass: 'Burstable',
      containerStatuses: [{
        name: 'registry-server',
        ready: true,
        started: true,
        restartCount: 0,
        image: 'registry.redhat.io/redhat/redhat-operator-index:v4.18',
        imageID: `registry.redhat.io/redhat/redhat-operator-index@sha256:${hex(64, 22)}`,
        containerID: `cri-o://${hex(64, 23)}`,
        state: { running: { startedAt: T } },
        lastState: {},
        volumeMounts: [{ name: 'kube-api-access-x7k2q', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true, recursiveReadOnly: 'Disabled' }],
      }],
    },
  };
}

/** A CSV copied by OLM into a watched namespace (~60 KB: icon, description, install strategy, CRD descriptors). */
export function copiedCsv(namespace = 'team-a', rv = 7_654_321): KubeObj {
  const name = 'etcdoperator.v0.9.4';
  const owned = Array.from({ length: 12 }, (_, i) => ({
    name: `resource${i}s.example.com`,
    version: 'v1beta1',
    kind: `Resource${i}`,
    displayName: `Resource ${i}`,
    description: `Represents resource ${i} managed by the operator. `.repeat(6),
    specDescriptors: Array.from({ length: 6 }, (_, j) => ({ path: `field${j}`, displayName: `Field ${j}`, description: `Setting ${j} of resource ${i}. `.repeat(3), 'x-descriptors': ['urn:alm:descriptor:com.tectonic.ui:text'] })),
    statusDescriptors: Array.from({ length: 4 }, (_, j) => ({ path: `status${j}`, displayName: `Status ${j}`, description: `Observed state ${j}.`, 'x-descriptors': ['urn:alm:descriptor:text'] })),
  }));
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name,
      namespace,
      uid: `2d3e4f5a-6b7c-4d8e-9f0a-${hex(12, 6)}`,
      resourceVersion: String(rv),
      generation: 1,
      labels: { 'olm.copiedFrom': 'operators', 'operators.coreos.com/etcd.operators': '' },
      annotations: { 'olm.operatorGroup': 'global-operators', 'olm.operatorNamespace': 'operators', 'olm.targetNamespaces': '', capabilities: 'Full Lifecycle', categories: 'Database', containerImage: 'quay.io/coreos/etcd-operator@sha256:' + hex(64, 7), 'alm-examples': JSON.stringify(owned.slice(0, 4).map((o) => ({ apiVersion: 'example.com/v1beta1', kind: o.kind, metadata: { name: 'example' }, spec: { size: 3 } }))) },
    },
    spec: {
      displayName: 'etcd',
      description: 'etcd is a distributed key value store that provides a reliable way to store data across a cluster of machines. '.repeat(40),
      version: '0.9.4',
      maturity: 'alpha',
      icon: [{ base64data: base64Like(23_000), mediatype: 'image/svg+xml' }],
      keywords: ['etcd', 'key value', 'database', 'coreos', 'open source'],
      maintainers: [{ name: 'etcd Community', email: 'etcd-dev@googlegroups.com' }],
      provider: { name: 'CNCF' },
      installModes: ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({ type, supported: true })),
      customresourcedefinitions: { owned },
      install: {
        strategy: 'deployment',
        spec: {
          permissions: [{ serviceAccountName: 'etcd-operator', rules: Array.from({ length: 8 }, (_, i) => ({ apiGroups: [`group${i}.example.com`], resources: ['*'], verbs: ['*'] })) }],
          deployments: [{ name: 'etcd-operator', spec: { replicas: 1, selector: { matchLabels: { name: 'etcd-operator-alm-owned' } }, template: { metadata: { name: 'etcd-operator-alm-owned', labels: { name: 'etcd-operator-alm-owned' } }, spec: { serviceAccountName: 'etcd-operator', containers: ['etcd-operator', 'etcd-backup-operator', 'etcd-restore-operator'].map((c) => ({ name: c, image: 'quay.io/coreos/etcd-operator@sha256:' + hex(64, 8), command: [c, '--create-crd=false'], env: [{ name: 'MY_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }, { name: 'MY_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] })) } } } }],
        },
      },
    },
    status: {
      phase: 'Succeeded',
      reason: 'Copied',
      message: 'The operator is running in operators but is managing this namespace',
      lastUpdateTime: T,
      lastTransitionTime: T,
      conditions: ['Pending', 'InstallReady', 'Installing', 'Succeeded'].map((phase) => ({ phase, reason: phase === 'Succeeded' ? 'InstallSucceeded' : 'RequirementsMet', message: `phase ${phase}`, lastUpdateTime: T, lastTransitionTime: T })),
      requirementStatus: owned.map((o) => ({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', name: o.name, status: 'Present', message: 'CRD is present and Established condition is true', uuid: hex(32, o.name.length) })),
    },
  };
}

/** A healthy Subscription (installed, at the latest known CSV): a status refresh by the catalog operator. */
export function healthySubscription(name = 'etcd', rv = 6_543_210): KubeObj {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name, namespace: 'operators', uid: `5d4c3b2a-1f0e-4d9c-8b7a-${hex(12, 2)}`, resourceVersion: String(rv), generation: 1, labels: { 'operators.coreos.com/etcd.operators': '' } },
    spec: { channel: 'singlenamespace-alpha', installPlanApproval: 'Automatic', name: 'etcd', source: 'operatorhubio-catalog', sourceNamespace: 'olm', startingCSV: 'etcdoperator.v0.9.4' },
    status: {
      catalogHealth: [{ catalogSourceRef: { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', name: 'operatorhubio-catalog', namespace: 'olm', resourceVersion: '1234', uid: hex(32, 1) }, healthy: true, lastUpdated: T }],
      conditions: [
        { type: 'CatalogSourcesUnhealthy', status: 'False', reason: 'AllCatalogSourcesHealthy', message: 'all available catalogsources are healthy', lastTransitionTime: T },
        { type: 'BundleUnpacking', status: 'False', reason: 'UnpackJobsComplete', lastTransitionTime: T },
      ],
      currentCSV: 'etcdoperator.v0.9.4',
      installedCSV: 'etcdoperator.v0.9.4',
      installPlanGeneration: 1,
      installPlanRef: { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abcde', namespace: 'operators', resourceVersion: '2345', uid: hex(32, 2) },
      installplan: { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan', name: 'install-abcde', uuid: hex(32, 2) },
      lastUpdated: T,
      state: 'AtLatestKnown',
    },
  };
}

function hex(n: number, seed: number): string {
  let s = '';
  let x = (seed + 1) * 2654435761;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += (x >>> 8).toString(16).padStart(6, '0');
  }
  return s.slice(0, n);
}

function base64Like(n: number): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let s = '';
  let x = 7;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += abc[(x >>> 16) & 63];
  }
  return s;
}
