/**
 * RefusedWrites: a write the apiserver refused for good is known by its action (reason) and the
 * object state it aimed at, and only for a while (red team 30, R1: a leftover refused once was never
 * tried again though RBAC was restored; another action on the same object is its own write).
 */
import { describe, expect, it } from 'vitest';
import { REFUSAL_MEMORY_MS, RefusedWrites } from '../../shared/core/scheduling.js';

describe('RefusedWrites', () => {
  it('knows a refusal by action and object state, and forgets it after REFUSAL_MEMORY_MS', () => {
    let t = 1_000_000;
    const r = new RefusedWrites(10, () => t);
    r.note('CsvOwnedObjectDeleted', 'uid-1', '7', '403 Forbidden: no');
    expect(r.get('CsvOwnedObjectDeleted', 'uid-1', '7')).toBe('403 Forbidden: no');
    expect(r.get('CsvLeftoverDeleted', 'uid-1', '7'), 'another action on the same object').toBeUndefined();
    expect(r.get('CsvOwnedObjectDeleted', 'uid-1', '8'), 'another state of the object').toBeUndefined();
    expect(r.get('CsvOwnedObjectDeleted', 'uid-2', '7')).toBeUndefined();
    t += REFUSAL_MEMORY_MS - 1;
    expect(r.get('CsvOwnedObjectDeleted', 'uid-1', '7')).toBe('403 Forbidden: no');
    t += 1;
    expect(r.get('CsvOwnedObjectDeleted', 'uid-1', '7'), 'tried once more after a while').toBeUndefined();
  });

  it('is bounded: the oldest refusal goes first', () => {
    const r = new RefusedWrites(2, () => 0);
    r.note('a', 'u1', '1', 'x');
    r.note('a', 'u2', '1', 'x');
    r.note('a', 'u3', '1', 'x');
    expect([r.get('a', 'u1', '1'), r.get('a', 'u2', '1'), r.get('a', 'u3', '1')]).toEqual([undefined, 'x', 'x']);
  });
});
