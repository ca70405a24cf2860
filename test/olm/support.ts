/** Shared pieces of the olm suites: olm-medic (server + Knative's real adapter), audit counting. */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject, it } from 'vitest';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { AuditEntry } from '../control-plane/control-plane.js';
import { renderInfra } from '../control-plane/shipped-identity.js';
import { startAdapter, waitForEveryKind, type RunningAdapter } from '../support/adapter.js';
import { startServer, type RunningServer } from '../support/server.js';

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * This run's OLM versions among `wanted` (OLM_VERSIONS picks the run's). With none, registers a
 * skipped case saying so: a file without any test fails with "No test suite found".
 */
export function runVersions(wanted: readonly string[]): string[] {
  const versions = Object.keys(inject('olmBed').versions).filter((v) => wanted.includes(v));
  if (versions.length === 0) it.skip(`runs only when OLM_VERSIONS includes ${wanted.join(' or ')}`, () => {});
  return versions;
}

/** Write requests (create/update/patch/delete) `user` made since `since` (ms), from the audit log. */
export function writesBy(user: string, since: number): (AuditEntry & { stageTimestamp: string })[] {
  const cp = inject('controlPlane');
  return readFileSync(cp.auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry & { stageTimestamp: string })
    .filter((e) => e.user?.username === user && WRITES.has(e.verb) && Date.parse(e.stageTimestamp) >= since);
}

export const describeWrite = (e: AuditEntry): string => `${e.verb} ${e.requestURI} -> ${e.responseStatus?.code}`;

/** A request's path without its query string (`?fieldManager=...`, `?dryRun=...`). */
export const pathOf = (e: AuditEntry): string => e.requestURI.split('?')[0]!;

/**
 * Whether this OLM version puts its own finalizer (operators.coreos.com/csv-cleanup) on every CSV: from
 * v0.27.0 on. Before that (v0.25.0 in the bed) olm-medic adds its own finalizer to every CSV by design,
 * so those patches (and their Events) are olm-medic writes even in a healthy install.
 */
export function olmAddsCsvFinalizer(version: string): boolean {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new Error(`not an OLM version: ${version}`);
  return Number(m[1]) > 0 || Number(m[2]) >= 27;
}

/** The CLI (`olm-medic ...`) as the shipped ServiceAccount. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const cp = inject('controlPlane');
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/olm-medic.mjs', ...args], { env: { PATH: process.env.PATH ?? '', KUBECONFIG: cp.shippedKubeconfig, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export interface Medic {
  server: RunningServer;
  adapter: RunningAdapter;
  stop(): Promise<void>;
}

/** The production server as the shipped ServiceAccount, fed by Knative's real ApiServerSource adapter. */
export async function startMedic(env: Record<string, string> = {}): Promise<Medic> {
  const cp = inject('controlPlane');
  const server = await startServer({ KUBECONFIG: cp.shippedKubeconfig, LOG_LEVEL: 'info', ...env });
  const source = renderInfra(cp.binaries.kustomize).find((o) => o.kind === 'ApiServerSource')!;
  const adapter = startAdapter(cp.binaries.adapter, { kubeconfig: cp.sourceKubeconfig, sink: server.url, source });
  await waitForEveryKind(createKube(loadKubeConfig(cp.adminKubeconfig)), server.url, source);
  return {
    server,
    adapter,
    async stop() {
      await adapter.stop();
      await server.stop();
      writeFileSync(join(cp.dir, `olm-medic-server-${Date.now()}.log`), server.output());
      writeFileSync(join(cp.dir, `olm-medic-adapter-${Date.now()}.log`), adapter.output());
    },
  };
}
