/**
 * Recorded event streams: one CloudEvent per line in structured JSON (what ApiServerSource sends,
 * as captured by `olm-medic replay` fixtures). Blank lines and lines starting with # are skipped.
 */
import { CloudEvent } from 'cloudevents';
import { BadRequest } from './types.js';

/**
 * The event lines of a stream, each with its place (`file:line`) and its size in bytes as written
 * (what an HTTP door would count for that body): lines end at \n, \r\n or a lone \r (JSON strings
 * cannot hold a raw CR or LF); blank lines and # comments are skipped; only the file's byte order
 * mark is dropped. A line is not trimmed: it is the body the HTTP door would get, and what the door
 * rejects (a body starting with a space) a replay rejects.
 */
export function jsonlLines(content: Buffer | string, file = 'stream'): { at: string; text: string; bytes: number }[] {
  const raw = typeof content === 'string' ? Buffer.from(content) : content;
  const out: { at: string; text: string; bytes: number }[] = [];
  let start = raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0;
  let line = 1;
  while (start <= raw.length) {
    let end = start;
    while (end < raw.length && raw[end] !== 0x0a && raw[end] !== 0x0d) end++;
    const bytes = raw.subarray(start, end);
    const text = bytes.toString('utf8');
    const t = text.trim();
    if (t && !t.startsWith('#')) out.push({ at: `${file}:${line}`, text, bytes: bytes.length });
    if (end >= raw.length) break;
    start = end + (raw[end] === 0x0d && raw[end + 1] === 0x0a ? 2 : 1);
    line++;
  }
  return out;
}

/** Every event of a stream (recorded fixtures); the first bad line is a 400 naming it. */
export function parseJsonl(text: string, file = 'stream'): CloudEvent<unknown>[] {
  return jsonlLines(text, file).map(({ at, text: l }) => {
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(l) as Record<string, unknown>;
    } catch (e) {
      throw new BadRequest(400, `${at}: not JSON: ${e instanceof Error ? e.message : e}`);
    }
    try {
      return new CloudEvent(obj as never);
    } catch (e) {
      throw new BadRequest(400, `${at}: not a CloudEvent: ${e instanceof Error ? e.message : e}`);
    }
  });
}

export function toJsonl(events: CloudEvent<unknown>[]): string {
  return events.map((e) => JSON.stringify(e.toJSON())).join('\n') + '\n';
}
