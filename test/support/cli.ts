/**
 * For tests of the CLI and of the HTTP doors without a cluster: a kubeconfig whose apiserver is a
 * closed loopback port, runCli with its output captured, and one structured-mode POST.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../shared/cli/run.js';
import type { AnyFunction } from '../../shared/core/types.js';

/** A scratch directory holding `kubeconfig`, which points at https://127.0.0.1:1 (nothing listens). */
export function unreachableCluster(prefix: string): { dir: string; kubeconfig: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n',
  );
  return { dir, kubeconfig };
}

/** runCli with stdout (joined as written) and stderr (a line each) captured. */
export async function runCliCaptured(args: string[], fns: AnyFunction[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (s) => out.push(s), err: (s) => err.push(s), env }, fns);
  return { code, out: out.join(''), err: err.join('\n') };
}

/** POSTs a structured-mode CloudEvent body to a listener on a loopback port; returns the status. */
export async function postStructured(listener: RequestListener, body: string | Buffer): Promise<number> {
  const srv = createServer(listener);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const { port } = srv.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/cloudevents+json' }, body });
    await res.text();
    return res.status;
  } finally {
    srv.close();
  }
}
