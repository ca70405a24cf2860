/**
 * Real OLM v0 (catalog + olm operators, built by build-olm.sh) running out of cluster against the
 * olm project's control plane, each as its own user. Per start: the upstream operator-framework/api
 * CRDs this OLM version requires (server-side apply), namespace `olm`, the file-based catalog in
 * test/fixtures/olm-catalog served on loopback by operator-registry's own server, a grpc
 * CatalogSource `olm/medic-catalog` pointing at it, and the unpack-pod stand-in (unpacker.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';

/** This version's opm, else (it does not build with today's Go) the catalog-server version's. */
function opmFor(dir: string, catalogServer: string): string {
  return existsSync(join(dir, 'opm')) ? join(dir, 'opm') : join(dirname(catalogServer), 'opm');
}
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../control-plane/control-plane.js';
import { startProc, until, type Proc } from './procs.js';
import { paths, restFromKubeconfig, type Obj, type Rest } from './rest.js';
import { startServiceProxy, type ServiceProxy } from './service-proxy.js';
import { startUnpacker, type Unpacker } from './unpacker.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'olm-catalog');
export const CATALOG = { name: 'medic-catalog', namespace: 'olm' } as const;
/** catalog-operator's default --bundle-unpack-timeout in the bed (an unpack Job's activeDeadlineSeconds). */
export const UNPACK_TIMEOUT_SECONDS = 45;
export const LONG_PACKAGE = 'medic-operator-with-a-deliberately-long-package-name';
export const bundleImage = (pkg: string, version: string): string => `registry.invalid/olm-medic/${pkg}-bundle:v${version}`;

export interface OlmBed {
  version: string;
  admin: Rest;
  unpacker: Unpacker;
  catalogAddress: string;
  /** With StartOlmOptions.serviceProxy. */
  serviceProxy?: ServiceProxy;
  /** The OLM operators, each restartable (e.g. to delete a CSV while olm-operator is down). */
  stopOlmOperator(): Promise<void>;
  startOlmOperator(): Promise<void>;
  stopCatalogOperator(): Promise<void>;
  startCatalogOperator(): Promise<void>;
  /** Stops this version's operators and starts `version`'s on the same cluster (CRDs applied first). */
  upgradeTo(version: string): Promise<void>;
  procs(): Proc[];
  logs(lines?: number): string;
  stop(): Promise<void>;
}

export interface StartOlmOptions {
  /** catalog-operator --bundle-unpack-timeout (the unpack Job's activeDeadlineSeconds). */
  unpackTimeout?: string;
  /**
   * Image-based CatalogSources: catalog-operator reaches `<svc>.<ns>.svc` through the bed's stand-in
   * for kube-proxy and cluster DNS (service-proxy.ts, its GRPC_PROXY), every registry pod serving the
   * test catalog. Without it such a CatalogSource would make OLM resolve a Service name off the machine.
   */
  serviceProxy?: boolean;
  log?: (line: string) => void;
}

export async function applyOlmCrds(admin: Rest, dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const f of readdirSync(join(dir, 'crds')).filter((f) => f.endsWith('.yaml')).sort()) {
    const text = readFileSync(join(dir, 'crds', f), 'utf8');
    const crd = parse(text) as Obj;
    await admin.apply(paths.crd(crd.metadata.name), text, 'olm-medic-test-bed');
    names.push(crd.metadata.name);
  }
  for (const n of names) {
    await until(async () => (await admin.get<Obj>(paths.crd(n)))?.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True'), `CRD ${n} Established`, 30_000);
  }
  return names;
}

async function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

