/**
 * vitest globalSetup for the `olm` project: builds (or finds cached) the real-OLM test bed
 * (test/control-plane/build-olm.sh), starts its own control plane with the controllers real OLM needs
 * (job, deployment and replicaset controllers besides GC/namespaces), a real kube-scheduler and kwok
 * (simulated Nodes and pod lifecycles) with two kwok Nodes, and provisions one user per OLM
 * controller so the audit log separates OLM's writes from olm-medic's. OLM itself is started per test
 * file (test/olm/bed.ts), at the version that file needs.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startControlPlane, type ControlPlane } from '../control-plane/control-plane.js';
import { installCrds } from '../control-plane/crds.js';
import type { ProvidedControlPlane } from '../control-plane/global-setup.js';
import { shippedKubeconfig, SHIPPED_USER } from '../control-plane/shipped-identity.js';
import { kwokArgs, kwokNode } from './kwok.js';
import { startProc, until, type Proc } from './procs.js';
import { restFromKubeconfig, type Obj } from './rest.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface ProvidedOlmBed {
  /** OLM version -> directory with catalog, olm, opm and crds/ (from build-olm.sh). */
  versions: Record<string, string>;
  catalogServer: string;
  /** Kubeconfigs of the users the bed's processes run as (audit usernames = keys). */
  users: { catalog: string; olm: string; unpack: string };
  kubeconfigs: { catalog: string; olm: string; unpack: string };
  nodes: string[];
  /** kwok (binary and its user's kubeconfig), for a suite that runs its own Node it can stop. */
  kwok: { bin: string; kubeconfig: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    olmBed: ProvidedOlmBed;
  }
}

export const OLM_USERS = { catalog: 'olm-catalog-operator', olm: 'olm-olm-operator', unpack: 'olm-unpack-pod' } as const;

/** Runs build-olm.sh (which skips what is cached) and parses its `<name> <path>` lines. */
export function buildOlmBed(versions: string[]): Record<string, string> {
  const out = execFileSync('bash', [join(here, '..', 'control-plane', 'build-olm.sh'), ...versions], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  return Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ') as [string, string]));
}

export function olmVersions(): string[] {
  // The oldest and newest of the matrix by default (`npm test`, CI); v0.28.0 on request.
  return (process.env.OLM_VERSIONS ?? 'v0.25.0 v0.46.0').split(/[\s,]+/).filter(Boolean);
}

let cp: ControlPlane | undefined;
const procs: Proc[] = [];

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const versions = olmVersions();
  const built = buildOlmBed(versions);
  cp = await startControlPlane({
    users: {
      'olm-medic-server': ['system:masters'],
      [OLM_USERS.catalog]: ['system:masters'],
      [OLM_USERS.olm]: ['system:masters'],
      [OLM_USERS.unpack]: ['system:masters'],
      'system:kube-scheduler': ['system:masters'],
      kwok: ['system:masters'],
    },
    controllers: [
      'garbage-collector-controller',
      'namespace-controller',
      'ttl-after-finished-controller',
      'serviceaccount-controller',
      'job-controller',
      'deployment-controller',
      'replicaset-controller',
      // Removes the not-ready taint the apiserver's TaintNodesByCondition admission puts on every
      // new Node, taints/evicts when a kwok Node stops heartbeating.
      'node-lifecycle-controller',
      'taint-eviction-controller',
      // EndpointSlices from pod readiness: the bed's stand-in for kube-proxy (service-proxy.ts) reads them.
      'endpointslice-controller',
    ],
  });
  // The fixture CRDs are only for the shipped identity's RBAC rendering; the OLM suites replace them
  // with the upstream CRDs of the OLM version under test (bed.ts, server-side apply).
  await installCrds(cp.admin.kubeconfig);

  const sched = cp.user('system:kube-scheduler').kubeconfig;
  procs.push(startProc('kube-scheduler', built['kube-scheduler']!, [`--kubeconfig=${sched}`, '--leader-elect=false', '--secure-port=0', '--v=0'], join(cp.dir, 'kube-scheduler.log')));
  procs.push(
    startProc('kwok', built.kwok!, kwokArgs(cp.user('kwok').kubeconfig, 'fake', '10.0.0.1/24'), join(cp.dir, 'kwok.log')),
  );
  const admin = restFromKubeconfig(cp.admin.kubeconfig);
  const nodes = ['kwok-node-a', 'kwok-node-b'];
  for (const name of nodes) await admin.create('/api/v1/nodes', kwokNode(name, 'fake'));
  await until(async () => {
    const ready = (await admin.list<Obj>('/api/v1/nodes')).filter((n) => n.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === nodes.length;
  }, 'kwok to make its Nodes Ready', 60_000, procs);

  const ctx: ProvidedControlPlane = {
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
  };
  project.provide('controlPlane', ctx);
  project.provide('olmBed', {
    versions: Object.fromEntries(versions.map((v) => [v, built[`olm-${v}`]!])),
    catalogServer: built['catalog-server']!,
    users: { ...OLM_USERS },
    kubeconfigs: { catalog: cp.user(OLM_USERS.catalog).kubeconfig, olm: cp.user(OLM_USERS.olm).kubeconfig, unpack: cp.user(OLM_USERS.unpack).kubeconfig },
    nodes,
    kwok: { bin: built.kwok!, kubeconfig: cp.user('kwok').kubeconfig },
  });
  return async () => {
    for (const p of procs.reverse()) await p.stop();
    await cp?.stop();
    process.stderr.write('[olm-bed] control plane stopped and cleaned up\n');
  };
}
