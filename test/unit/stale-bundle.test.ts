/**
 * Red team 33, N1 (fixed: scripts/stale-bundle.mjs, used by both launchers): `npm run olm-medic` / `npx olm-medic` (bin/olm-medic.mjs) and `npm start`
 * (scripts/start.mjs) run dist/cli.mjs / dist/server.mjs whenever the FILE EXISTS
 * (`if (!existsSync(entry)) await import('../scripts/build.mjs')`), however old it is: a checkout
 * that pulled a fix (every red-team fix in git log is a change to shared/ or functions/) keeps
 * running the bundle built before it — the write to the wrong object the fix forbids included —
 * until someone happens to run `npm run build`/`npm test`. Unlike `local` and `demo`, the `olm-medic`
 * script does not build first. (At the time of writing this very checkout had
 * functions/job-conflict/*.ts newer than dist/cli.mjs.)
 *
 * Shown with a copy of bin/olm-medic.mjs in a scratch tree whose dist/cli.mjs is older than the
 * sources: the stale bundle runs. SAFE: a bundle older than its sources is rebuilt (or refused),
 * never run.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A scratch tree holding a launcher (bin/olm-medic.mjs or scripts/start.mjs) and stale-bundle.mjs, a
 * bundle `dist/<bundle>` dated `bundleAge` ms ago, maybe a source dated now, and a build script that
 * leaves a REBUILT marker. Returns which ran: the old bundle (STALE_RAN) and/or the build (REBUILT).
 */
function launch(o: { launcher: 'bin/olm-medic.mjs' | 'scripts/start.mjs'; bundleAge: number; source?: string; lockNewer?: boolean }) {
  const t = mkdtempSync(join(tmpdir(), 'olm-medic-stale-'));
  for (const d of ['bin', 'dist', 'scripts']) mkdirSync(join(t, d), { recursive: true });
  copyFileSync(join(root, o.launcher), join(t, o.launcher));
  copyFileSync(join(root, 'scripts/stale-bundle.mjs'), join(t, 'scripts/stale-bundle.mjs'));
  const bundle = o.launcher === 'bin/olm-medic.mjs' ? 'dist/cli.mjs' : 'dist/server.mjs';
  const marker = (name: string): string => `import { writeFileSync } from 'node:fs'; writeFileSync(new URL('../${name}', import.meta.url), 'x');`;
  const code = `export async function runCli() { return 0; }\n`;
  writeFileSync(join(t, bundle), `${marker('STALE_RAN')}\n${code}`);
  const then = new Date(Date.now() - o.bundleAge);
  utimesSync(join(t, bundle), then, then);
  if (o.source) {
    mkdirSync(join(t, o.source, '..'), { recursive: true });
    writeFileSync(join(t, o.source), '// changed\n');
    utimesSync(join(t, o.source), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  }
  if (o.lockNewer) writeFileSync(join(t, 'package-lock.json'), '{}');
  writeFileSync(join(t, 'scripts/build.mjs'), `${marker('REBUILT')}\nwriteFileSync(new URL('../${bundle}', import.meta.url), ${JSON.stringify(code)});\n`);
  utimesSync(join(t, 'scripts/build.mjs'), new Date(0), new Date(0));
  const r = spawnSync(process.execPath, [join(t, o.launcher), ...(o.launcher === 'bin/olm-medic.mjs' ? ['sweep', '--dry-run'] : [])], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, OLM_MEDIC_COMPILE_CACHE: 'off' } });
  return { status: r.status, staleRan: existsSync(join(t, 'STALE_RAN')), rebuilt: existsSync(join(t, 'REBUILT')) };
}

const DAY = 86_400_000;

describe('a dist bundle older than its sources is rebuilt before it runs (red team 33 N1)', () => {
  it('CLI: dist/cli.mjs built before shared/cli/run.ts changed: rebuilt, the stale bundle never runs', () => {
    expect(launch({ launcher: 'bin/olm-medic.mjs', bundleAge: DAY, source: 'shared/cli/run.ts' })).toEqual({ status: 0, staleRan: false, rebuilt: true });
  }, 30_000);

  it('server (npm start): dist/server.mjs built before functions/job-conflict/plan.ts changed: rebuilt', () => {
    expect(launch({ launcher: 'scripts/start.mjs', bundleAge: DAY, source: 'functions/job-conflict/plan.ts' })).toEqual({ status: 0, staleRan: false, rebuilt: true });
  }, 30_000);

  it('twin: a bundle newer than every source runs as it is (no build at start)', () => {
    expect(launch({ launcher: 'scripts/start.mjs', bundleAge: 1_000, source: 'shared/core/engine.ts' })).toEqual({ status: 0, staleRan: true, rebuilt: false });
  }, 30_000);

  it('an image (dist/ and the launchers, no sources): the bundle runs, whatever the dates of package-lock.json', () => {
    expect(launch({ launcher: 'scripts/start.mjs', bundleAge: DAY, lockNewer: true })).toEqual({ status: 0, staleRan: true, rebuilt: false });
  }, 30_000);

  it('a source tree whose package-lock.json changed after the build (new dependencies): rebuilt', () => {
    // The source (60 s old) is older than the bundle (30 s old): only the lock file is newer.
    expect(launch({ launcher: 'bin/olm-medic.mjs', bundleAge: 30_000, source: 'shared/x.ts', lockNewer: true })).toEqual({ status: 0, staleRan: false, rebuilt: true });
    expect(launch({ launcher: 'bin/olm-medic.mjs', bundleAge: 30_000, source: 'shared/x.ts' })).toEqual({ status: 0, staleRan: true, rebuilt: false });
  }, 30_000);
});
