/**
 * An event row's checksum (`src/store/sql/row-checksums.ts`) is the CRC-32 of its data text and
 * the line of its other fields as one text: however it is computed, a row written before must
 * still match, or every stored session would read as damaged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32Text } from '../../src/store/contract/crc32.js';
import { rowChecksum } from '../../src/store/sql/row-checksums.js';
import { fuzzRuns } from '../fuzz-runs.js';

describe('the checksum of an event row', () => {
  it('is the CRC-32 of the data text followed by the line of its other fields', () => {
    const json = fc.option(fc.json(), { nil: null });
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 12 }),
        fc.nat(),
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        json,
        json,
        (key, seq, type, time, data, sources, surfaceOp) => {
          const line = `${data}\n${key} ${seq} ${type} ${time} ${sources ?? '-'} ${surfaceOp ?? '-'}`;
          expect(rowChecksum(key, seq, type, time, data, sources, surfaceOp)).toBe(crc32Text(line));
        },
      ),
      { numRuns: fuzzRuns(500) },
    );
  });
});
