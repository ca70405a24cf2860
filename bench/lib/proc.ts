import { npmStartArgs, npmStartEnv } from '../../test/support/start-command.js';
import { dieWithParent } from '../../test/support/parent-death.js';
/**
 * Child processes for the benchmarks: spawned with the runner's own Node (process.execPath),
 * output to a log file (never piped through the runner, so the load generator pays nothing for
 * it), always stopped — by the benchmark's finally, by an exit hook if the runner exits, and by the
 * kernel (a parent-death signal) if the runner is killed outright.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const benchDir = join(root, 'bench');
export const fixturesDir = join(benchDir, 'fixtures');

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Child {
  proc: ChildProcess;
  pid: number;
  logFile: string;
  /** Last lines of the child's stdout+stderr. */
  tail(lines?: number): string;
  running(): boolean;
  /** SIGTERM (or `signal`), SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  cwd?: string;
  logFile: string;
}

/** `node <args>` with a minimal environment (PATH, HOME + `env`), like the test server helper. */
export function spawnNode(args: string[], o: SpawnOptions): Child {
  const fd = openSync(o.logFile, 'w');
  let proc: ChildProcess;
  try {
    // Under a parent-death signal: a SIGKILLed runner must not leave a server behind (parent-death.ts).
    proc = spawn(...dieWithParent(process.execPath, args), {
      cwd: o.cwd ?? root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...o.env },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  live.add(proc);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  void exited.then(() => live.delete(proc));
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null;
  return {
    proc,
    pid: proc.pid ?? -1,
    logFile: o.logFile,
    running,
    tail(lines = 20) {
      try {
        return readFileSync(o.logFile, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '(no output)';
      }
    },
    async stop(signal = 'SIGTERM', graceMs = 5_000) {
      if (!running()) return;
      proc.kill(signal);
      const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
      if (!done && running()) {
        proc.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** A scratch directory for logs and kubeconfigs, removed by the returned cleanup. */
export function scratchDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `olm-medic-bench-${prefix}-`));
  return {
    dir,
    cleanup: () => {
      if (!process.env.OLM_MEDIC_BENCH_KEEP && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** VmRSS of a process in bytes (Linux /proc), or undefined once it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * olm-medic's production start command as Node arguments — exactly what `npm start` runs (its Node
 * flags and scripts/start.mjs, which loads the bundle); a clear error when `npm run build` was not run.
 */
export function serverEntry(): string[] {
  const p = join(root, 'dist', 'server.mjs');
  if (!existsSync(p)) throw new Error(`${p} is missing: run \`npm run build\` first (npm run bench does)`);
  return npmStartArgs();
}

/**
 * The environment `npm start` sets for the server (its leading NAME=value assignments): spread it
 * into the server's env. Exploration only (never set by npm run bench): OLM_MEDIC_BENCH_SERVER_ENV=
 * NAME=value,... adds to it in every benchmark, which then says so in its notes.
 */
export function serverEnv(): Record<string, string> {
  const extra = (process.env.OLM_MEDIC_BENCH_SERVER_ENV ?? '').split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]);
  return { ...npmStartEnv(), ...Object.fromEntries(extra) };
}

/** The exploration knobs that change what a benchmark's server runs with (never set by npm run bench). */
export const EXPLORATION_KNOBS = ['OLM_MEDIC_BENCH_SERVER_ENV', 'OLM_MEDIC_BENCH_SERVER_NODE_OPTIONS'] as const;

/** One "EXPLORATION RUN: …" line per knob that is set: for a benchmark's notes and the runner's banner. */
export function explorationNotes(): string[] {
  return EXPLORATION_KNOBS.flatMap((k) => (process.env[k] ? [`EXPLORATION RUN: ${k}=${process.env[k]}`] : []));
}
