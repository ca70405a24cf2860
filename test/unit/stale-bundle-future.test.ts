/**
 * Red team 34, S1 (fixed): a source dated in the future (clock skew) makes `npm start` crash at start.
 *
 * scripts/stale-bundle.mjs calls a bundle stale when any source is newer than it (`newestSource() >
 * built`). A source whose mtime is AHEAD of the clock (files written by a host whose clock is ahead:
 * WSL2/VM clock drift, an NFS or bind-mounted checkout, a tarball or build context from another
 * machine — what make reports as "Clock skew detected") stays "newer" than any bundle built now.
 * scripts/start.mjs then imports scripts/build.mjs, whose compile-cache warm-up starts the server
 * "exactly as npm start does" — scripts/start.mjs again — which again finds the fresh bundle stale,
 * rebuilds (rmSync(dist)) and starts its own warm-up instead of listening. The first warm-up never
 * gets an answer and throws "compile-cache warm-up: the server did not answer": `npm start` exits 1
 * (the same for bin/olm-medic.mjs, and `npm run build` itself, e.g. the Containerfile's build stage,
 * fails the same way). Before c0b16c7 an existing bundle always ran; a missing one built once.
 * SAFE: a tree with a future-dated source still starts (it builds at most once, e.g. the warm-up
 * child does not re-check, or a future mtime does not count as newer than a bundle just built).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health/liveness', agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/** `node scripts/start.mjs` in a scratch copy of the tree without dist/ (aheadMs: shared/core/engine.ts dated that far ahead). */
async function start(aheadMs: number): Promise<{ up: boolean; exitCode: number | null; crashed: boolean }> {
  const t = mkdtempSync(join(tmpdir(), 'olm-medic-rt34-future-'));
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts', 'bin', 'shared', 'functions']) cpSync(join(root, f), join(t, f), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(t, 'node_modules'));
  const ahead = new Date(Date.now() + aheadMs);
  if (aheadMs) utimesSync(join(t, 'shared/core/engine.ts'), ahead, ahead);
  const kubeconfig = join(t, 'kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:9' } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
  const port = await freePort();
  let stderr = '';
  // Its own process group, so every process it starts (the build's warm-up servers) is ended with it.
  const child = spawn(process.execPath, [join(t, 'scripts/start.mjs')], { cwd: t, detached: true, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(port), KUBECONFIG: kubeconfig, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (d) => (stderr += String(d)));
  let exitCode: number | null = null;
  child.once('exit', (c) => (exitCode = c));
  let up = false;
  try {
    const until = Date.now() + 45_000;
    while (!up && exitCode === null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 500));
      up = await answers(port);
    }
    return { up, exitCode, crashed: /did not answer/.test(stderr) };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(t, { recursive: true, force: true });
  }
}

describe('(red team 34) S1: npm start with a source dated in the future (clock skew)', () => {
  it('control: a fresh checkout (no dist/) builds once and answers', async () => {
    expect(await start(0)).toEqual({ up: true, exitCode: null, crashed: false });
  }, 60_000);

  it('a checkout whose shared/core/engine.ts is dated 1 h ahead: the server still starts and answers', async () => {
    // Current code: exit 1 after ~10 s, stderr "compile-cache warm-up: the server did not answer".
    expect(await start(3_600_000)).toEqual({ up: true, exitCode: null, crashed: false });
  }, 60_000);
});
