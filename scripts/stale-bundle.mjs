// Whether a dist/ bundle must be (re)built before it runs: missing, or older than any source it is
// built from (a checkout that pulled a fix must not keep running the code before it; red team 33, N1).
// Sources: the TypeScript of bin/, shared/ and functions/, the build script and its shims,
// tsconfig.json, and package-lock.json (the bundled dependencies). A tree without sources (an image holding only dist/: no shared/) only
// builds a missing bundle.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The newest modification time (ms) among the sources that exist (0 if all are dated in the
 * future), or undefined when the tree holds no sources. A file dated in the future
 * (a clock that was ahead) would make every bundle stale, and every start a build: it is left out,
 * with a warning (red team 34, S1).
 */
function newestSource() {
  const now = Date.now() + 2_000;
  const future = [];
  let newest = 0;
  const count = (path, st) => {
    if (st.mtimeMs > now) future.push(path);
    else if (st.mtimeMs > newest) newest = st.mtimeMs;
  };
  const seen = (path, kind = /\.(ts|mts)$/) => {
    try {
      const st = statSync(path);
      if (st.isDirectory()) {
        for (const e of readdirSync(path)) if (e !== 'node_modules') seen(join(path, e), kind);
      } else if (kind.test(path)) count(path, st);
    } catch {
      // absent: not a source here
    }
  };
  for (const d of ['bin', 'shared', 'functions']) seen(join(root, d));
  if (newest === 0 && future.length === 0) return undefined;
  for (const f of ['scripts/build.mjs', 'scripts/shims', 'package-lock.json', 'tsconfig.json']) {
    try {
      const path = join(root, f);
      const st = statSync(path);
      if (st.isDirectory()) seen(path, /\.m?js$/);
      else count(path, st);
    } catch {
      // absent
    }
  }
  if (future.length) console.error(`[olm-medic] ${future.length} source file(s) dated in the future (e.g. ${future[0]}); not counted for the bundle's freshness`);
  return newest;
}

/**
 * True when the bundle at `entry` (a file URL) is missing or older than its newest source. Not
 * checked again in a process the build itself starts (OLM_MEDIC_BUNDLE_CHECKED=1).
 */
export function staleBundle(entry) {
  let built;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    return true;
  }
  if (process.env.OLM_MEDIC_BUNDLE_CHECKED === '1') return false;
  const newest = newestSource();
  // No sources (the image): the bundle runs as built, whatever its date (red team 36, S3).
  if (newest === undefined) return false;
  // A bundle dated in the future (a clock that was ahead) proves nothing about the sources edited
  // since: rebuilt, which dates it now (red team 35, S2).
  if (built > Date.now() + 2_000) return true;
  return newest > built;
}
