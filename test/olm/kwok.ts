/** kwok's flags and Nodes, shared by the bed's own kwok and a suite's Node that it can stop (kill its kwok). */

/**
 * A kwok controller managing the Nodes annotated `kwok.x-k8s.io/node=<annotation>` (and their pods),
 * handing out pod IPs from `cidr`.
 */
export function kwokArgs(kubeconfig: string, annotation: string, cidr: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=${annotation}`,
    '--node-ip=127.0.0.1',
    `--cidr=${cidr}`,
    // A kubelet's heartbeat. kwok v0.7.0's flag defaults to 0 (its config default of 40 is not applied
    // to the flag), and with 0 it neither renews node Leases nor picks its 20 s status heartbeat: it
    // picks the Lease variant's 10-20 min one (pkg/kwok/cmd/root.go:171, getDefaultNodeStages(lease ==
    // 0)). The node-lifecycle-controller then marks the Nodes NotReady 50 s after their last status
    // (node-monitor-grace-period) and sets every pod on them Ready=False, which kwok never undoes:
    // operator Deployments turned unavailable for good and OLM's CSVs fell back to Installing
    // (test/olm/nodes.test.ts). 40 s = the kubelet's default: Leases renewed every 10 s, status every 20-45 s.
    '--node-lease-duration-seconds=40',
  ];
}

/**
 * A Node for the kwok controller of `annotation`. kwok v0.7.0 filters Nodes by annotation in its
 * informer, so removing the annotation does NOT stop it managing a Node: a Node stops heartbeating
 * only when its kwok process stops.
 */
export function kwokNode(name: string, annotation: string): { apiVersion: string; kind: string; metadata: object; spec: object; status: object } {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    // No kubernetes.io/os label: OLM's unpack pods (nodeSelector kubernetes.io/os=linux) stay
    // unscheduled, so kwok never "completes" them; test/olm/unpacker.ts plays them instead.
    metadata: { name, annotations: { 'kwok.x-k8s.io/node': annotation, 'node.alpha.kubernetes.io/ttl': '0' }, labels: { type: 'kwok', 'kubernetes.io/hostname': name } },
    spec: {},
    status: { allocatable: { cpu: '32', memory: '256Gi', pods: '110' }, capacity: { cpu: '32', memory: '256Gi', pods: '110' } },
  };
}
