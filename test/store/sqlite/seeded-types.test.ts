/**
 * The SQLite schema gives every type of the core vocabulary a fixed code: the list of seeded
 * types is read against the core's own list, so a type added to the vocabulary without a code
 * fails here rather than going unnoticed.
 */
import { describe, expect, it } from 'vitest';
import { KNOWN_TYPES } from '../../../src/core/events.js';
import { SEEDED_TYPES } from '../../../src/store/sqlite/schema.js';

describe('SEEDED_TYPES', () => {
  it('covers every core event type', () => {
    const seeded = new Set<string>(SEEDED_TYPES);
    expect([...KNOWN_TYPES].filter((type) => !seeded.has(type))).toEqual([]);
  });

  it('gives assistant/chunk code 0 and lists each type once', () => {
    expect(SEEDED_TYPES[0]).toBe('assistant/chunk');
    expect(new Set(SEEDED_TYPES).size).toBe(SEEDED_TYPES.length);
  });
});
