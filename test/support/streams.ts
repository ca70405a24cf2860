/** Recorded ApiServerSource streams (test/fixtures/streams) and deterministic variants of them. */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CloudEvent } from 'cloudevents';
import { parseJsonl } from '../../shared/events/jsonl.js';

export const RECORDED_ID = 'r3c0rd';
const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'streams');

export function streamFiles(): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
}

/** The recorded stream for a seed, with object names rewritten to `id`. */
export function loadStream(file: string, id = RECORDED_ID): CloudEvent<unknown>[] {
  return parseJsonl(readFileSync(join(dir, file), 'utf8').replaceAll(RECORDED_ID, id), file);
}

/** Small seeded PRNG (mulberry32), so every variant is reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffle<T>(xs: T[], rnd: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export type Variant = { name: string; make(events: CloudEvent<unknown>[]): CloudEvent<unknown>[]; sweep?: boolean };

export const variants: Variant[] = [
  { name: 'in order', make: (e) => e },
  { name: 'every event duplicated, then the whole stream again', make: (e) => [...e.flatMap((x) => [x, x]), ...e] },
  { name: 'reversed (newest first, then stale)', make: (e) => [...e].reverse() },
  { name: 'shuffled (seed 7) with duplicates', make: (e) => shuffle([...e, ...e.slice(0, Math.ceil(e.length / 2))], prng(7)) },
  { name: 'half the events dropped, then a sweep', make: (e) => e.filter((_, i) => i % 2 === 1), sweep: true },
];
