/**
 * Recorded event streams: one CloudEvent per line in structured JSON (what ApiServerSource sends,
 * as captured by `olm-medic replay` fixtures). Blank lines and lines starting with # are skipped.
 */
import { CloudEvent } from 'cloudevents';
import { BadRequest } from './types.js';

export function parseJsonl(text: string, file = 'stream'): CloudEvent<unknown>[] {
  const out: CloudEvent<unknown>[] = [];
  text.split('\n').forEach((line, i) => {
    const l = line.trim();
    if (!l || l.startsWith('#')) return;
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(l) as Record<string, unknown>;
    } catch (e) {
      throw new BadRequest(400, `${file}:${i + 1}: not JSON: ${e instanceof Error ? e.message : e}`);
    }
    try {
      out.push(new CloudEvent(obj as never));
    } catch (e) {
      throw new BadRequest(400, `${file}:${i + 1}: not a CloudEvent: ${e instanceof Error ? e.message : e}`);
    }
  });
  return out;
}

export function toJsonl(events: CloudEvent<unknown>[]): string {
  return events.map((e) => JSON.stringify(e.toJSON())).join('\n') + '\n';
}
