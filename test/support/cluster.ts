/** Test-side access to the shared real control plane started by the integration globalSetup. */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { inject } from 'vitest';
import pino from 'pino';
import { loadConfig, type Config } from '../../shared/core/config.js';
import type { AnyFunction } from '../../shared/core/types.js';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { Kube, KubeObject, Ref } from '../../shared/kube/types.js';
import { createRuntime, type Runtime, type RuntimeOverrides } from '../../shared/wiring.js';
import type { AuditEntry } from '../control-plane/control-plane.js';

export interface TestCluster {
  admin: Kube;
  kubeconfig: { admin: string; medic: string; server: string; shipped: string };
  /** Creates a fresh namespace (unique name) and returns its name. */
  namespace(prefix?: string): Promise<string>;
  create<T extends KubeObject>(obj: T): Promise<T>;
  /** Merge-patches the status subresource, as OLM and the kubelet do. */
  setStatus<T extends KubeObject>(obj: T, status: unknown): Promise<T>;
  get<T extends KubeObject>(ref: Ref): Promise<T | undefined>;
  /** Kubernetes Events written by olm-medic about objects in `namespace`. */
  medicEvents(namespace: string): Promise<MedicEvent[]>;
  /** Audit-log entries for requests made by `user` (default: the shipped ServiceAccount). */
  audit(user?: string): AuditEntry[];
  /** The audit username of the shipped ServiceAccount. */
  shippedUser: string;
  /**
   * A runtime (engine, executor, metrics) running as the ServiceAccount shipped in infra/, with
   * exactly the shipped RBAC (pass KUBECONFIG: kubeconfig.medic for the unrestricted test identity).
   */
  runtime(functions: AnyFunction[], env?: Record<string, string>, overrides?: Pick<RuntimeOverrides, 'now' | 'localNow' | 'burstSnapshots'>): Runtime;
}

export interface MedicEvent extends KubeObject {
  reason: string;
  note: string;
  type: string;
  action: string;
  reportingController: string;
  regarding: { kind: string; name: string; namespace?: string; uid?: string };
}

export function testCluster(): TestCluster {
  const cp = inject('controlPlane');
  const admin = createKube(loadKubeConfig(cp.adminKubeconfig));
  return {
    admin,
    kubeconfig: { admin: cp.adminKubeconfig, medic: cp.medicKubeconfig, server: cp.serverKubeconfig, shipped: cp.shippedKubeconfig },
    async namespace(prefix = 't') {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`;
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false });
      return name;
    },
    async create<T extends KubeObject>(obj: T) {
      return (await admin.create(obj, { dryRun: false })) as T;
    },
    async setStatus<T extends KubeObject>(obj: T, status: unknown) {
      const ref = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace };
      return (await admin.mergePatch(ref, { status }, { dryRun: false, subresource: 'status' })) as T;
    },
    get: (ref) => admin.get(ref),
    async medicEvents(namespace: string) {
      const out: MedicEvent[] = [];
      for await (const e of admin.list<MedicEvent>('events.k8s.io/v1', 'Event', { namespace, labelSelector: 'app.kubernetes.io/managed-by=olm-medic' })) out.push(e);
      return out;
    },
    shippedUser: cp.shippedUser,
    audit(user = cp.shippedUser) {
      if (!existsSync(cp.auditLog)) return [];
      return readFileSync(cp.auditLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEntry)
        .filter((e) => e.user?.username === user);
    },
    runtime(functions, env = {}, overrides = {}) {
      const config: Config = loadConfig({ LOG_LEVEL: 'silent', KUBECONFIG: cp.shippedKubeconfig, ...env }, functions);
      return createRuntime(config, functions, { log: pino({ level: config.logLevel }), ...overrides });
    },
  };
}

export async function eventually<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
