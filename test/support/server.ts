/** Spawns the production server (`npm start`: scripts/start.mjs -> dist/server.mjs) against the test control plane. */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../control-plane/control-plane.js';
import { npmStartArgs, npmStartEnv } from './start-command.js';

export interface RunningServer {
  url: string;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort();
  let out = '';
  // Exactly what `npm start` runs (Node flags + scripts/start.mjs, which loads dist/server.mjs).
  const proc = spawn(process.execPath, npmStartArgs(), {
    env: { PATH: process.env.PATH ?? '', ...npmStartEnv(), PORT: String(port), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000; // generous: suites start several servers on a loaded 2-core machine
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}: ${out}`);
    try {
      if ((await fetch(`${url}/health/readiness`)).ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`server not ready: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    },
  };
}
