// `npm start`: runs the bundled server. In the image dist/ was built by the buildpack
// (BP_NODE_RUN_SCRIPTS=build), so this is one import. On a fresh clone it bundles first.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/server.mjs', import.meta.url);
if (!existsSync(entry)) {
  console.error('[olm-medic] dist/server.mjs missing; bundling it first (npm run build)');
  await import('./build.mjs');
}
await import(entry.href);
