/** Spawning and stopping the bed's long-running processes, each logging to a file. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface Proc {
  name: string;
  /** The current process (a new one after each restart). */
  readonly proc: ChildProcess;
  /** How often it exited and was started again (restart: true). */
  readonly restarts: number;
  /** Restarted on exit, so an exit is not a failure. */
  readonly supervised: boolean;
  logFile: string;
  tail(lines?: number): string;
  stop(): Promise<void>;
}

/**
 * Starts `bin`, logging to `logFile`. With `restart`, an exit is answered by starting it again, as
 * the kubelet does for a Deployment's pod (OLM's catalog-operator exits on purpose after its labeller).
 */
export function startProc(name: string, bin: string, args: string[], logFile: string, env: Record<string, string> = {}, opts: { restart?: boolean } = {}): Proc {
  const out = createWriteStream(logFile, { flags: 'a' });
  let stopped = false;
  let restarts = 0;
  const spawnOne = (): ChildProcess => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } });
    p.stdout!.pipe(out, { end: false });
    p.stderr!.pipe(out, { end: false });
    if (opts.restart) {
      p.once('exit', (code, signal) => {
        if (stopped) return;
        out.write(`\n[olm-bed] ${name} exited (code ${code}, signal ${signal}); starting it again\n`);
        restarts++;
        setTimeout(() => {
          if (!stopped) current = spawnOne();
        }, 500);
      });
    }
    return p;
  };
  let current = spawnOne();
  const kill = (): void => {
    if (current.exitCode === null && current.signalCode === null) current.kill('SIGKILL');
  };
  process.once('exit', kill);
  return {
    name,
    get proc() {
      return current;
    },
    get restarts() {
      return restarts;
    },
    supervised: opts.restart === true,
    logFile,
    tail(lines = 30) {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '(no log)';
      }
    },
    async stop() {
      stopped = true;
      process.removeListener('exit', kill);
      const proc = current;
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await Promise.race([new Promise((r) => proc.once('exit', r)), new Promise((r) => setTimeout(r, 5_000))]);
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGKILL');
        await new Promise((r) => proc.once('exit', r));
      }
    },
  };
}

export async function until<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs: number, procs: Proc[] = []): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    for (const p of procs) if (p.proc.exitCode !== null && !p.supervised) throw new Error(`${p.name} exited with ${p.proc.exitCode} while waiting for ${what}:\n${p.tail()}`);
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `: ${String(last)}` : ''}${procs.map((p) => `\n--- ${p.name}\n${p.tail(15)}`).join('')}`);
}

export interface Socket {
  proto: 'tcp' | 'tcp6' | 'udp' | 'udp6';
  local: string;
  remote: string;
  listening: boolean;
}

/** Every TCP/UDP socket a process holds (its fds matched against /proc/<pid>/net/*), decoded. */
export function sockets(pid: number): Socket[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  const out: Socket[] = [];
  for (const proto of ['tcp', 'tcp6', 'udp', 'udp6'] as const) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${proto}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      out.push({ proto, local: endpoint(f[1]!), remote: endpoint(f[2]!), listening: proto.startsWith('tcp') && f[3] === '0A' });
    }
  }
  return out;
}

/** True for 127.0.0.0/8, ::1, IPv4-mapped loopback, and the unspecified remote of an unconnected socket. */
export function isLoopbackOrUnset(endpointText: string, allowUnspecified: boolean): boolean {
  const host = endpointText.slice(0, endpointText.lastIndexOf(':'));
  if (host.startsWith('127.') || host === '[::1]') return true;
  return allowUnspecified && (host === '0.0.0.0' || host === '[::]');
}

function endpoint(hexPair: string): string {
  const [hex, port] = hexPair.split(':');
  return `${decodeAddr(hex!)}:${parseInt(port!, 16)}`;
}

function decodeAddr(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  if (hex === '00000000000000000000000000000000') return '[::]';
  if (hex === '00000000000000000000000001000000') return '[::1]';
  if (hex.startsWith('0000000000000000FFFF0000')) return decodeAddr(hex.slice(24));
  return `[${hex}]`;
}
