/**
 * Knative on the test control plane: installs the CRDs of the same knative.dev/eventing and
 * knative.dev/serving module versions (copied into the cache by build.sh), runs knative-check, and
 * gives raw apiserver access (discovery, server-side apply) for the infra tests.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../shared/kube/types.js';
import { isUnpackJobName } from '../../shared/olm/olm.js';
import { allFunctions } from '../../functions/index.js';
import { findBinaries as find, type Binaries } from './binaries.js';

let found: Binaries | undefined;
/** The cached binaries (build.sh runs at most once per test file). */
const findBinaries = (): Binaries => (found ??= find());

export interface Api {
  server: string;
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** The REST path of a kind (collection), found through discovery. */
  collection(apiVersion: string, kind: string, namespace?: string): Promise<string>;
  /** Server-side apply with dryRun=All (fieldValidation=Ignore, so unknown fields would be pruned, not rejected). */
  applyDryRun(obj: KubeObject): Promise<{ status: number; body: Record<string, unknown> }>;
}

export function api(kubeconfig: string): Api {
  const kc = JSON.parse(readFileSync(kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const server = kc.clusters[0]!.cluster.server;
  const dispatcher = new Agent({ connect: { ca: Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString() } });
  const token = kc.users[0]!.user.token;
  const discovery = new Map<string, { name: string; kind: string; namespaced: boolean }[]>();
  const request: Api['request'] = async (method, path, body, contentType = 'application/json') => {
    const r = await fetch(server + path, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const collection: Api['collection'] = async (apiVersion, kind, namespace) => {
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    if (!discovery.has(base)) {
      const r = await request('GET', base);
      if (r.status !== 200) throw new Error(`discovery ${base}: ${r.status} ${JSON.stringify(r.body)}`);
      discovery.set(base, r.body.resources as { name: string; kind: string; namespaced: boolean }[]);
    }
    const res = discovery.get(base)!.find((x) => x.kind === kind && !x.name.includes('/'));
    if (!res) throw new Error(`${apiVersion} ${kind} is not served`);
    return res.namespaced ? `${base}/namespaces/${namespace ?? 'default'}/${res.name}` : `${base}/${res.name}`;
  };
  return {
    server,
    request,
    collection,
    async applyDryRun(obj) {
      const path = `${await collection(obj.apiVersion, obj.kind, obj.metadata.namespace)}/${obj.metadata.name}`;
      return request('PATCH', `${path}?dryRun=All&fieldManager=olm-medic-infra-test&force=true&fieldValidation=Ignore`, obj, 'application/apply-patch+yaml');
    },
  };
}

/** Paths (dotted, with [i]) in `sent` whose value is missing or different in `got`: what the apiserver pruned or changed. */
export function notKept(sent: unknown, got: unknown, path = ''): string[] {
  if (sent !== null && typeof sent === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(sent) !== Array.isArray(got)) return [path || '.'];
    if (Array.isArray(sent)) {
      const g = got as unknown[];
      if (g.length !== sent.length) return [`${path} (length ${sent.length} -> ${g.length})`];
      return sent.flatMap((v, i) => notKept(v, g[i], `${path}[${i}]`));
    }
    return Object.entries(sent).flatMap(([k, v]) => notKept(v, (got as Record<string, unknown>)[k], path ? `${path}.${k}` : k));
  }
  return sent === got ? [] : [path];
}

/** `kustomize build infra/overlays/<overlay>` with the cached kustomize. */
export function render(overlay: string): KubeObject[] {
  const out = execFileSync(findBinaries().kustomize, ['build', `infra/overlays/${overlay}`], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJSON() as KubeObject);
}

export function knativeDir(): string {
  return findBinaries().knativeConfig;
}

function yamlObjects(dir: string): KubeObject[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJSON() as KubeObject))
    .filter((o) => o?.kind === 'CustomResourceDefinition');
}

/** Installs Knative eventing's and serving's CRDs (idempotent) and waits until they are Established. */
export async function installKnativeCrds(kubeconfig: string): Promise<string[]> {
  const a = api(kubeconfig);
  const dir = knativeDir();
  const crds = [...yamlObjects(join(dir, 'eventing', 'crds')), ...yamlObjects(join(dir, 'serving', 'crds'))];
  const path = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const crd of crds) {
    const r = await a.request('POST', path, crd);
    if (r.status !== 201 && r.status !== 409) throw new Error(`CRD ${crd.metadata.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  }
  const deadline = Date.now() + 60_000;
  for (const crd of crds) {
    for (;;) {
      const r = await a.request('GET', `${path}/${crd.metadata.name}`);
      const conds = ((r.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
      if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established after 60s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return crds.map((c) => c.metadata.name);
}

export interface CheckResult {
  apiVersion: string;
  kind: string;
  name: string;
  checked: boolean;
  errors: string[];
  warnings: string[];
}

function tmpFile(name: string, content: string): string {
  const f = join(mkdtempSync(join(tmpdir(), 'olm-medic-kc-')), name);
  writeFileSync(f, content);
  return f;
}

/** knative-check validate on these objects; status 0 = no errors. */
export function knativeValidate(objects: KubeObject[], kubeconfig?: string): { status: number; results: CheckResult[]; stderr: string } {
  const b = findBinaries();
  const file = tmpFile('objects.yaml', objects.map((o) => stringify(o)).join('---\n'));
  const r = spawnSync(b.knativeCheck, [
    'validate',
    '--eventing-config', join(b.knativeConfig, 'eventing', 'configmaps'),
    '--serving-config', join(b.knativeConfig, 'serving', 'configmaps'),
    ...(kubeconfig ? ['--kubeconfig', kubeconfig] : []),
    file,
  ], { encoding: 'utf8' });
  return { status: r.status ?? -1, stderr: r.stderr, results: r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as CheckResult) };
}

export interface Routed {
  file: string;
  line: number;
  type: string;
  kind?: string;
  apiversion?: string;
  name?: string;
  delivered: string[];
}

/** knative-check route: which of these Triggers (of `broker`) deliver each event of the JSONL files. */
export function knativeRoute(triggers: KubeObject[], broker: string, eventFiles: string[]): Routed[] {
  const b = findBinaries();
  const file = tmpFile('triggers.yaml', triggers.map((o) => stringify(o)).join('---\n'));
  const out = execFileSync(b.knativeCheck, ['route', '--broker', broker, file, ...eventFiles], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Routed);
}

export function jsonlFile(name: string, events: unknown[]): string {
  return tmpFile(name, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
}

/** knative-check jobsink-secrets: the Secrets Knative's JobSink would store for these events. */
export function jobsinkSecrets(eventsFile: string, namespace: string, sink: string): KubeObject[] {
  const out = execFileSync(findBinaries().knativeCheck, ['jobsink-secrets', '--namespace', namespace, '--name', sink, eventsFile], { encoding: 'utf8', maxBuffer: 256 << 20 });
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as KubeObject);
}

/** The kinds the functions declare (`apiVersion/Kind`). */
export const wantedKinds = new Set(allFunctions.flatMap((f) => f.kinds));

/**
 * Events the functions want, so exactly one Trigger must deliver them: Resource-mode events of a
 * declared kind (Jobs: only names an unpack Job can have, job-conflict's first test), and the sweep.
 */
export function wanted(e: { type: string; kind?: string; apiversion?: string; name?: string }): boolean {
  if (e.type === 'dev.knative.sources.ping') return true;
  if (!e.type.startsWith('dev.knative.apiserver.resource.') || !wantedKinds.has(`${e.apiversion}/${e.kind}`)) return false;
  return e.kind !== 'Job' || isUnpackJobName(e.name ?? '');
}
