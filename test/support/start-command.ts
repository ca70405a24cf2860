/**
 * The production start command, read from package.json's `start` script ("node [flags] script"),
 * so tests and benchmarks launch exactly what `npm start` (and the buildpack) runs.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The start script split: leading `NAME=value` environment assignments, then "node [flags] entry". */
function startCommand(): { env: Record<string, string>; node: string; rest: string[] } {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
    const w = words.shift()!;
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  }
  const [node, ...rest] = words;
  if (node !== 'node' || rest.length === 0) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return { env, node, rest };
}

/** Arguments for process.execPath: the start script's Node flags, then its entry (absolute). */
export function npmStartArgs(): string[] {
  const { rest } = startCommand();
  const entry = rest[rest.length - 1]!;
  return [...rest.slice(0, -1), join(root, entry)];
}

/** The environment the start script sets for the server (e.g. MALLOC_MMAP_THRESHOLD_). */
export function npmStartEnv(): Record<string, string> {
  return startCommand().env;
}
