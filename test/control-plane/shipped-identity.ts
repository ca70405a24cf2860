/**
 * Applies the RBAC shipped in infra/ (rendered with kustomize) to the control plane and mints a
 * token for the function's ServiceAccount (TokenRequest), so tests run as exactly what we ship.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { parseAllDocuments } from 'yaml';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject } from '../../shared/kube/types.js';
import type { ControlPlane } from './control-plane.js';

export const SHIPPED_SA = { namespace: 'olm-medic', name: 'olm-medic' };
export const SHIPPED_USER = `system:serviceaccount:${SHIPPED_SA.namespace}:${SHIPPED_SA.name}`;

export function renderInfra(kustomize: string, overlay = 'enforce'): KubeObject[] {
  const out = execFileSync(kustomize, ['build', `infra/overlays/${overlay}`], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJSON() as KubeObject);
}

export async function shippedKubeconfig(cp: ControlPlane, serviceAccount = SHIPPED_SA.name): Promise<string> {
  const kube = createKube(loadKubeConfig(cp.admin.kubeconfig));
  const objects = renderInfra(cp.binaries.kustomize).filter((o) => ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind));
  objects.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
  for (const o of objects) {
    await kube.create(o, { dryRun: false }).catch((e: { alreadyExists?: boolean }) => {
      if (!e.alreadyExists) throw e;
    });
  }
  const res = await fetch(`${cp.server}/api/v1/namespaces/${SHIPPED_SA.namespace}/serviceaccounts/${serviceAccount}/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cp.admin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86_400 } }),
    dispatcher: new Agent({ connect: { ca: readFileSync(cp.caFile) } }),
  });
  if (!res.ok) throw new Error(`TokenRequest for ${serviceAccount} failed: ${res.status} ${await res.text()}`);
  const token = ((await res.json()) as { status: { token: string } }).status.token;
  const cfg = JSON.parse(readFileSync(cp.admin.kubeconfig, 'utf8'));
  cfg.users = [{ name: 'olm-medic-sa', user: { token } }];
  cfg.contexts[0].context.user = 'olm-medic-sa';
  const path = join(cp.dir, `shipped-${serviceAccount}.kubeconfig`);
  writeFileSync(path, JSON.stringify(cfg, null, 2));
  return path;
}
