/**
 * Reading the fixed parts of a line palimpsest wrote straight from its bytes, so that a resume
 * that elides finished chunks learns their seqs, times and sizes without decoding or parsing
 * them. Every reader here answers "not in the expected form" (-1) rather than guessing; the
 * caller then parses the line as any other, so a foreign writer's spacing only costs speed.
 */

export const NEWLINE = 0x0a;
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const MINUS = 0x2d;
export const BACKSLASH = 0x5c;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * The value of the last integer {@link integerEnd} or {@link signedIntegerEnd} read: a field
 * rather than a second return value, so that reading a million of them allocates nothing.
 */
export const parsed = { integer: 0 };

/** Whether the bytes `[start, end)` of `view` begin with `prefix`. */
export function startsWith(
  view: Uint8Array,
  start: number,
  end: number,
  prefix: Uint8Array,
): boolean {
  const length = prefix.length;
  if (end - start < length) return false;
  for (let i = 0; i < length; i++) {
    if (view[start + i] !== prefix[i]) return false;
  }
  return true;
}

/**
 * Reads a JSON integer without sign (no leading zeros, at most 16 digits, a safe integer) at
 * `start`; returns where it ends and leaves its value in {@link parsed}, or -1.
 */
export function integerEnd(view: Uint8Array, start: number, end: number): number {
  let at = start;
  let value = 0;
  while (at < end) {
    const digit = view[at] as number;
    if (digit < DIGIT_0 || digit > DIGIT_9) break;
    value = value * 10 + (digit - DIGIT_0);
    at++;
  }
  const digits = at - start;
  if (digits === 0 || digits > 16 || (digits > 1 && view[start] === DIGIT_0)) return -1;
  if (!Number.isSafeInteger(value)) return -1;
  parsed.integer = value;
  return at;
}

/**
 * Reads a JSON integer that may be negative, as {@link integerEnd}; `-0` is refused (it parses
 * as a number no writer of ours makes, so it is left to the parser and its checks).
 */
export function signedIntegerEnd(view: Uint8Array, start: number, end: number): number {
  if (view[start] !== MINUS) return integerEnd(view, start, end);
  const at = integerEnd(view, start + 1, end);
  if (at === -1 || parsed.integer === 0) return -1;
  parsed.integer = -parsed.integer;
  return at;
}
