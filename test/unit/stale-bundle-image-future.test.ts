/**
 * Red team 36, S3 (fixed): the S2 fix (red team 35) makes the shipped image crash at start when its bundle is
 * dated ahead of the node's clock.
 *
 * scripts/stale-bundle.mjs:65 `if (built > Date.now() + 2_000) return true;` runs BEFORE looking for
 * sources, so it also fires in a tree that has none — the Containerfile's runtime image, which holds
 * dist/, scripts/start.mjs and scripts/stale-bundle.mjs only (Containerfile:22-24; no shared/, no
 * scripts/build.mjs, no esbuild). The file's own contract (stale-bundle.mjs:4-5): "A tree without
 * sources (an image holding only dist/: no shared/) only builds a missing bundle."
 * dist/server.mjs keeps the build stage's mtime (COPY --from preserves it). A node whose clock is
 * behind the build host's (a CI runner ahead, a kind/minikube node VM that drifted, an image built
 * and run right away on another machine) sees it dated in the future: scripts/start.mjs:13 takes
 * the bundle as stale and `await import('./build.mjs')`, which is not in the image: ERR_MODULE_NOT_FOUND,
 * exit 1, CrashLoopBackOff until the node's clock passes the build time — olm-medic down. (With a
 * func/buildpack image, a rebuild at every cold start inside the pod instead.)
 * SAFE: a tree without sources runs the bundle it has (only a missing bundle is built).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function imageTree(): string {
  // The runtime image's tree (Containerfile): dist/, scripts/start.mjs, scripts/stale-bundle.mjs.
  const t = mkdtempSync(join(tmpdir(), 'olm-medic-rt36-image-'));
  mkdirSync(join(t, 'scripts'));
  cpSync(join(root, 'scripts/stale-bundle.mjs'), join(t, 'scripts/stale-bundle.mjs'));
  cpSync(join(root, 'scripts/start.mjs'), join(t, 'scripts/start.mjs'));
  writeFileSync(join(t, 'package.json'), '{"type":"module"}\n');
  mkdirSync(join(t, 'dist'));
  writeFileSync(join(t, 'dist/server.mjs'), "console.log('server running');\n");
  // Built by a host whose clock is 10 min ahead of this node's.
  const ahead = new Date(Date.now() + 600_000);
  utimesSync(join(t, 'dist/server.mjs'), ahead, ahead);
  return t;
}

describe('(red team 36) S3: an image (no sources) whose bundle is dated ahead of the node clock still starts', () => {
  it('staleBundle() is false for dist/server.mjs dated +10 min in a tree without shared/', async () => {
    const t = imageTree();
    const saved = process.env.OLM_MEDIC_BUNDLE_CHECKED;
    delete process.env.OLM_MEDIC_BUNDLE_CHECKED;
    try {
      const { staleBundle } = (await import(pathToFileURL(join(t, 'scripts/stale-bundle.mjs')).href)) as { staleBundle: (u: URL) => boolean };
      // Current code: true -> start.mjs imports ./build.mjs, absent from the image.
      expect(staleBundle(pathToFileURL(join(t, 'dist/server.mjs')))).toBe(false);
    } finally {
      if (saved !== undefined) process.env.OLM_MEDIC_BUNDLE_CHECKED = saved;
    }
  });

  it('node scripts/start.mjs (the image CMD) runs the bundle instead of exiting 1 on a missing build.mjs', () => {
    const t = imageTree();
    const env: NodeJS.ProcessEnv = { ...process.env, OLM_MEDIC_COMPILE_CACHE: 'off' };
    delete env.OLM_MEDIC_BUNDLE_CHECKED;
    const r = spawnSync(process.execPath, ['scripts/start.mjs'], { cwd: t, env, encoding: 'utf8', timeout: 20_000 });
    // Current code: status 1, stderr "dist/server.mjs missing or older than its sources; bundling it
    // first" then ERR_MODULE_NOT_FOUND for scripts/build.mjs.
    expect({ status: r.status, stdout: r.stdout.trim(), notFound: /ERR_MODULE_NOT_FOUND/.test(r.stderr) }).toEqual({ status: 0, stdout: 'server running', notFound: false });
  });
});
