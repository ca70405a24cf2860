/**
 * RecentDigests (the engine's duplicate filter): against a plain model — the last `max` distinct
 * digests added, in arrival order, re-adding one a no-op — over generated add/has sequences with
 * many colliding index homes (so backward-shift deletion is exercised).
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentDigests } from '../../shared/core/scheduling.js';

const digestOf = (s: string): Buffer => createHash('sha256').update(s).digest();

/** A digest whose first word (its index home) is `home`, the rest from `id`: forces collisions. */
function collidingDigest(home: number, id: number): Buffer {
  const d = digestOf(String(id));
  d.writeUInt32LE(home >>> 0, 0);
  return d;
}

class Model {
  private readonly order: string[] = [];
  constructor(private readonly max: number) {}
  has(d: Buffer): boolean {
    return this.order.includes(d.subarray(0, 16).toString('hex'));
  }
  add(d: Buffer): void {
    if (this.has(d)) return;
    this.order.push(d.subarray(0, 16).toString('hex'));
    if (this.order.length > this.max) this.order.shift();
  }
  get size(): number {
    return this.order.length;
  }
}

/** An op's digest; homes near the top of the index wrap around to slot 0. */
const digestFor = (op: { home: number; id: number }): Buffer => collidingDigest(op.home % 3 === 0 ? 0xffffffff - op.home : op.home, op.id * 64 + op.home);

describe('RecentDigests', () => {
  it('answers exactly as the model over generated sequences (few index homes: long probe chains, wrap-around)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.record({ add: fc.boolean(), home: fc.integer({ min: 0, max: 40 }), id: fc.integer({ min: 0, max: 30 }) }), { maxLength: 300 }),
        (max, ops) => {
          const r = new RecentDigests(max);
          const m = new Model(max);
          for (const op of ops) {
            const d = digestFor(op);
            if (op.add) {
              r.add(d);
              m.add(d);
            } else {
              expect(r.has(d)).toBe(m.has(d));
            }
            expect(r.size).toBe(m.size);
          }
          // Every digest ever used: held exactly when the model holds it.
          for (const op of ops) expect(r.has(digestFor(op))).toBe(m.has(digestFor(op)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('forgets the oldest once full, and re-adding a held digest does not refresh it', () => {
    const r = new RecentDigests(3);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(digestOf) as [Buffer, Buffer, Buffer, Buffer];
    r.add(a);
    r.add(b);
    r.add(c);
    r.add(a); // held: no-op
    r.add(d); // evicts a, the oldest
    expect([r.has(a), r.has(b), r.has(c), r.has(d)]).toEqual([false, true, true, true]);
    expect(r.size).toBe(3);
  });

  it('compares 16 bytes: digests differing only past them are one; differing in any of them are two', () => {
    const r = new RecentDigests(4);
    const d = digestOf('x');
    r.add(d);
    const tail = Buffer.from(d);
    tail[20] = tail[20]! ^ 1;
    expect(r.has(tail)).toBe(true);
    for (const k of [0, 5, 15]) {
      const other = Buffer.from(d);
      other[k] = other[k]! ^ 1;
      expect(r.has(other)).toBe(false);
    }
    expect(() => r.has(Buffer.alloc(8))).toThrow(/16 bytes/);
    expect(() => new RecentDigests(0)).toThrow(RangeError);
  });

  it('at the engine\'s size: after 100,000 adds it holds exactly the last 10,000', () => {
    const r = new RecentDigests(10_000);
    for (let i = 0; i < 100_000; i++) r.add(digestOf(`e-${i}`));
    expect(r.size).toBe(10_000);
    for (const i of [90_000, 95_123, 99_999]) expect(r.has(digestOf(`e-${i}`))).toBe(true);
    for (const i of [0, 50_000, 89_999]) expect(r.has(digestOf(`e-${i}`))).toBe(false);
  });
});
