/**
 * Finds the control-plane binaries, in this order:
 *   1. KUBEBUILDER_ASSETS (envtest convention: etcd, kube-apiserver; the others are taken from 2/3 if absent)
 *   2. the versioned cache directory outside the repo (~/.cache/olm-medic/k8s-<v>-...)
 *   3. built from the Go module proxy into that cache by build.sh (progress on stderr)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Binaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  adapter: string;
  kustomize: string;
  /** Knative's own defaulting, validation and Trigger filtering (test/control-plane/knative-check). */
  knativeCheck: string;
  /** {eventing,serving}/{crds,configmaps}: Knative's CRDs and default ConfigMaps of the same module versions. */
  knativeConfig: string;
}

const here = dirname(fileURLToPath(import.meta.url));

/** build.sh names knative-check by a hash of its sources (`cat go.mod go.sum main.go | sha256sum`). */
export function knativeCheckName(): string {
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) h.update(readFileSync(join(here, 'knative-check', f)));
  return `knative-check-${h.digest('hex').slice(0, 12)}`;
}

/** build.sh's directory of Knative CRDs + ConfigMaps: knative-<eventing version>-serving-<serving version>. */
export function knativeConfigName(): string {
  const mod = readFileSync(join(here, 'knative-check', 'go.mod'), 'utf8');
  const v = (m: string): string => new RegExp(`^\\s*(?:require\\s+)?${m.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(mod)![1]!;
  return `knative-${v('knative.dev/eventing')}-serving-${v('knative.dev/serving')}`;
}

function fromDir(dir: string): Partial<Binaries> {
  const p = (n: string): string | undefined => (existsSync(join(dir, n)) ? join(dir, n) : undefined);
  const out: Partial<Binaries> = {};
  const set = <K extends keyof Binaries>(k: K, v: string | undefined): void => {
    if (v) out[k] = v;
  };
  set('etcd', p('etcd'));
  set('kubeApiserver', p('kube-apiserver'));
  set('kubeControllerManager', p('kube-controller-manager'));
  set('adapter', p('apiserver_receive_adapter'));
  set('kustomize', p('kustomize'));
  set('knativeCheck', p(knativeCheckName()));
  set('knativeConfig', p(knativeConfigName()));
  return out;
}

/** Runs build.sh (which skips what is cached) and returns its bin directory. */
export function buildIntoCache(): string {
  const out = execFileSync('bash', [join(here, 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const lines = out.trim().split('\n');
  return lines[lines.length - 1]!;
}

export function findBinaries(): Binaries {
  const assets = process.env.KUBEBUILDER_ASSETS ? fromDir(process.env.KUBEBUILDER_ASSETS) : {};
  const need = (b: Partial<Binaries>): boolean => !b.etcd || !b.kubeApiserver || !b.kubeControllerManager || !b.adapter || !b.kustomize || !b.knativeCheck || !b.knativeConfig;
  let found: Partial<Binaries> = { ...assets };
  if (need(found)) {
    const cache = fromDir(buildIntoCache());
    found = { ...cache, ...Object.fromEntries(Object.entries(assets).filter(([, v]) => v)) };
  }
  if (need(found)) throw new Error(`control-plane binaries missing after build: ${JSON.stringify(found)}`);
  return found as Binaries;
}
