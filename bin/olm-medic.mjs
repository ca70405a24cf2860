#!/usr/bin/env node
// The olm-medic CLI (composition root: bin/cli.ts; library: shared/cli/run.ts). Bundles dist/ first on a fresh clone.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli.mjs', import.meta.url);
if (!existsSync(entry)) await import('../scripts/build.mjs');
const { runCli } = await import(entry.href);
process.exit(await runCli(process.argv.slice(2), { out: (s) => console.log(s), err: (s) => console.error(s), env: process.env }));
