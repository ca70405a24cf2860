/** Decoding is tested against the real format: every event captured from Knative's adapter decodes. */
import { describe, expect, it } from 'vitest';
import { decodeEvent } from '../../shared/events/decode.js';
import { loadStream, streamFiles } from '../support/streams.js';

describe.each(streamFiles())('recorded stream %s', (file) => {
  const events = loadStream(file);
  it('is non-empty', () => expect(events.length).toBeGreaterThan(2));
  it('decodes every event to a Resource-mode trigger that agrees with the adapter extensions', () => {
    for (const ev of events) {
      const t = decodeEvent(ev);
      expect(t.kind).toBe('resource');
      if (t.kind !== 'resource') continue;
      const x = ev as unknown as Record<string, string>;
      expect(t.mode).toBe('resource');
      expect(t.ref).toMatchObject({ kind: x.kind, name: x.name, apiVersion: x.apiversion });
      expect(t.ref.namespace ?? '').toBe(x.namespace);
      expect(ev.subject).toMatch(new RegExp(`^/apis/${t.ref.apiVersion}/namespaces/${t.ref.namespace ?? ''}/[a-z]+/${t.ref.name}$`));
      expect(t.object?.metadata.resourceVersion).toMatch(/^\d+$/);
    }
  });
});
