/**
 * For tests of the CLI and of the HTTP doors without a cluster: a kubeconfig whose apiserver is a
 * closed loopback port, runCli with its output captured, one structured-mode POST, and a fake
 * function that sweeps many ConfigMaps.
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

/**
 * A fake function `fake` (v1/ConfigMap) whose sweep yields ConfigMaps ns/cm-0 … ns/cm-<n-1> and whose
 * observe returns { name }: each ConfigMap's first plan is `first(name)`, every later one noop 'settled'.
 */
export function firstPlanThenNoop(n: number, first: (name: string) => object): AnyFunction {
  const seen = new Set<string>();
  return {
    name: 'fake',
    summary: 's',
    kinds: ['v1/ConfigMap'],
    targets: (t: { ref: unknown }) => [t.ref],
    async *sweep() {
      for (let i = 0; i < n; i++) yield { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: `cm-${i}` };
    },
    observe: async (ref: { name: string }) => ({ name: ref.name }),
    plan: (o: { name: string }) => {
      if (seen.has(o.name)) return { kind: 'noop', reason: 'settled' };
      seen.add(o.name);
      return first(o.name);
    },
  } as unknown as AnyFunction;
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
