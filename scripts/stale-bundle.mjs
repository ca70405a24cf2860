// Whether a dist/ bundle must be (re)built before it runs: missing, or older than any source it is
// built from (a checkout that pulled a fix must not keep running the code before it; red team 33, N1).
// Sources: the TypeScript of bin/, shared/ and functions/, the build script, and package-lock.json
// (the bundled dependencies). A tree without sources (an image holding only dist/: no shared/) only
// builds a missing bundle.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time (ms) among the sources that exist, or 0. */
function newestSource() {
  let newest = 0;
  const seen = (path) => {
    try {
      const st = statSync(path);
      if (st.isDirectory()) {
        for (const e of readdirSync(path)) if (e !== 'node_modules') seen(join(path, e));
      } else if (/\.(ts|mts)$/.test(path) && st.mtimeMs > newest) newest = st.mtimeMs;
    } catch {
      // absent: not a source here
    }
  };
  for (const d of ['bin', 'shared', 'functions']) seen(join(root, d));
  if (newest === 0) return 0;
  for (const f of ['scripts/build.mjs', 'package-lock.json']) {
    try {
      newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
    } catch {
      // absent
    }
  }
  return newest;
}

/** True when the bundle at `entry` (a file URL) is missing or older than its newest source. */
export function staleBundle(entry) {
  let built;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    return true;
  }
  return newestSource() > built;
}
