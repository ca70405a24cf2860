/**
 * Red team 35, S2 (fixed): a BUNDLE dated in the future silently hides every source change made before that
 * date: the stale bundle runs, without even the warning a future-dated source gets.
 *
 * scripts/stale-bundle.mjs (9788ca7) guards against clock skew on one side only: a SOURCE dated in
 * the future is left out with a warning (newestSource), but the bundle's own mtime is trusted as is
 * (`return newestSource() > built`, stale-bundle.mjs:63). A dist/ written while the clock was ahead
 * (the same VM/WSL2 drift, NFS/bind mount or build context from another host that S1 is about — e.g.
 * `npm run build` on a host 1 h ahead, then the clock corrected by NTP) looks newer than every source
 * touched in the next hour: `git pull` of a safety fix, then `npm start` / bin/olm-medic.mjs, runs the
 * code from before the fix — the exact N1 hole c0b16c7 closed (red team 33) — and says nothing.
 * SAFE: a bundle dated in the future proves nothing about its sources: it is rebuilt (which dates it
 * now, so no rebuild loop), or at least the run is not silent.
 */
import { cpSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('(red team 35) S2: a bundle dated in the future is not taken as fresh', () => {
  it('dist/cli.mjs dated 1 h ahead, shared/core/executor.ts changed just now (a pulled fix): the bundle is stale', async () => {
    const t = mkdtempSync(join(tmpdir(), 'olm-medic-rt35-bundle-'));
    mkdirSync(join(t, 'scripts'));
    cpSync(join(root, 'scripts/stale-bundle.mjs'), join(t, 'scripts/stale-bundle.mjs'));
    mkdirSync(join(t, 'shared/core'), { recursive: true });
    mkdirSync(join(t, 'dist'));
    const now = Date.now();
    // Built an hour ago by a clock that was 1 h ahead: dated now + 1 h.
    writeFileSync(join(t, 'dist/cli.mjs'), '// bundle of the code before the fix\n');
    const ahead = new Date(now + 3_600_000);
    utimesSync(join(t, 'dist/cli.mjs'), ahead, ahead);
    // The fix, pulled just now (the clock is right again).
    writeFileSync(join(t, 'shared/core/executor.ts'), '// the fix\n');
    const earlier = new Date(now - 60_000);
    utimesSync(join(t, 'shared/core/executor.ts'), new Date(now), new Date(now));
    utimesSync(join(t, 'scripts/stale-bundle.mjs'), earlier, earlier);
    const saved = process.env.OLM_MEDIC_BUNDLE_CHECKED;
    delete process.env.OLM_MEDIC_BUNDLE_CHECKED;
    try {
      const { staleBundle } = (await import(pathToFileURL(join(t, 'scripts/stale-bundle.mjs')).href)) as { staleBundle: (u: URL) => boolean };
      // Current code: false — the pre-fix bundle runs, silently.
      expect(staleBundle(pathToFileURL(join(t, 'dist/cli.mjs')))).toBe(true);
    } finally {
      if (saved !== undefined) process.env.OLM_MEDIC_BUNDLE_CHECKED = saved;
    }
  });
});
