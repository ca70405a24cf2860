/**
 * The bed's simulated Nodes must behave like Nodes with a live kubelet for as long as a suite runs:
 * kube-controller-manager's node-lifecycle-controller marks a Node NotReady once it has not heard from
 * it for --node-monitor-grace-period (50 s by default) and then sets every pod on it Ready=False. kwok,
 * unlike a kubelet, never sets those pods Ready again, so one missed heartbeat leaves every operator
 * Deployment unavailable for good: OLM then moves the CSV Succeeded -> Failed -> Installing and the
 * install or upgrade never completes (what the healthy suite hit on v0.25.0, v0.28.0 and v0.46.0 whenever
 * it outlived the first 55 s of the Nodes' life). No OLM here: only the Nodes, a Deployment, time.
 */
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { namespace } from './bed.js';
import { until } from './procs.js';
import { restFromKubeconfig, type Obj } from './rest.js';

const cp = inject('controlPlane');
const bed = inject('olmBed');

type Cond = { type: string; status: string; lastTransitionTime?: string };
const cond = (o: Obj | undefined, type: string): Cond | undefined => o?.status?.conditions?.find((c: Cond) => c.type === type);

describe('the bed\'s kwok Nodes', () => {
  it('keep heartbeating (node Leases renewed): a Ready pod stays Ready past node-monitor-grace-period', async () => {
    const admin = restFromKubeconfig(cp.adminKubeconfig);
    const ns = await namespace(admin, 'nodes');
    await admin.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'probe', namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'probe' } },
        template: {
          metadata: { labels: { app: 'probe' } },
          spec: { nodeSelector: { type: 'kwok' }, containers: [{ name: 'c', image: 'registry.invalid/olm-medic/probe:test' }] },
        },
      },
    });
    const available = async (): Promise<boolean> => cond(await admin.get<Obj>(`/apis/apps/v1/namespaces/${ns}/deployments/probe`), 'Available')?.status === 'True';
    await until(available, `${ns}/probe Available`, 60_000);
    const readySince = Date.now();

    // Longer than the node-monitor grace period (50 s) plus its 5 s monitor period, with slack.
    const leaseRenewals = new Map<string, Set<string>>(bed.nodes.map((n) => [n, new Set<string>()]));
    while (Date.now() - readySince < 70_000) {
      for (const n of bed.nodes) {
        const lease = await admin.get<Obj>(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${n}`);
        if (lease?.spec?.renewTime) leaseRenewals.get(n)!.add(lease.spec.renewTime);
      }
      await new Promise((r) => setTimeout(r, 5_000));
    }

    for (const n of bed.nodes) {
      const node = await admin.get<Obj>(`/api/v1/nodes/${n}`);
      expect(cond(node, 'Ready')?.status, n).toBe('True');
      expect(node?.spec?.taints ?? [], n).toEqual([]);
    }
    const pods = await admin.list<Obj>(`/api/v1/namespaces/${ns}/pods`);
    expect(pods.length).toBe(2);
    for (const p of pods) {
      const ready = cond(p, 'Ready');
      expect(ready?.status, `${p.metadata.name} Ready (${JSON.stringify(p.status?.conditions)})`).toBe('True');
    }
    expect(await available()).toBe(true);
    // A kubelet renews its node Lease every 10 s (a quarter of its 40 s duration): several renewals seen.
    for (const [n, seen] of leaseRenewals) expect(seen.size, `${n}: distinct Lease renewTimes`).toBeGreaterThanOrEqual(3);
    await admin.delete(`/api/v1/namespaces/${ns}`);
  });
});
