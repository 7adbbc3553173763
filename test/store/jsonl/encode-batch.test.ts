/**
 * The batch encoder writes each line's UTF-8 into one buffer as the line is made: the bytes must
 * be those of the lines joined with their `\n`s and the commit marker, whatever the batch's size
 * and characters, and a line over the limit must still be refused.
 */

import { describe, expect, it } from 'vitest';
import { LimitExceededError } from '../../../src/store/contract/errors.js';
import { batchText, DEFAULT_MAX_LINE_BYTES, encodeBatch } from '../../../src/store/jsonl/format.js';
import { notes } from './helpers.js';

/** Text of 1, 2, 3 and 4 UTF-8 bytes per character, of a length that varies with the seq. */
function mixedText(seq: number): string {
  return `a é ☃ 😀 ${'ü☃😀x'.repeat(seq % 97)}`;
}

describe('encodeBatch', () => {
  it('encodes a batch many times its first buffer as its lines and commit marker', () => {
    const events = notes(40, 5_000, mixedText);
    const encoded = encodeBatch('s1', events, 5_040, DEFAULT_MAX_LINE_BYTES);
    const lines = events.map((event) => JSON.stringify(event));
    const expected = Buffer.from(batchText(lines, 5_040), 'utf8');
    expect(expected.length).toBeGreaterThan(16 * 64 * 1024);
    expect(encoded.equals(expected)).toBe(true);
  });

  it('encodes a one-event batch as its line and commit marker', () => {
    const events = notes(0, 1, () => '😀 only');
    const encoded = encodeBatch('s1', events, 1, DEFAULT_MAX_LINE_BYTES);
    expect(encoded.toString('utf8')).toBe(batchText([JSON.stringify(events[0])], 1));
  });

  it('refuses a line of multi-byte characters over the limit by its UTF-8 length', () => {
    // 400 characters of 3 bytes each: 1,200 bytes, over a limit of 1,024 that its length is not.
    const events = notes(0, 2, (seq) => (seq === 1 ? '☃'.repeat(400) : 'short'));
    const error = (() => {
      try {
        encodeBatch('s1', events, 2, 1_024);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(LimitExceededError);
    expect((error as LimitExceededError).message).toMatch(/event seq 1/);
  });
});
