/**
 * The production start command, read from package.json's `start` script ("node [flags] script"),
 * so tests and benchmarks launch exactly what `npm start` (and the buildpack) runs.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Arguments for process.execPath: the start script's Node flags, then its entry (absolute). */
export function npmStartArgs(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [node, ...rest] = pkg.scripts.start.trim().split(/\s+/);
  if (node !== 'node' || rest.length === 0) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  const entry = rest[rest.length - 1]!;
  return [...rest.slice(0, -1), join(root, entry)];
}
