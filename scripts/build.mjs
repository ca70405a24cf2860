// Bundles the production server (and the CLI) into dist/ with esbuild: one file each, so a cold
// start loads no TypeScript tooling and resolves few modules.
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
  // CommonJS dependencies bundled into ESM need a real `require`.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

await build({ ...common, entryPoints: { server: 'bin/server.ts', cli: 'bin/cli.ts' }, outdir: 'dist', outExtension: { '.js': '.mjs' } });
