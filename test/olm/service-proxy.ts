/**
 * Cluster networking for OLM's image-based CatalogSources, kept on loopback: a SOCKS5 proxy that
 * catalog-operator reaches through its own GRPC_PROXY support (registry/grpc/source.go grpcProxyURL,
 * v0.25.0 and v0.46.0 alike; with a proxy v0.46 dials through "passthrough", so the Service name is
 * never resolved by OLM, and v0.25's grpc.Dial never resolves it either). It plays what kube-proxy and
 * cluster DNS do for `<service>.<namespace>.svc:<port>`: a connection is let through only while the
 * Service's EndpointSlices (written by the real endpointslice controller from the registry pod's
 * readiness) list a ready endpoint, and established connections are cut when none is left (the pod's
 * node died). A let-through connection goes to the bed's catalog server: every registry pod "serves"
 * the test catalog. Nothing here resolves a name; anything but `<svc>.<ns>.svc` is refused.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Obj, Rest } from './rest.js';

export interface ServiceProxy {
  /** socks5://127.0.0.1:<port>, for catalog-operator's GRPC_PROXY. */
  url: string;
  /** One line per CONNECT asked and per cut: `<time> <target> ok|refused|cut`. */
  readonly journal: string[];
  stop(): Promise<void>;
}

const SERVICE_HOST = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?$/;

export async function startServiceProxy(o: { rest: Rest; backend: { host: string; port: number } }): Promise<ServiceProxy> {
  const journal: string[] = [];
  const note = (line: string): void => {
    journal.push(`${new Date().toISOString()} ${line}`);
  };
  /** Open client connections per `<ns>/<svc>`. */
  const open = new Map<string, Set<Socket>>();

  async function ready(ns: string, svc: string): Promise<boolean> {
    const sel = encodeURIComponent(`kubernetes.io/service-name=${svc}`);
    const slices = await o.rest.list<Obj>(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${sel}`);
    return slices.some((s) => ((s as { endpoints?: { conditions?: { ready?: boolean } }[] }).endpoints ?? []).some((e) => e.conditions?.ready === true));
  }

  const server: Server = createServer((client) => {
    let buf = Buffer.alloc(0);
    let greeted = false;
    const fail = (code: number): void => {
      client.end(Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]));
    };
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      if (!greeted) {
        if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
        if (buf[0] !== 5) return void client.destroy();
        buf = buf.subarray(2 + buf[1]!);
        greeted = true;
        client.write(Buffer.from([5, 0])); // no authentication
      }
      if (buf.length < 5) return;
      if (buf[0] !== 5 || buf[1] !== 1) return fail(7); // CONNECT only
      if (buf[3] !== 3) return fail(8); // a name only: an address is never a Service
      const end = 5 + buf[4]! + 2;
      if (buf.length < end) return;
      const host = buf.subarray(5, 5 + buf[4]!).toString('latin1');
      const port = buf.readUInt16BE(end - 2);
      const early = buf.subarray(end);
      client.off('data', onData);
      client.pause();
      const target = `${host}:${port}`;
      const m = SERVICE_HOST.exec(host);
      if (!m) {
        note(`${target} refused (not <svc>.<ns>.svc)`);
        return fail(4);
      }
      const key = `${m[3]}/${m[1]}`;
      ready(m[3]!, m[1]!).then(
        (ok) => {
          if (!ok) {
            note(`${target} refused (no ready endpoint)`);
            return fail(5);
          }
          const upstream = connect({ host: o.backend.host, port: o.backend.port }, () => {
            note(`${target} ok`);
            client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
            if (early.length) upstream.write(early);
            client.pipe(upstream).pipe(client);
            client.resume();
          });
          const set = open.get(key) ?? new Set<Socket>();
          open.set(key, set.add(client));
          const close = (): void => {
            set.delete(client);
            upstream.destroy();
            client.destroy();
          };
          upstream.on('error', close);
          client.on('error', close);
          upstream.on('close', close);
          client.on('close', close);
        },
        () => fail(1),
      );
    };
    client.on('data', onData);
    client.on('error', () => client.destroy());
  });
  // The node under a pod dies: its connections die with it (kube-proxy alone would leave them to time out).
  const reaper = setInterval(() => {
    for (const [key, set] of open) {
      if (set.size === 0) continue;
      const [ns, svc] = key.split('/') as [string, string];
      ready(ns, svc).then(
        (ok) => {
          if (ok) return;
          note(`${svc}.${ns}.svc cut ${set.size} connection(s) (no ready endpoint)`);
          for (const s of set) s.destroy();
          set.clear();
        },
        () => {},
      );
    }
  }, 1000);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `socks5://127.0.0.1:${port}`,
    journal,
    async stop() {
      clearInterval(reaper);
      for (const set of open.values()) for (const s of set) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
