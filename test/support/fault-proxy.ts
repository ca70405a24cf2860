/**
 * A fault-injecting HTTP proxy in front of the test apiserver: a plain HTTP listener on 127.0.0.1
 * forwarding to the HTTPS apiserver (undici, trusting the control plane's CA). A seeded PRNG picks
 * which requests fail and how:
 *   503         a Kubernetes Status body (ServiceUnavailable), request never forwarded
 *   429         Retry-After: 1 and a Status body (TooManyRequests), request never forwarded
 *   reset       the client socket is destroyed before the request is forwarded
 *   reset-after the request is forwarded and executed, then the socket is destroyed before any
 *               response byte: the client cannot tell whether its write happened
 *   latency     50–300 ms added, then forwarded normally
 *   truncate    forwarded, the status line, headers and half the body are sent, then the socket is
 *               destroyed (a reset mid-response); only by explicit rules, see faults.test.ts
 * `kubeconfig` points a client (the function server) at the proxy with the given bearer token.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';

export type Fault = '503' | '429' | 'reset' | 'reset-after' | 'latency' | 'truncate';

export interface ProxiedRequest {
  method: string;
  /** Path and query, as sent by the client. */
  url: string;
}

export interface FaultProxyOptions {
  /** The kubeconfig whose server, CA and bearer token to use (the shipped ServiceAccount's). */
  kubeconfig: string;
  /** Where to write the proxy kubeconfig. */
  dir: string;
  /** Seeded PRNG in [0, 1). */
  rnd: () => number;
  /** Share of requests that get a random fault (0..1). */
  rate: number;
  /** Random faults to pick from (default 503, 429, reset, reset-after, latency). */
  faults?: Fault[];
  /** Checked first: an explicit fault for a request (undefined: fall back to the random choice). */
  rule?: (r: ProxiedRequest) => Fault | 'pass' | undefined;
}

export interface FaultProxy {
  url: string;
  /** Kubeconfig path: server http://127.0.0.1:<port>, insecure-skip-tls-verify (plain HTTP), the token. */
  kubeconfig: string;
  token: string;
  /** Requests seen, and faults injected by kind. */
  stats: { requests: number; injected: Record<Fault, number> };
  /** Every injected fault, in order. */
  log: { fault: Fault; method: string; url: string }[];
  close(): Promise<void>;
}

interface KubeconfigJson {
  clusters: { cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users: { user: { token?: string } }[];
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade', 'proxy-connection', 'te', 'trailer']);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const cfg = JSON.parse(readFileSync(opts.kubeconfig, 'utf8')) as KubeconfigJson;
  const upstream = cfg.clusters[0]!.cluster.server.replace(/\/$/, '');
  const ca = Buffer.from(cfg.clusters[0]!.cluster['certificate-authority-data'] ?? '', 'base64');
  const token = cfg.users[0]!.user.token ?? '';
  if (!token) throw new Error(`no bearer token in ${opts.kubeconfig}`);
  const dispatcher = new Agent({ connect: { ca }, connections: 64 });
  const faults = opts.faults ?? ['503', '429', 'reset', 'reset-after', 'latency'];
  const stats = { requests: 0, injected: { '503': 0, '429': 0, reset: 0, 'reset-after': 0, latency: 0, truncate: 0 } as Record<Fault, number> };
  const log: FaultProxy['log'] = [];

  async function forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    const res = await request(`${upstream}${req.url}`, {
      method: req.method as 'GET',
      headers,
      ...(body.length ? { body } : {}),
      dispatcher,
    });
    const out = Buffer.from(await res.body.arrayBuffer());
    const rh: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) rh[k] = v;
    return { status: res.statusCode, headers: rh, body: out };
  }

  function reply(res: ServerResponse, r: { status: number; headers: Record<string, string | string[]>; body: Buffer }): void {
    res.writeHead(r.status, { ...r.headers, 'content-length': String(r.body.length) });
    res.end(r.body);
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        stats.requests++;
        const body = Buffer.concat(chunks);
        const explicit = opts.rule?.({ method: req.method ?? 'GET', url: req.url ?? '/' });
        let fault: Fault | undefined;
        if (explicit === 'pass') fault = undefined;
        else if (explicit) fault = explicit;
        else if (opts.rnd() < opts.rate) fault = faults[Math.floor(opts.rnd() * faults.length)]!;
        if (fault) {
          stats.injected[fault]++;
          log.push({ fault, method: req.method ?? '', url: req.url ?? '' });
        }
        try {
          switch (fault) {
            case '503':
              res.writeHead(503, { 'content-type': 'application/json' }).end(status(503, 'ServiceUnavailable', 'injected fault: the server is currently unable to handle the request'));
              return;
            case '429':
              res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end(status(429, 'TooManyRequests', 'injected fault: too many requests, please try again later'));
              return;
            case 'reset':
              req.socket.destroy();
              return;
            case 'reset-after':
              await forward(req, body);
              req.socket.destroy();
              return;
            case 'latency':
              await sleep(50 + Math.floor(opts.rnd() * 251));
              reply(res, await forward(req, body));
              return;
            case 'truncate': {
              const r = await forward(req, body);
              res.writeHead(r.status, { ...r.headers, 'content-length': String(r.body.length) });
              res.write(r.body.subarray(0, Math.floor(r.body.length / 2)));
              await sleep(20);
              req.socket.destroy();
              return;
            }
            default:
              reply(res, await forward(req, body));
          }
        } catch (e) {
          // The upstream itself failed: answer like an unavailable apiserver.
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(status(502, 'BadGateway', `proxy: ${e instanceof Error ? e.message : e}`));
          else req.socket.destroy();
        }
      })();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = join(opts.dir, `fault-proxy-${(server.address() as AddressInfo).port}.kubeconfig`);
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fault-proxy', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'shipped', user: { token } }],
      contexts: [{ name: 'fault-proxy', context: { cluster: 'fault-proxy', user: 'shipped' } }],
      'current-context': 'fault-proxy',
    }),
  );
  return {
    url,
    kubeconfig,
    token,
    stats,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await dispatcher.close();
    },
  };
}
