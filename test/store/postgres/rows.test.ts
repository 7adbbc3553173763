/**
 * The decoding of a fast load's aggregated chunk metadata and its merge with the rows loaded
 * whole: pure functions, no server.
 */
import { describe, expect, it } from 'vitest';
import { isElidedChunk, type SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/index.js';
import {
  ELIDABLE_CHUNK_BYTES,
  mergeElided,
  parseElidableChunks,
} from '../../../src/store/postgres/rows.js';

const site = { location: 'postgres://test', id: 's' };

/** The aggregate as the server sends it: int8 seq, int8 time, int4 size per chunk. */
function packed(...chunks: [seq: number, time: number, bytes: number][]): Buffer {
  const buffer = Buffer.alloc(chunks.length * ELIDABLE_CHUNK_BYTES);
  chunks.forEach(([seq, time, bytes], index) => {
    const at = index * ELIDABLE_CHUNK_BYTES;
    buffer.writeBigInt64BE(BigInt(seq), at);
    buffer.writeBigInt64BE(BigInt(time), at + 8);
    buffer.writeInt32BE(bytes, at + 16);
  });
  return buffer;
}

function note(seq: number): SessionEvent {
  return { seq, time: 10 + seq, type: 'app/note', data: { seq } } as SessionEvent;
}

describe('the aggregated chunk metadata of a fast load', () => {
  it('places each chunk by its seq, negative and large times included, in any order', () => {
    const chunks = parseElidableChunks(
      site,
      packed([3, 1_700_000_000_000, 0], [1, -5, 12], [2, 2 ** 40 + 7, 3]),
      4,
    );
    expect(chunks.count).toBe(3);
    expect([...chunks.at]).toEqual([0, 1, 1, 1]);
    expect([...chunks.times]).toEqual([0, -5, 2 ** 40 + 7, 1_700_000_000_000]);
    expect([...chunks.bytes]).toEqual([0, 12, 3, 0]);
  });

  it('is empty when the session has no chunks', () => {
    expect(parseElidableChunks(site, null, 3).count).toBe(0);
  });

  it('refuses a truncated aggregate, a seq beyond the recorded length and a repeated seq', () => {
    expect(() => parseElidableChunks(site, packed([1, 1, 1]).subarray(1), 2)).toThrow(
      /not a multiple of 20/,
    );
    expect(() => parseElidableChunks(site, packed([5, 1, 1]), 5)).toThrow(
      /beyond its recorded length of 5/,
    );
    expect(() => parseElidableChunks(site, packed([1, 1, 1], [1, 2, 2]), 5)).toThrow(
      CorruptLogError,
    );
  });
});

describe('merging the rows loaded whole with the elided chunks', () => {
  it('gives every seq in order, stubs where the chunks were', () => {
    const merged = mergeElided(
      site,
      [note(0), note(3)],
      parseElidableChunks(site, packed([2, 12, 5], [1, 11, 4]), 4),
      4,
    );
    expect(merged.events.map((event) => event.seq)).toEqual([0, 1, 2, 3]);
    expect(merged.elided).toEqual([1, 2]);
    expect(isElidedChunk(merged.events[1] as SessionEvent)).toBe(true);
    expect(merged.events[2]).toEqual({
      seq: 2,
      time: 12,
      type: 'assistant/chunk',
      data: { elided: { bytes: 5 } },
    });
  });

  it('names the first missing seq', () => {
    const merge = () =>
      mergeElided(site, [note(0), note(3)], parseElidableChunks(site, packed([1, 11, 4]), 4), 4);
    expect(merge).toThrow(CorruptLogError);
    expect(merge).toThrow(/no event with seq 2/);
  });

  it('refuses a row loaded whole beyond the recorded length', () => {
    expect(() =>
      mergeElided(site, [note(0), note(1)], parseElidableChunks(site, null, 1), 1),
    ).toThrow(/beyond its recorded length of 1/);
  });
});
