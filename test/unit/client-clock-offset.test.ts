/**
 * The kube client's view of the apiserver's clock (`serverNow()`, which fences and deadlines are
 * judged by) comes from answers the apiserver wrote: a success or its own Status. Red team 38's
 * suspicion: any answer's Date header moved it, so a proxy or load balancer whose clock runs ahead
 * answering 502/504 with its own HTML page set olm-medic's clock ahead until the next answer, and a
 * fence judged in that window could expire early.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/client.js';
import { startScripted, type ScriptedApiserver } from '../support/scripted-apiserver.js';

const LOCAL = Date.parse('2026-01-01T12:00:00Z');
const AHEAD = new Date(LOCAL + 3_600_000).toUTCString();
const BEHIND = new Date(LOCAL - 600_000).toUTCString();

let api: ScriptedApiserver | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A server that gives each request the next scripted answer (status, Date header, body). */
async function scripted(answers: { status: number; date: string; body: string; type?: string }[]): Promise<ReturnType<typeof createKube>> {
  let i = 0;
  api = await startScripted((_req, res) => {
    const a = answers[Math.min(i++, answers.length - 1)]!;
    res.sendDate = false;
    res.writeHead(a.status, { 'content-type': a.type ?? 'application/json', date: a.date, 'content-length': Buffer.byteLength(a.body) });
    res.end(a.body);
  });
  return createKube(api.kubeConfig(), { retries: 0, localNow: () => LOCAL });
}

const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' } });
const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'n', name: 'a' };

describe("serverNow() follows the apiserver's own answers only", () => {
  it("a proxy's 502 page with a clock an hour ahead does not move it; the apiserver's answers do", async () => {
    const kube = await scripted([
      { status: 200, date: BEHIND, body: cm },
      { status: 502, date: AHEAD, body: '<html><body><h1>502 Bad Gateway</h1></body></html>', type: 'text/html' },
    ]);
    await kube.get(ref);
    expect(kube.serverNow().getTime()).toBe(LOCAL - 600_000);
    await expect(kube.get(ref)).rejects.toThrow();
    expect(kube.serverNow().getTime()).toBe(LOCAL - 600_000);
  });

  it("twin: the apiserver's own Status (a 404) does move it", async () => {
    const notFound = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'configmaps "a" not found', details: { name: 'a', kind: 'configmaps' } });
    const kube = await scripted([
      { status: 200, date: BEHIND, body: cm },
      { status: 404, date: AHEAD, body: notFound },
    ]);
    await kube.get(ref);
    expect(await kube.get(ref)).toBeUndefined();
    expect(kube.serverNow().getTime()).toBe(LOCAL + 3_600_000);
  });
});
