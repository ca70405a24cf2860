#!/usr/bin/env node
// The olm-medic CLI (composition root: bin/cli.ts; library: shared/cli/run.ts). Bundles dist/ first on
// a fresh clone, and again when a source is newer than the bundle (scripts/stale-bundle.mjs).
import { staleBundle } from '../scripts/stale-bundle.mjs';

const entry = new URL('../dist/cli.mjs', import.meta.url);
if (staleBundle(entry)) {
  console.error('[olm-medic] dist/cli.mjs missing or older than its sources; bundling first (npm run build)');
  await import('../scripts/build.mjs');
}
const { runCli } = await import(entry.href);
process.exit(await runCli(process.argv.slice(2), { out: (s) => console.log(s), err: (s) => console.error(s), env: process.env }));
