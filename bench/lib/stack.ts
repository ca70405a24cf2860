/**
 * Shared set-up for the benchmarks that need a real control plane: etcd + kube-apiserver (+ KCM),
 * OLM's CRDs, the RBAC shipped in infra/ with a token for the function's ServiceAccount, and an
 * audit-log reader. Everything started is registered in a Teardown, stopped in reverse order.
 */
import { startControlPlane, type ControlPlane } from '../../test/control-plane/control-plane.js';
import { installCrds } from '../../test/control-plane/crds.js';
import { shippedKubeconfig, SHIPPED_USER } from '../../test/control-plane/shipped-identity.js';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { Kube } from '../../shared/kube/types.js';
import { AuditLog } from './audit.js';

export { SHIPPED_USER };

export class Teardown {
  private readonly steps: { what: string; run: () => Promise<void> }[] = [];
  add(what: string, run: () => Promise<void>): void {
    this.steps.push({ what, run });
  }
  async run(log: (l: string) => void): Promise<void> {
    for (const s of this.steps.reverse()) {
      try {
        await s.run();
      } catch (e) {
        log(`cleanup of ${s.what} failed: ${e instanceof Error ? e.message : e}`);
      }
    }
    this.steps.length = 0;
  }
}

export interface Stack {
  cp: ControlPlane;
  admin: Kube;
  audit: AuditLog;
  /** Kubeconfig of the shipped function ServiceAccount (audit user SHIPPED_USER). */
  fnKubeconfig: string;
  /** Kubeconfig of the shipped ApiServerSource ServiceAccount. */
  sourceKubeconfig: string;
  startSeconds: number;
}

export async function startStack(td: Teardown, log: (l: string) => void, o: { controllerManager?: boolean } = {}): Promise<Stack> {
  const t0 = performance.now();
  const cp = await startControlPlane({ log, controllerManager: o.controllerManager ?? true });
  td.add('control plane', () => cp.stop());
  await installCrds(cp.admin.kubeconfig);
  const fnKubeconfig = await shippedKubeconfig(cp);
  const sourceKubeconfig = await shippedKubeconfig(cp, 'olm-medic-source');
  return {
    cp,
    admin: createKube(loadKubeConfig(cp.admin.kubeconfig), { timeoutMs: 60_000 }),
    audit: new AuditLog(`${cp.dir}/audit.log`),
    fnKubeconfig,
    sourceKubeconfig,
    startSeconds: (performance.now() - t0) / 1000,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A random lowercase id of `n` characters (DNS-label safe). */
export function randomId(n: number): string {
  let s = '';
  while (s.length < n) s += Math.random().toString(36).slice(2);
  return `b${s.slice(0, n - 1)}`;
}
