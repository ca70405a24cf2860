/**
 * Reads the control plane's apiserver audit log (JSON lines, one ResponseComplete entry per
 * request) from a byte offset, so a benchmark can count exactly the requests one identity made
 * inside a window without re-parsing everything the seeding wrote before it.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

export interface AuditRecord {
  verb: string;
  requestURI: string;
  stage?: string;
  user: { username: string };
  responseStatus?: { code: number };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

export class AuditLog {
  constructor(readonly path: string) {}

  /** Current size in bytes: the offset a window starts at. */
  size(): number {
    return existsSync(this.path) ? statSync(this.path).size : 0;
  }

  /** Complete entries in [from, to) (to: the end of the file), optionally only those made by `user`. */
  read(from: number, user?: string, to?: number): { entries: AuditRecord[]; end: number } {
    const end = to ?? this.size();
    if (end <= from) return { entries: [], end: from };
    const fd = openSync(this.path, 'r');
    const chunks: Buffer[] = [];
    try {
      const step = 16 * 1024 * 1024;
      for (let pos = from; pos < end; pos += step) {
        const buf = Buffer.allocUnsafe(Math.min(step, end - pos));
        const n = readSync(fd, buf, 0, buf.length, pos);
        chunks.push(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const lastNl = text.lastIndexOf('\n');
    if (lastNl < 0) return { entries: [], end: from };
    const needle = user ? `"username":${JSON.stringify(user)}` : undefined;
    const entries: AuditRecord[] = [];
    for (const line of text.slice(0, lastNl).split('\n')) {
      if (!line || (needle && !line.includes(needle))) continue;
      const e = JSON.parse(line) as AuditRecord;
      if (e.stage && e.stage !== 'ResponseComplete') continue;
      if (user && e.user?.username !== user) continue;
      entries.push(e);
    }
    return { entries, end: from + Buffer.byteLength(text.slice(0, lastNl + 1)) };
  }

  /**
   * Waits until `done()` is true and `user` has made no request for `quietMs`, then returns every
   * request `user` made since `from`. Fails after `timeoutMs`.
   */
  async settle(from: number, user: string, o: { done?: () => Promise<boolean>; quietMs: number; timeoutMs: number; pollMs?: number }): Promise<AuditRecord[]> {
    const started = Date.now();
    let seen = -1;
    let lastChange = Date.now();
    let isDone = false;
    for (;;) {
      const n = this.read(from, user).entries.length;
      if (n !== seen) {
        seen = n;
        lastChange = Date.now();
      }
      if (!isDone) isDone = o.done ? await o.done() : true;
      if (isDone && Date.now() - lastChange >= o.quietMs) return this.read(from, user).entries;
      if (Date.now() - started > o.timeoutMs) throw new Error(`not settled after ${o.timeoutMs} ms (done=${isDone}, ${seen} requests so far)`);
      await new Promise((r) => setTimeout(r, o.pollMs ?? 50));
    }
  }
}

/** "verb resource[/subresource]" plus the scope of lists (cluster-wide or in one namespace). */
export function requestKey(e: AuditRecord): string {
  const r = e.objectRef ?? {};
  const res = `${r.resource ?? '?'}${r.subresource ? `/${r.subresource}` : ''}`;
  if (e.verb === 'list') return `list ${res} (${r.namespace ? 'namespace' : 'all namespaces'})`;
  return `${e.verb} ${res}`;
}

export function countBy<T>(xs: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

export function formatCounts(c: Record<string, number>): string {
  const parts = Object.entries(c).map(([k, n]) => `${k} ${n}`);
  return parts.length ? parts.join(', ') : '(none)';
}

/** The `limit` query parameter of a request URI (undefined: not paginated). */
export function limitOf(requestURI: string): number | undefined {
  const q = requestURI.indexOf('?');
  if (q < 0) return undefined;
  const v = new URLSearchParams(requestURI.slice(q + 1)).get('limit');
  return v === null ? undefined : Number(v);
}
