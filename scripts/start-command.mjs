// package.json's `start` script, split: its leading NAME=value environment assignments, then
// Node's arguments ("node [flags] entry"). The build's compile-cache warm-up, the tests and the
// benchmarks all start the server from this, exactly as `npm start` (and the image) does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** @param {string} root the project directory */
export function startCommand(root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const words = pkg.scripts.start.trim().split(/\s+/);
  /** @type {Record<string, string>} */
  const env = {};
  while (/^[A-Za-z_]\w*=/.test(words[0] ?? '')) {
    const w = words.shift();
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  }
  const [node, ...args] = words;
  if (node !== 'node' || args.length === 0) throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return { env, args };
}
