/**
 * Source timestamps as epoch ms. Every entry of every format carries one, nearly always in the
 * one shape `Date.prototype.toISOString` writes (`2026-11-04T08:00:00.000Z`); that shape is read
 * digit by digit, everything else by `Date.parse`, which costs several times more per entry.
 */

/** Epoch ms of an ISO timestamp (or of epoch ms), or `fallback` when it is neither. */
export function timeOf(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value !== 'string') return fallback;
  const ms = isoMillis(value);
  if (ms !== undefined) return ms;
  const parsed = Date.parse(value);
  return Number.isSafeInteger(parsed) ? parsed : fallback;
}

/**
 * The epoch ms of `value` when it is exactly `YYYY-MM-DDTHH:MM:SS.sssZ` with a day of at most 28
 * (a date every month has) and a time of day before 24:00; `undefined` for anything else, which
 * the caller leaves to `Date.parse`. Where it answers, it answers as `Date.parse` does.
 */
export function isoMillis(value: string): number | undefined {
  if (
    value.length !== 24 ||
    value.charCodeAt(4) !== DASH ||
    value.charCodeAt(7) !== DASH ||
    value.charCodeAt(10) !== T ||
    value.charCodeAt(13) !== COLON ||
    value.charCodeAt(16) !== COLON ||
    value.charCodeAt(19) !== DOT ||
    value.charCodeAt(23) !== Z
  ) {
    return undefined;
  }
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  const ms = digits(value, 20, 3);
  // (A field that is not all digits reads as -1.)
  if (
    year < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 28 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59 ||
    ms < 0
  ) {
    return undefined;
  }
  return (
    daysFromCivil(year, month, day) * 86_400_000 +
    hour * 3_600_000 +
    minute * 60_000 +
    second * 1000 +
    ms
  );
}

const DASH = 0x2d;
const COLON = 0x3a;
const DOT = 0x2e;
const T = 0x54;
const Z = 0x5a;

/** The number `value` writes in `count` decimal digits from `start`, or -1 if one is not a digit. */
function digits(value: string, start: number, count: number): number {
  let out = 0;
  for (let i = start; i < start + count; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    out = out * 10 + digit;
  }
  return out;
}

/** Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
