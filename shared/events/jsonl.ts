/**
 * Recorded event streams: one CloudEvent per line in structured JSON (what ApiServerSource sends,
 * as captured by `olm-medic replay` fixtures). Blank lines and lines starting with # are skipped.
 */
import { CloudEvent } from 'cloudevents';
import { BadRequest } from './types.js';

/**
 * The event lines of a stream, each with its place (`file:line`), as written: lines end at \n,
 * \r\n or a lone \r (JSON strings cannot hold a raw CR or LF); blank lines and # comments are
 * skipped; only the file's byte order mark is dropped. A line is not trimmed: it is the body the
 * HTTP door would get, and what the door rejects (a body starting with a space) a replay rejects.
 */
export function jsonlLines(text: string, file = 'stream'): { at: string; text: string }[] {
  const out: { at: string; text: string }[] = [];
  text.split(/\r\n|\n|\r/).forEach((line, i) => {
    const l = i === 0 && line.startsWith('\ufeff') ? line.slice(1) : line;
    const t = l.trim();
    if (t && !t.startsWith('#')) out.push({ at: `${file}:${i + 1}`, text: l });
  });
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
