/**
 * The production start command, read from package.json's `start` script ("node [flags] script"),
 * so tests and benchmarks launch exactly what `npm start` (and the buildpack) runs.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCommand } from '../../scripts/start-command.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Arguments for process.execPath: the start script's Node flags, then its entry (absolute). */
export function npmStartArgs(): string[] {
  const { args } = startCommand(root);
  return [...args.slice(0, -1), join(root, args[args.length - 1]!)];
}

/** The environment the start script sets for the server (e.g. MALLOC_MMAP_THRESHOLD_). */
export function npmStartEnv(): Record<string, string> {
  return startCommand(root).env;
}
