// Bundles the production server (and the CLI) into dist/ with esbuild: few files, so a cold start
// loads no TypeScript tooling and resolves few modules. The server is split: what start-up needs
// is in dist/server.mjs (+ shared chunks); what only some requests need (the express app and the
// CloudEvents SDK) is a chunk loaded on first use (shared/http/serve.ts).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
  outExtension: { '.js': '.mjs' },
  // CommonJS dependencies bundled into ESM need a real `require`.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

rmSync('dist', { recursive: true, force: true });
await build({ ...common, entryPoints: { server: 'bin/server.ts' }, outdir: 'dist', splitting: true, chunkNames: 'chunks/[name]-[hash]' });
await build({ ...common, entryPoints: { cli: 'bin/cli.ts' }, outdir: 'dist' });
