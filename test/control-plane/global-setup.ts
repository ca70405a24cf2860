/** vitest globalSetup: one real control plane for the integration project, with OLM's CRDs installed. */
import type { TestProject } from 'vitest/node';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { installCrds } from './crds.js';
import { shippedKubeconfig, SHIPPED_USER } from './shipped-identity.js';

export interface ProvidedControlPlane {
  server: string;
  dir: string;
  adminKubeconfig: string;
  medicKubeconfig: string;
  /** A separate identity for spawned server processes, so their requests are counted apart. */
  serverKubeconfig: string;
  /** The ServiceAccount shipped in infra/, with exactly the shipped RBAC. */
  shippedKubeconfig: string;
  shippedUser: string;
  /** The ApiServerSource's shipped ServiceAccount (get/list/watch only). */
  sourceKubeconfig: string;
  auditLog: string;
  /** Paths of the cached binaries (kustomize, adapter, ...). */
  binaries: { kustomize: string; adapter: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    controlPlane: ProvidedControlPlane;
  }
}

let cp: ControlPlane | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  cp = await startControlPlane({ users: { 'olm-medic-server': ['system:masters'] } });
  await installCrds(cp.admin.kubeconfig);
  project.provide('controlPlane', {
    server: cp.server,
    dir: cp.dir,
    adminKubeconfig: cp.admin.kubeconfig,
    medicKubeconfig: cp.medic.kubeconfig,
    serverKubeconfig: cp.user('olm-medic-server').kubeconfig,
    shippedKubeconfig: await shippedKubeconfig(cp),
    shippedUser: SHIPPED_USER,
    sourceKubeconfig: await shippedKubeconfig(cp, 'olm-medic-source'),
    auditLog: `${cp.dir}/audit.log`,
    binaries: { kustomize: cp.binaries.kustomize, adapter: cp.binaries.adapter },
  });
  return async () => {
    await cp?.stop();
    process.stderr.write('[control-plane] stopped and cleaned up\n');
  };
}
