/** How `show` and `ls` write a duration for people. */
import { describe, expect, it } from 'vitest';
import { durationText } from '../../src/cli/render.js';

describe('durationText', () => {
  it('writes milliseconds under a second, tenths of a second under ten', () => {
    expect(durationText(0)).toBe('0 ms');
    expect(durationText(999.4)).toBe('999 ms');
    expect(durationText(4_240)).toBe('4.2 s');
    expect(durationText(42_400)).toBe('42 s');
  });

  it('writes minutes, hours and days with the next unit down', () => {
    expect(durationText(12 * 60_000 + 5_900)).toBe('12 min 5 s');
    expect(durationText(3 * 3_600_000 + 20 * 60_000)).toBe('3 h 20 min');
    expect(durationText(2 * 86_400_000 + 4 * 3_600_000 + 59 * 60_000)).toBe('2 d 4 h');
  });

  it('writes a dash for a duration that cannot be one', () => {
    expect(durationText(-1)).toBe('-');
    expect(durationText(Number.NaN)).toBe('-');
    expect(durationText(Number.POSITIVE_INFINITY)).toBe('-');
  });
});
