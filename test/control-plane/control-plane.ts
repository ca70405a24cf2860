/**
 * A real control plane for tests and local runs: etcd + kube-apiserver (+ kube-controller-manager
 * for garbage collection, namespace deletion and Job TTLs), on free loopback ports, RBAC on,
 * token authentication, an audit log to count requests per user. Stopped and cleaned up by stop().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { findBinaries, type Binaries } from './binaries.js';
import { dieWithParent } from '../support/parent-death.js';

export interface ControlPlaneUser {
  name: string;
  token: string;
  kubeconfig: string;
}

export interface ControlPlane {
  server: string;
  dir: string;
  caFile: string;
  admin: ControlPlaneUser;
  /** The identity olm-medic runs as in tests; its requests are counted in the audit log. */
  medic: ControlPlaneUser;
  binaries: Binaries;
  /** Kubeconfig of a user provisioned at start (StartOptions.users). */
  user(name: string): ControlPlaneUser;
  /** Requests the apiserver received from `user` (audit log, stage ResponseComplete). */
  requestsBy(user: string): AuditEntry[];
  stop(): Promise<void>;
}

export interface AuditEntry {
  verb: string;
  requestURI: string;
  user: { username: string };
  responseStatus?: { code: number };
  objectRef?: { resource?: string; namespace?: string; name?: string };
  /** RFC 3339 with microseconds, the apiserver's clock (this host's). */
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

export interface StartOptions {
  controllerManager?: boolean;
  log?: (line: string) => void;
  /** Extra users (name -> groups) with tokens, e.g. for RBAC tests. */
  users?: Record<string, string[]>;
  /** kube-controller-manager's --controllers (default: GC, namespaces, Job TTLs, service accounts). */
  controllers?: string[];
  /** Extra kube-controller-manager flags (e.g. a short --node-monitor-grace-period). */
  controllerManagerArgs?: string[];
  /** Also audit kube-controller-manager's writes (its reads stay out), to tell who deleted what. */
  auditControllerWrites?: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const binaries = findBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'olm-medic-cp-'));
  const procs: ChildProcess[] = [];
  const t0 = performance.now();
  const killAll = (): void => {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  };
  process.once('exit', killAll);

  try {
    // etcd
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    procs.push(
      run(binaries.etcd, [
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        '--unsafe-no-fsync=true',
        '--quota-backend-bytes=8589934592',
        '--log-level=warn',
      ], join(dir, 'etcd.log')),
    );
    await waitFor(`etcd`, async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok, 30_000, procs[0]!, join(dir, 'etcd.log'));

    // credentials: a token file, a service-account signing key, an audit policy
    const users: Record<string, { token: string; groups: string[] }> = {
      admin: { token: randomBytes(16).toString('hex'), groups: ['system:masters'] },
      'olm-medic': { token: randomBytes(16).toString('hex'), groups: ['system:masters'] },
      'system:kube-controller-manager': { token: randomBytes(16).toString('hex'), groups: ['system:masters'] },
    };
    for (const [name, groups] of Object.entries(opts.users ?? {})) users[name] = { token: randomBytes(16).toString('hex'), groups };
    writeFileSync(
      join(dir, 'tokens.csv'),
      Object.entries(users).map(([n, u]) => `${u.token},${n},${n},"${u.groups.join(',')}"`).join('\n') + '\n',
    );
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(
      join(dir, 'audit-policy.yaml'),
      [
        'apiVersion: audit.k8s.io/v1',
        'kind: Policy',
        'omitStages: [RequestReceived]',
        'rules:',
        ...(opts.auditControllerWrites
          ? ['- level: None', '  users: ["system:apiserver"]', '- level: None', '  users: ["system:kube-controller-manager"]', '  verbs: [get, list, watch]']
          : ['- level: None', '  users: ["system:kube-controller-manager", "system:apiserver"]']),
        '- level: Metadata',
      ].join('\n'),
    );

    const server = `https://127.0.0.1:${apiPort}`;
    procs.push(
      run(binaries.kubeApiserver, [
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        `--cert-dir=${join(dir, 'certs')}`,
        `--secure-port=${apiPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--authorization-mode=RBAC',
        '--disable-admission-plugins=ServiceAccount',
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        `--service-account-issuer=${server}/`,
        `--service-account-key-file=${join(dir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
        `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`,
        `--audit-log-path=${join(dir, 'audit.log')}`,
        '--audit-log-format=json',
        '--audit-log-mode=blocking',
        // Never rotate: the apiserver's log writer (lumberjack) rotates at 100 MB by default, and the
        // suites read the log incrementally by offset (the reliability project writes well over 100 MB).
        '--audit-log-maxsize=1000000',
        '--enable-priority-and-fairness=false',
        '--v=0',
      ], join(dir, 'kube-apiserver.log')),
    );
    const caFile = join(dir, 'certs', 'apiserver.crt');
    const admin = users.admin!;
    await waitFor('kube-apiserver', async () => {
      if (!existsSync(caFile)) return false;
      const r = await fetch(`${server}/readyz`, { headers: { authorization: `Bearer ${admin.token}` }, dispatcher: insecure });
      return r.ok;
    }, 60_000, procs[1]!, join(dir, 'kube-apiserver.log'));

    const kubeconfigFor = (name: string): ControlPlaneUser => {
      const u = users[name]!;
      const path = join(dir, `${name.replace(/[^a-z0-9-]/gi, '_')}.kubeconfig`);
      writeFileSync(path, kubeconfig(server, caFile, name, u.token));
      return { name, token: u.token, kubeconfig: path };
    };
    const kcm = kubeconfigFor('system:kube-controller-manager');

    if (opts.controllerManager !== false) {
      procs.push(
        run(binaries.kubeControllerManager, [
          `--kubeconfig=${kcm.kubeconfig}`,
          '--leader-elect=false',
          '--secure-port=0',
          `--controllers=${(opts.controllers ?? ['garbage-collector-controller', 'namespace-controller', 'ttl-after-finished-controller', 'serviceaccount-controller']).join(',')}`,
          '--concurrent-gc-syncs=5',
          `--service-account-private-key-file=${join(dir, 'sa.key')}`,
          ...(opts.controllerManagerArgs ?? []),
          '--v=0',
        ], join(dir, 'kube-controller-manager.log')),
      );
    }
    log(`[control-plane] etcd + kube-apiserver${opts.controllerManager !== false ? ' + kube-controller-manager' : ''} ready at ${server} in ${((performance.now() - t0) / 1000).toFixed(1)}s (dir ${dir})`);

    return {
      server,
      dir,
      caFile,
      binaries,
      admin: kubeconfigFor('admin'),
      medic: kubeconfigFor('olm-medic'),
      user: (name: string) => {
        if (!users[name]) throw new Error(`user ${name} was not provisioned (StartOptions.users)`);
        return kubeconfigFor(name);
      },
      requestsBy(user: string): AuditEntry[] {
        const path = join(dir, 'audit.log');
        if (!existsSync(path)) return [];
        return readFileSync(path, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as AuditEntry)
          .filter((e) => e.user?.username === user);
      },
      async stop() {
        for (const p of [...procs].reverse()) {
          if (p.exitCode !== null) continue;
          p.kill('SIGTERM');
          await Promise.race([new Promise((r) => p.once('exit', r)), sleep(5_000)]);
          if (p.exitCode === null) p.kill('SIGKILL');
        }
        process.removeListener('exit', killAll);
        if (!process.env.OLM_MEDIC_KEEP_CONTROL_PLANE_DIR) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    killAll();
    throw e;
  }
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

function run(bin: string, args: string[], logFile: string): ChildProcess {
  const out = createWriteStream(logFile);
  const p = spawn(...dieWithParent(bin, args), { stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout!.pipe(out);
  p.stderr!.pipe(out);
  return p;
}

async function waitFor(what: string, ok: () => Promise<boolean>, timeoutMs: number, proc: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}:\n${tail(logFile)}`);
    try {
      if (await ok()) return;
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  throw new Error(`${what} not ready after ${timeoutMs / 1000}s:\n${tail(logFile)}`);
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
}

function kubeconfig(server: string, caFile: string, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'olm-medic-test', cluster: { server, 'certificate-authority-data': Buffer.from(readFileSync(caFile)).toString('base64') } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'olm-medic-test', context: { cluster: 'olm-medic-test', user } }],
    'current-context': 'olm-medic-test',
  }, null, 2);
}