export async function startOlm(version: string, opts: StartOlmOptions = {}): Promise<OlmBed> {
  const cp = inject('controlPlane');
  const bed = inject('olmBed');
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  let dir = bed.versions[version];
  if (!dir) throw new Error(`OLM ${version} is not in this run's OLM_VERSIONS (${Object.keys(bed.versions).join(', ')})`);
  const admin = restFromKubeconfig(cp.adminKubeconfig);
  let current = version;

  await applyOlmCrds(admin, dir);
  if (!(await admin.get(paths.ns(CATALOG.namespace)))) await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CATALOG.namespace } });

  const port = await freePort();
  const catalogServer = startProc('catalog-server', bed.catalogServer, [join(fixtures, 'catalog'), `127.0.0.1:${port}`], join(cp.dir, 'catalog-server.log'));
  await until(() => tcpOpen(port), 'the catalog server to listen', 60_000, [catalogServer]);
  const catalogAddress = `127.0.0.1:${port}`;
  const serviceProxy = opts.serviceProxy ? await startServiceProxy({ rest: admin, backend: { host: '127.0.0.1', port } }) : undefined;
  await admin.apply(paths.olm(CATALOG.namespace, 'catalogsources', CATALOG.name), {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: CATALOG.name, namespace: CATALOG.namespace },
    spec: { sourceType: 'grpc', address: catalogAddress, displayName: 'olm-medic test catalog', publisher: 'olm-medic tests' },
  }, 'olm-medic-test-bed');

  let catalog: Proc | undefined;
  let olm: Proc | undefined;
  const startCatalogOperator = async (): Promise<void> => {
    catalog = startProc(`catalog-operator ${current}`, join(dir!, 'catalog'), [
      `--kubeconfig=${bed.kubeconfigs.catalog}`,
      `--namespace=${CATALOG.namespace}`,
      '--writeStatusName=',
      '--configmapServerImage=registry.invalid/olm-medic/configmap-server:test',
      '--opmImage=registry.invalid/olm-medic/opm:test',
      '--util-image=registry.invalid/olm-medic/util:test',
      `--bundle-unpack-timeout=${opts.unpackTimeout ?? `${UNPACK_TIMEOUT_SECONDS}s`}`,
    ], join(cp.dir, `catalog-operator-${current}.log`), { OLM_MEDIC_METRICS_PORT: String(await freePort()), ...(serviceProxy ? { GRPC_PROXY: serviceProxy.url } : {}) }, { restart: true });
  };
  const startOlmOperator = async (): Promise<void> => {
    olm = startProc(`olm-operator ${current}`, join(dir!, 'olm'), [
      `--namespace=${CATALOG.namespace}`,
      '--writeStatusName=',
      '--writePackageServerStatusName=',
    ], join(cp.dir, `olm-operator-${current}.log`), { KUBECONFIG: bed.kubeconfigs.olm, OLM_MEDIC_METRICS_PORT: String(await freePort()) }, { restart: true });
  };
  await startCatalogOperator();
  await startOlmOperator();
  let unpacker = startUnpacker({ rest: admin, opm: opmFor(dir, bed.catalogServer), kubeconfig: bed.kubeconfigs.unpack, bundlesDir: join(fixtures, 'bundles'), namespaces: [CATALOG.namespace], log });

  const allProcs = (): Proc[] => [catalogServer, ...(catalog ? [catalog] : []), ...(olm ? [olm] : [])];
  try {
    await until(async () => {
      const cs = await admin.get<Obj>(paths.olm(CATALOG.namespace, 'catalogsources', CATALOG.name));
      return cs?.status?.connectionState?.lastObservedState === 'READY';
    }, `OLM ${version} to connect to the catalog (CatalogSource READY)`, 120_000, allProcs());
  } catch (e) {
    // Nobody gets a handle to stop them: stop them here.
    await unpacker.stop();
    for (const p of allProcs().reverse()) await p.stop();
    await serviceProxy?.stop();
    throw e;
  }
  log(`[olm-bed] OLM ${version} running; catalog at ${catalogAddress}`);

  const stopProc = async (p: Proc | undefined): Promise<void> => {
    await p?.stop();
  };
  const self: OlmBed = {
    get version() {
      return current;
    },
    admin,
    get unpacker() {
      return unpacker;
    },
    catalogAddress,
    ...(serviceProxy ? { serviceProxy } : {}),
    async stopOlmOperator() {
      await stopProc(olm);
      olm = undefined;
    },
    startOlmOperator,
    async stopCatalogOperator() {
      await stopProc(catalog);
      catalog = undefined;
    },
    startCatalogOperator,
    async upgradeTo(next: string) {
      const nextDir = bed.versions[next];
      if (!nextDir) throw new Error(`OLM ${next} is not in this run's OLM_VERSIONS`);
      await stopProc(olm);
      await stopProc(catalog);
      olm = catalog = undefined;
      await unpacker.stop();
      dir = nextDir;
      current = next;
      await applyOlmCrds(admin, dir);
      await startCatalogOperator();
      await startOlmOperator();
      const held = unpacker;
      unpacker = startUnpacker({ rest: admin, opm: opmFor(dir, bed.catalogServer), kubeconfig: bed.kubeconfigs.unpack, bundlesDir: join(fixtures, 'bundles'), namespaces: [CATALOG.namespace], log });
      unpacker.played.push(...held.played);
    },
    procs: allProcs,
    logs(lines = 40) {
      return allProcs().map((p) => `--- ${p.name}\n${p.tail(lines)}`).join('\n');
    },
    async stop() {
      await unpacker.stop();
      await stopProc(olm);
      await stopProc(catalog);
      await catalogServer.stop();
      await serviceProxy?.stop();
    },
  };
  return self;
}

