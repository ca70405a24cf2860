/**
 * The layering rule, checked on the source: lower layers never import upper ones.
 *   shared/     the library: never imports functions/, bin/, test/, bench/ or scripts/
 *   functions/  remediations: import shared/ only (never bin/, test/)
 *   bin/        composition roots: the only place joining shared/ and functions/
 * And every functions/<name>/plan.ts stays pure: no I/O modules, no clock, no randomness.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mts|mjs)$/.test(n) ? [p] : [];
  });
}

function imports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  return [...src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => (m[1] ?? m[2])!);
}

/** Top-level directory an import resolves to ('' for packages). */
function layerOf(file: string, spec: string): string {
  if (!spec.startsWith('.')) return '';
  return relative(root, resolve(dirname(file), spec)).split(/[\\/]/)[0]!;
}

describe('layers', () => {
  it.each([
    ['shared', ['functions', 'bin', 'test', 'bench', 'scripts']],
    ['functions', ['bin', 'test', 'bench', 'scripts']],
  ])('%s/ imports none of %j', (layer, forbidden) => {
    const bad = files(join(root, layer)).flatMap((f) =>
      imports(f).filter((s) => forbidden.includes(layerOf(f, s))).map((s) => `${relative(root, f)} -> ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it('the checker sees a violation (so the rule can fail)', () => {
    expect(layerOf(join(root, 'shared', 'x.ts'), '../functions/index.js')).toBe('functions');
    expect(imports(join(root, 'bin', 'server.ts'))).toContain('../functions/index.js');
  });

  it('every plan.ts is pure: no I/O modules, no clock, no randomness', () => {
    const plans = readdirSync(join(root, 'functions')).map((d) => join(root, 'functions', d, 'plan.ts')).filter((p) => {
      try {
        return statSync(p).isFile();
      } catch {
        return false;
      }
    });
    expect(plans.length).toBe(4);
    for (const p of plans) {
      const src = readFileSync(p, 'utf8');
      const bad = imports(p).filter((s) => s.startsWith('node:') || /\/kube\/client|\/http\/|\/core\/(engine|executor|recorder)/.test(s));
      expect(bad, relative(root, p)).toEqual([]);
      expect(src, relative(root, p)).not.toMatch(/Date\.now\(|new Date\(\)|Math\.random\(|process\.env|setTimeout\(/);
    }
  });
});
