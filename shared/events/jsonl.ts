/**
 * Recorded event streams: one CloudEvent per line in structured JSON (what ApiServerSource sends,
 * as captured by `olm-medic replay` fixtures). Blank lines and lines starting with # are skipped.
 */
import { CloudEvent } from 'cloudevents';
import { BadRequest } from './types.js';

/** One line of a stream that holds an event: the event, or why it is not one (`at` is `file:line`). */
export type JsonlEntry = { at: string; event: CloudEvent<unknown> } | { at: string; error: string };

/** Every event line of a stream, each read on its own: a bad line is reported, never hides the rest. */
export function readJsonl(text: string, file = 'stream'): JsonlEntry[] {
  const out: JsonlEntry[] = [];
  text.split('\n').forEach((line, i) => {
    const l = line.trim();
    if (!l || l.startsWith('#')) return;
    const at = `${file}:${i + 1}`;
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(l) as Record<string, unknown>;
    } catch (e) {
      return void out.push({ at, error: `not JSON: ${e instanceof Error ? e.message : e}` });
    }
    try {
      out.push({ at, event: new CloudEvent(obj as never) });
    } catch (e) {
      out.push({ at, error: `not a CloudEvent: ${e instanceof Error ? e.message : e}` });
    }
  });
  return out;
}

/** Every event of a stream; the first bad line is a 400 naming it. */
export function parseJsonl(text: string, file = 'stream'): CloudEvent<unknown>[] {
  return readJsonl(text, file).map((e) => {
    if ('error' in e) throw new BadRequest(400, `${e.at}: ${e.error}`);
    return e.event;
  });
}

export function toJsonl(events: CloudEvent<unknown>[]): string {
  return events.map((e) => JSON.stringify(e.toJSON())).join('\n') + '\n';
}
