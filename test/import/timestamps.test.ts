/**
 * The digit-by-digit reading of source timestamps (`src/import/timestamps.ts`) must answer as
 * `Date.parse` does wherever it answers, and leave every other string to it. The oracle is
 * `Date.parse` itself, on timestamps in the shape harnesses write and on near misses of it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoMillis, timeOf } from '../../src/import/timestamps.js';
import { fuzzRuns } from '../fuzz-runs.js';

/** timeOf as it read every timestamp before the shortcut. */
function reference(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value !== 'string') return fallback;
  const ms = Date.parse(value);
  return Number.isSafeInteger(ms) ? ms : fallback;
}

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

/** `YYYY-MM-DDTHH:MM:SS.sssZ` from fields that may be out of range (up to two digits over). */
const isoShaped = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 0, max: 19 }),
    day: fc.integer({ min: 0, max: 39 }),
    hour: fc.integer({ min: 0, max: 29 }),
    minute: fc.integer({ min: 0, max: 69 }),
    second: fc.integer({ min: 0, max: 69 }),
    ms: fc.integer({ min: 0, max: 999 }),
  })
  .map(
    (f) =>
      `${pad(f.year, 4)}-${pad(f.month, 2)}-${pad(f.day, 2)}T${pad(f.hour, 2)}:${pad(f.minute, 2)}:${pad(f.second, 2)}.${pad(f.ms, 3)}Z`,
  );

/** A timestamp as toISOString writes it, anywhere in years 0 to 9999. */
const written = fc
  .integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 })
  .map((ms) => new Date(ms).toISOString());

/** One character of a well-formed timestamp changed, dropped or added. */
const nearMiss = fc
  .tuple(
    written,
    fc.nat(),
    fc.constantFrom('edit', 'drop', 'add'),
    fc.constantFrom(...'0123456789-:.TZtz +/ '),
  )
  .map(([value, at, how, char]) => {
    const i = at % value.length;
    if (how === 'drop') return value.slice(0, i) + value.slice(i + 1);
    if (how === 'add') return value.slice(0, i) + char + value.slice(i);
    return value.slice(0, i) + char + value.slice(i + 1);
  });

describe('source timestamps', () => {
  it('reads every timestamp in the ISO shape as Date.parse does', () => {
    fc.assert(
      fc.property(fc.oneof(written, isoShaped, nearMiss), (value) => {
        expect(timeOf(value, -1)).toBe(reference(value, -1));
      }),
      { numRuns: fuzzRuns(50_000) },
    );
  });

  it('answers itself for the shape harnesses write and leaves the rest to Date.parse', () => {
    expect(isoMillis('2026-11-04T08:00:00.000Z')).toBe(Date.parse('2026-11-04T08:00:00.000Z'));
    expect(isoMillis('0000-01-01T00:00:00.000Z')).toBe(Date.parse('0000-01-01T00:00:00.000Z'));
    // A day past 28, a time of 24:00, any other shape: Date.parse decides.
    for (const value of [
      '2024-02-29T12:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-11-04T08:00:00Z',
      '2026-11-04T08:00:00.000+00:00',
      '+002026-11-04T08:00:00.000Z',
      '2026-11-04',
    ]) {
      expect(isoMillis(value)).toBeUndefined();
      expect(timeOf(value, -1)).toBe(reference(value, -1));
    }
  });

  it('keeps numbers and other values as before', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.anything()), (value) => {
        expect(timeOf(value, 7)).toBe(reference(value, 7));
      }),
      { numRuns: fuzzRuns(2_000) },
    );
  });
});
