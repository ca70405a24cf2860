/**
 * bench/lib/trace.cjs, the exploration timeline (README, Benchmarks): loaded with --require into a
 * process that serves one HTTP request and makes one, it must write the three kinds of line the
 * README's recipe greps for, and change nothing the process answers.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'olm-medic-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script = `
const http = require('node:http');
const srv = http.createServer((req, res) => res.end('pong'));
srv.listen(0, '127.0.0.1', () => {
  http.get({ host: '127.0.0.1', port: srv.address().port, path: '/apis/x?limit=500' }, (res) => {
    let b = '';
    res.on('data', (c) => (b += c));
    res.on('end', () => setTimeout(() => { process.stdout.write(b); srv.close(); }, 250));
  });
});`;

describe('bench/lib/trace.cjs', () => {
  it('records loop ticks, requests served, and apiserver-bound requests out and in', () => {
    const file = join(dir, 'trace.log');
    const r = spawnSync(process.execPath, ['--require', join(root, 'bench', 'lib', 'trace.cjs'), '-e', script], {
      env: { ...process.env, OLM_MEDIC_TRACE_FILE: file },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('pong');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.find((l) => / OUT GET \/apis\/x\?limit=500$/.test(l))).toBeDefined();
    expect(lines.find((l) => / IN 200 \/apis\/x\?limit=500$/.test(l))).toBeDefined();
    const ticks = lines.filter((l) => / TICK elu=\d\.\d\d delay=\d+ served=\d+ rss=[\d.]+$/.test(l));
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks.reduce((n, l) => n + Number(/served=(\d+)/.exec(l)![1]), 0)).toBe(1);
  });
});
