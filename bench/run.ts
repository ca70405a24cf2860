/**
 * Benchmark runner: `npm run bench` (full) / `npm run bench:smoke` (short, for CI).
 *   tsx bench/run.ts [--smoke] [--only name1,name2] [--list]
 * Imports every bench/*.ts that exports `bench` (bench/types.ts contract; run.ts, types.ts and
 * the fixtures/ and lib/ folders are not benchmarks), runs the selected ones one after another,
 * prints a table and writes bench/results.json (bench/results.smoke.json with --smoke). Results of
 * benchmarks not selected this time are kept from the previous file, each with its own date.
 * Exit code: 0 even when a target is missed (benchmarks are evidence, not tests); 1 only when a
 * benchmark crashed; 2 on a usage error.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchResult, Benchmark } from './types.js';
import { explorationNotes } from './lib/proc.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const NOT_BENCHMARKS = new Set(['run.ts', 'types.ts']);

interface Args {
  smoke: boolean;
  only?: string[];
  list: boolean;
}

interface StoredResult extends BenchResult {
  description: string;
  date: string;
  smoke: boolean;
  durationSeconds: number;
  /** 1-minute load average when the benchmark started and ended (other work on the machine skews figures). */
  loadAverage: { start: number; end: number };
  /** Set when the benchmark threw: its targets are empty and it counts as a crash. */
  crashed?: string;
}

interface ResultsFile {
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  date: string;
  smoke: boolean;
  results: StoredResult[];
}

function usage(msg: string): never {
  process.stderr.write(`bench: ${msg}\nusage: tsx bench/run.ts [--smoke] [--only name1,name2] [--list]\n`);
  process.exit(2);
}

function parseArgs(argv: string[]): Args {
  const a: Args = { smoke: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--smoke') a.smoke = true;
    else if (arg === '--list') a.list = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const v = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      if (!v) usage('--only needs a comma-separated list of benchmark names');
      a.only = v.split(',').map((s) => s.trim()).filter(Boolean);
    } else usage(`unknown argument ${arg}`);
  }
  return a;
}

async function discover(): Promise<Benchmark[]> {
  const files = readdirSync(benchDir, { withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') && !NOT_BENCHMARKS.has(d.name))
    .map((d) => d.name)
    .sort();
  const found: Benchmark[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(benchDir, f)).href)) as { bench?: Benchmark };
    if (!mod.bench) continue;
    if (typeof mod.bench.run !== 'function' || !mod.bench.name) throw new Error(`bench/${f}: \`bench\` does not follow bench/types.ts (name, description, run)`);
    if (found.some((b) => b.name === mod.bench!.name)) throw new Error(`bench/${f}: duplicate benchmark name ${mod.bench.name}`);
    found.push(mod.bench);
  }
  return found;
}

function fmt(v: number | string): string {
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

function table(results: StoredResult[]): string {
  const rows: string[][] = [['BENCHMARK', 'METRIC', 'VALUE', 'TARGET', 'PASS']];
  for (const r of results) {
    if (r.crashed) {
      rows.push([r.name, 'CRASHED', r.crashed.split('\n')[0]!.slice(0, 100), '', 'CRASH']);
      continue;
    }
    for (const [k, v] of Object.entries(r.metrics)) rows.push([r.name, k, fmt(v), '', '']);
    for (const t of r.targets) rows.push([r.name, t.name, fmt(t.value), t.target, t.pass ? 'yes' : 'NO']);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
  const notes = results.flatMap((r) => (r.notes.length ? [``, `${r.name}:`, ...r.notes.map((n) => `  - ${n}`)] : []));
  return [...lines, ...notes].join('\n');
}

function readPrevious(path: string): StoredResult[] {
  if (!existsSync(path)) return [];
  try {
    const prev = JSON.parse(readFileSync(path, 'utf8')) as Partial<ResultsFile>;
    return Array.isArray(prev.results) ? prev.results : [];
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const all = await discover();
  if (args.list) {
    for (const b of all) process.stdout.write(`${b.name.padEnd(24)} ${b.description}\n`);
    return 0;
  }
  let selected = all;
  if (args.only) {
    const unknown = args.only.filter((n) => !all.some((b) => b.name === n));
    if (unknown.length) usage(`unknown benchmark${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (have: ${all.map((b) => b.name).join(', ')})`);
    selected = args.only.map((n) => all.find((b) => b.name === n)!);
  }
  if (selected.length === 0) usage('no benchmarks found in bench/');

  const mode = args.smoke ? 'smoke' : 'full';
  process.stdout.write(`bench (${mode}): ${selected.map((b) => b.name).join(', ')} — ${cpus().length} cpus, node ${process.version}\n`);
  // Exploration knobs change what the servers run with: such results are not the README's.
  for (const line of explorationNotes()) process.stdout.write(`${line}\n`);
  const results: StoredResult[] = [];
  for (const b of selected) {
    process.stdout.write(`\n== ${b.name}: ${b.description}\n`);
    const started = performance.now();
    const date = new Date().toISOString();
    const load0 = Math.round(loadavg()[0]! * 100) / 100;
    const loadAverage = (): { start: number; end: number } => ({ start: load0, end: Math.round(loadavg()[0]! * 100) / 100 });
    const log = (line: string): void => void process.stdout.write(`[${b.name}] ${line}\n`);
    try {
      const r = await b.run({ smoke: args.smoke, log });
      results.push({ ...r, name: r.name || b.name, description: b.description, date, smoke: args.smoke, durationSeconds: Math.round((performance.now() - started) / 100) / 10, loadAverage: loadAverage() });
    } catch (e) {
      const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
      process.stderr.write(`[${b.name}] CRASHED: ${msg}\n`);
      results.push({ name: b.name, description: b.description, metrics: {}, targets: [], notes: [], date, smoke: args.smoke, durationSeconds: Math.round((performance.now() - started) / 100) / 10, loadAverage: loadAverage(), crashed: msg });
    }
    const la = results.at(-1)!.loadAverage;
    process.stdout.write(`[${b.name}] done in ${((performance.now() - started) / 1000).toFixed(1)} s (1-min load average ${la.start} → ${la.end} on ${cpus().length} cpus)\n`);
  }

  process.stdout.write(`\n${table(results)}\n`);
  const file = join(benchDir, args.smoke ? 'results.smoke.json' : 'results.json');
  const kept = readPrevious(file).filter((p) => !results.some((r) => r.name === p.name) && all.some((b) => b.name === p.name));
  const out: ResultsFile = {
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: `${process.platform}-${process.arch}` },
    date: new Date().toISOString(),
    smoke: args.smoke,
    results: [...kept, ...results].sort((x, y) => all.findIndex((b) => b.name === x.name) - all.findIndex((b) => b.name === y.name)),
  };
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  const missed = results.flatMap((r) => r.targets.filter((t) => !t.pass).map((t) => `${r.name}: ${t.name}`));
  const crashed = results.filter((r) => r.crashed).map((r) => r.name);
  process.stdout.write(`\nwrote bench/${basename(file)}${kept.length ? ` (kept earlier results of ${kept.map((k) => k.name).join(', ')})` : ''}\n`);
  if (missed.length) process.stdout.write(`targets missed (evidence, not a failure): ${missed.join('; ')}\n`);
  if (crashed.length) process.stdout.write(`CRASHED: ${crashed.join(', ')}\n`);
  return crashed.length ? 1 : 0;
}

// Ctrl-C / SIGTERM: exit through process.exit so the 'exit' hooks kill child servers and control planes.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
