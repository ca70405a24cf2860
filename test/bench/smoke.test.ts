/**
 * `npm run bench:smoke` in CI: every benchmark runs at smoke scale (its real control planes, servers
 * and baselines) and must produce its rows — a crash, or a benchmark that measured nothing, fails
 * here. Missed targets are evidence for the README, not failures (smoke scale proves nothing about
 * them). Runs after every other project, alone (2 cores: the timing-sensitive suites go first).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const resultsFile = join(root, 'bench', 'results.smoke.json');

interface Stored {
  name: string;
  crashed?: string;
  metrics: Record<string, unknown>;
  targets: { name: string; value: unknown; pass: boolean }[];
  date: string;
}

describe('npm run bench:smoke', () => {
  it('runs every benchmark to a result: none crashes, each reports its rows', async () => {
    const started = Date.now();
    const list = await run(['bench/run.ts', '--list']);
    const names = list.out.split('\n').map((l) => l.split(/\s+/)[0]).filter((n): n is string => Boolean(n));
    expect(names.length, list.out).toBeGreaterThanOrEqual(8);

    // dist/ is built by `npm test`'s pretest, as `npm run bench:smoke` builds it first.
    const smoke = await run(['bench/run.ts', '--smoke']);
    expect(smoke.code, smoke.out.slice(-6000)).toBe(0);
    expect(smoke.out).not.toMatch(/CRASHED/);

    expect(existsSync(resultsFile)).toBe(true);
    expect(statSync(resultsFile).mtimeMs).toBeGreaterThan(started);
    const results = (JSON.parse(readFileSync(resultsFile, 'utf8')) as { smoke: boolean; results: Stored[] });
    expect(results.smoke).toBe(true);
    expect(results.results.map((r) => r.name).sort()).toEqual([...names].sort());
    for (const r of results.results) {
      expect(r.crashed, r.name).toBeUndefined();
      expect(Date.parse(r.date), r.name).toBeGreaterThan(started);
      expect(Object.keys(r.metrics).length, `${r.name} measured nothing`).toBeGreaterThan(0);
      expect(r.targets.length, `${r.name} reports no target row`).toBeGreaterThan(0);
      for (const t of r.targets) expect(t.value, `${r.name}: ${t.name}`).not.toBeUndefined();
    }
  });
});

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(tsx, args, { cwd: root, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.once('exit', (code) => resolve({ code, out }));
  });
}
