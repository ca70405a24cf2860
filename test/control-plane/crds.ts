/** Installs the OLM CRDs from test/fixtures/crds and waits until they are Established. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createKube, loadKubeConfig } from '../../shared/kube/client.js';
import type { KubeObject } from '../../shared/kube/types.js';

const crdDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'crds');

export function loadCrds(): KubeObject[] {
  return readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => parse(readFileSync(join(crdDir, f), 'utf8')) as KubeObject);
}

export async function installCrds(kubeconfig: string): Promise<void> {
  const kube = createKube(loadKubeConfig(kubeconfig));
  const crds = loadCrds();
  for (const crd of crds) {
    try {
      await kube.create(crd, { dryRun: false });
    } catch (e) {
      if (!(e as { alreadyExists?: boolean }).alreadyExists) throw e;
    }
  }
  const deadline = Date.now() + 30_000;
  for (const crd of crds) {
    for (;;) {
      const live = await kube.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: crd.metadata.name,
      });
      if (live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established after 30s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
