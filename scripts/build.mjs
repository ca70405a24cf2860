// Bundles the production server (and the CLI) into dist/ with esbuild: few files, so a cold start
// loads no TypeScript tooling and resolves few modules. The server is split: what start-up needs
// is in dist/server.mjs (+ shared chunks); what only some requests need (the express app and the
// CloudEvents SDK's HTTP parsing) is a chunk loaded on first use (shared/http/serve.ts).
// Then it starts the bundle once, exactly as `npm start` does, and sends it a few events, so that
// Node's compile cache (dist/.compile-cache, see scripts/start.mjs) holds the compiled modules.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { isBuiltin } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startCommand } from './start-command.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Less source to read and decode at every start (identifiers kept: stack traces stay readable).
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  outExtension: { '.js': '.mjs' },
  // CommonJS dependencies bundled into ESM need a real `require`.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

/**
 * @kubernetes/client-node declares no `sideEffects`, so a bundle keeps every generated API class
 * and model (~600 KB) although olm-medic uses only KubeConfig and RequestContext (plain REST, no
 * ObjectSerializer). Its modules only define classes and functions at load, so they are marked
 * side-effect free here and esbuild drops what nothing references.
 */
const k8sTreeShaking = {
  name: 'k8s-client-tree-shaking',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.k8s || !(args.path.startsWith('@kubernetes/client-node') || args.importer.includes('/@kubernetes/client-node/'))) return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { k8s: true } });
      if (r.errors.length || !r.path.includes('/@kubernetes/client-node/dist/')) return r.errors.length ? { errors: r.errors } : undefined;
      return { path: r.path, sideEffects: false };
    });
  },
};

/** `undici` -> scripts/shims/undici.mjs (lazy); the shim's own `undici/index.js` is the real one. */
const lazyUndici = {
  name: 'lazy-undici',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: join(root, 'scripts', 'shims', 'undici.mjs') }));
  },
};

/**
 * Node builtins imported as ESM (`import { createServer } from 'node:http'`, in our code and in
 * @kubernetes/client-node's) are required instead, through the banner's `require`: the same module
 * object, but an ESM import of a builtin reads every export once to build its namespace, which
 * runs the lazy ones — `node:http`'s WebSocket/CloseEvent/MessageEvent load Node's own copy of
 * undici (never used here: the client has its own), ~2 MB of heap and ~10 MB of RSS for nothing.
 */
const builtinsViaRequire = {
  name: 'builtins-via-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      if (args.kind !== 'import-statement' || !isBuiltin(args.path)) return undefined;
      return { path: args.path.replace(/^node:/, ''), namespace: 'builtin-via-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin-via-require' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`, loader: 'js' }));
  },
};

rmSync(join(root, 'dist'), { recursive: true, force: true });
await build({ ...common, absWorkingDir: root, entryPoints: { server: 'bin/server.ts' }, outdir: 'dist', splitting: true, chunkNames: 'chunks/[name]-[hash]', plugins: [k8sTreeShaking, lazyUndici, builtinsViaRequire] });
// undici alone, as CommonJS, for scripts/shims/undici.mjs to require on first use.
await build({ ...common, format: 'cjs', banner: {}, outExtension: {}, absWorkingDir: root, entryPoints: { undici: 'node_modules/undici/index.js' }, outfile: 'dist/undici.cjs' });
await build({ ...common, absWorkingDir: root, entryPoints: { cli: 'bin/cli.ts' }, outdir: 'dist' });
if (process.env.OLM_MEDIC_COMPILE_CACHE !== 'off') await warmCompileCache();

/** Starts the server as `npm start` would (a dummy kubeconfig; no API call is made) and exercises its paths. */
async function warmCompileCache() {
  const { env: startEnv, args } = startCommand(root);
  const scratch = mkdtempSync(join(tmpdir(), 'olm-medic-build-'));
  const kubeconfig = join(scratch, 'kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:9' } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
  const port = await freePort();
  const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...startEnv, PORT: String(port), KUBECONFIG: kubeconfig, LOG_LEVEL: 'warn', OLM_MEDIC_BUNDLE_CHECKED: '1' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const headers = (kind, apiVersion, name) => ({ 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': `warm-${name}`, 'ce-source': 'https://127.0.0.1:443', 'ce-type': 'dev.knative.apiserver.resource.update', 'ce-kind': kind, 'ce-apiversion': apiVersion, 'ce-name': name, 'ce-namespace': '' });
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'warm' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    for (let i = 0; ; i++) {
      try {
        await post(port, headers('ConfigMap', 'v1', 'warm'), '{}');
        break;
      } catch (e) {
        if (i > 400 || child.exitCode !== null) throw new Error(`compile-cache warm-up: the server did not answer (${e.message})`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    await post(port, headers('Node', 'v1', 'warm'), JSON.stringify(node));
    // A structured event goes through the express app and the CloudEvents SDK.
    await post(port, { 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', id: 'warm', source: '/warm', type: 'com.example.warm', data: {} }));
    await post(port, { 'content-type': 'application/cloudevents+json' }, 'not json');
    // The background warm-up (the app chunk) runs right after the first answer: let it finish.
    await new Promise((r) => setTimeout(r, 1_500));
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(scratch, { recursive: true, force: true });
  }
}

function post(port, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