/** An OperatorGroup targeting its own namespace and a Subscription to `pkg` from the test catalog. */
export async function subscribe(admin: Rest, ns: string, pkg: string, o: { name?: string; source?: string; startingCSV?: string; approval?: 'Automatic' | 'Manual'; operatorGroup?: boolean; ogAnnotations?: Record<string, string> } = {}): Promise<Obj> {
  if (o.operatorGroup !== false && (await admin.list(paths.olmV1(ns, 'operatorgroups'))).length === 0) {
    await admin.create(paths.olmV1(ns, 'operatorgroups'), {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'og', namespace: ns, annotations: o.ogAnnotations ?? {} },
      spec: { targetNamespaces: [ns] },
    });
  }
  return admin.create(paths.olm(ns, 'subscriptions'), {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: o.name ?? pkg, namespace: ns },
    spec: {
      name: pkg,
      channel: 'stable',
      source: o.source ?? CATALOG.name,
      sourceNamespace: CATALOG.namespace,
      installPlanApproval: o.approval ?? 'Automatic',
      ...(o.startingCSV ? { startingCSV: o.startingCSV } : {}),
    },
  });
}

export async function csvPhase(admin: Rest, ns: string, name: string): Promise<string | undefined> {
  return (await admin.get<Obj>(paths.olm(ns, 'clusterserviceversions', name)))?.status?.phase;
}

export async function namespace(admin: Rest, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

/**
 * Leaves the cluster as a fresh one for the next OLM version a file starts: deletes `namespaces` and
 * waits until they are gone (while this OLM and olm-medic still run, so the CSV finalizers are
 * honoured), then deletes the unpack Jobs and their ConfigMaps in the catalog namespace. Without it
 * the next version inherits this one's unpack Jobs under the same names (sha256 of the bundle image):
 * a v0.25 Job has no bundle-unpack-ref label, so v0.28's ensureJob, which lists Jobs by that label
 * (bundle/bundle_unpacker.go v0.28.0:668), cannot see it, and olm-medic deletes it - seed 1's upgrade
 * story, not a healthy install.
 */
export async function forgetInstalls(admin: Rest, namespaces: string[]): Promise<void> {
  for (const ns of namespaces) await admin.delete(paths.ns(ns));
  await until(async () => {
    for (const ns of namespaces) if (await admin.get(paths.ns(ns))) return false;
    return true;
  }, `namespaces ${namespaces.join(', ')} to be gone`, 180_000);
  for (const job of await admin.list<Obj>(paths.batch(CATALOG.namespace))) {
    await admin.delete(paths.batch(CATALOG.namespace, job.metadata.name), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
  }
  for (const cm of await admin.list<Obj>(paths.core(CATALOG.namespace, 'configmaps'))) {
    if (cm.metadata.ownerReferences?.some((o) => o.kind === 'CatalogSource')) await admin.delete(paths.core(CATALOG.namespace, 'configmaps', cm.metadata.name));
  }
  await until(async () => (await admin.list<Obj>(paths.batch(CATALOG.namespace))).length === 0, 'the unpack Jobs to be gone', 60_000);
}
