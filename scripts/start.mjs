// `npm start`: runs the bundled server. In the image dist/ was built by the buildpack
// (BP_NODE_RUN_SCRIPTS=build), so this is one import. On a fresh clone, or when a source is newer
// than the bundle, it bundles first.
// Node's module compile cache (dist/.compile-cache, filled by `npm run build`, which starts the
// server once) spares V8 compiling the bundle again at every cold start; entries are keyed by
// Node version and file content, so a stale or foreign cache is ignored, never wrong.
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { staleBundle } from './stale-bundle.mjs';

const entry = new URL('../dist/server.mjs', import.meta.url);
// Missing (a fresh clone) or older than a source (a pulled fix): bundle first.
if (staleBundle(entry)) {
  console.error('[olm-medic] dist/server.mjs missing or older than its sources; bundling it first (npm run build)');
  await import('./build.mjs');
}
if (process.env.OLM_MEDIC_COMPILE_CACHE !== 'off') module.enableCompileCache?.(fileURLToPath(new URL('../dist/.compile-cache', import.meta.url)));
await import(entry.href);
