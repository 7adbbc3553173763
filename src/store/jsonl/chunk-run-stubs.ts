/**
 * The stubs of a run line read from its bytes: each chunk's time and data size, for a resume
 * that elides finished chunks (see `scan.ts`), without decoding or parsing the chunk text.
 *
 * Parsing a run line builds a string for every delta, only for the resume to measure and drop
 * it: a million strings on a 5,000-turn log, most of a fast resume's time and garbage. The
 * bytes already say what a stub needs. A delta `s` that a writer encoded as `JSON.stringify`
 * does (the writer of `run-line.ts` does) is as long in the line as in its event's data; one
 * with a `\u` escape, which `JSON.stringify` writes only for control characters and lone
 * surrogates and a foreign writer may write for anything, is parsed and measured instead, as
 * are the parts (objects), which are few. Anything not in the writer's exact form (spacing, key
 * order, numbers that are not plain integers) is refused, and the caller parses the line.
 *
 * The bytes were checked as UTF-8 and checksummed with their batch before they get here.
 */
import type { JsonObject } from '../../core/index.js';
import { deltaPart } from '../contract/delta-part.js';
import { MIN_RUN_CHUNKS, RUN_KEY } from './chunk-run-line.js';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  integerEnd,
  OPEN_BRACE,
  OPEN_BRACKET,
  parsed,
  QUOTE,
  signedIntegerEnd,
  startsWith,
} from './line-bytes.js';

const SEQ_PREFIX = Buffer.from(`{"${RUN_KEY}":{"seq":`);
const TIME_KEY = Buffer.from(',"time":');
const TURN_KEY = Buffer.from(',"turn":');
const STEP_KEY = Buffer.from(',"step":');
const DT_KEY = Buffer.from(',"dt":[');
const CHUNKS_KEY = Buffer.from(',"chunks":[');
/** `{"turn":` `,"step":` `,"chunk":` `}`: a chunk's data around its turn, step and part. */
const DATA_AROUND_BYTES = 26;
const LOWER_U = 0x75;
/** The escapes `JSON.stringify` writes in two bytes: `\"` `\\` `\b` `\f` `\n` `\r` `\t`. */
const SHORT_ESCAPES = new Set([QUOTE, BACKSLASH, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const CONTROL_LIMIT = 0x20;

/**
 * Reads run lines' stubs into reusable arrays: after {@link RunStubs.read} returns `n`, chunk
 * `i < n` of the run has time `times[i]` and data size `sizes[i]` (the UTF-8 length of its data
 * as JSON text, the size its stub reports).
 */
export class RunStubs {
  times = new Float64Array(1024);
  sizes = new Float64Array(1024);
  /** Where the line's next backslash is (its end when there is none), -1 before it is looked for. */
  #backslash = -1;

  /**
   * Reads the run line `[start, end)` of `view` whose first event is `seq`; returns how many
   * chunks it holds, or -1 when the line is not exactly in the form palimpsest writes (the
   * caller then parses it, and names what is wrong with it).
   */
  read(view: Buffer, start: number, end: number, seq: number): number {
    this.#backslash = -1;
    if (!startsWith(view, start, end, SEQ_PREFIX)) return -1;
    let at = integerEnd(view, start + SEQ_PREFIX.length, end);
    if (at === -1 || parsed.integer !== seq) return -1;
    at = field(view, at, end, TIME_KEY);
    if (at === -1) return -1;
    let time = parsed.integer;
    this.times[0] = time;
    const turnStart = at + TURN_KEY.length;
    at = field(view, at, end, TURN_KEY);
    if (at === -1) return -1;
    const stepStart = at + STEP_KEY.length;
    const turnDigits = at - turnStart;
    at = field(view, at, end, STEP_KEY);
    if (at === -1 || !startsWith(view, at, end, DT_KEY)) return -1;
    const around = DATA_AROUND_BYTES + turnDigits + (at - stepStart);
    at += DT_KEY.length;
    let count = 1;
    if (view[at] === CLOSE_BRACKET) at++;
    else {
      for (;;) {
        at = signedIntegerEnd(view, at, end);
        if (at === -1) return -1;
        time += parsed.integer;
        if (!Number.isSafeInteger(time)) return -1;
        this.#reserve(count + 1);
        this.times[count++] = time;
        const separator = view[at++];
        if (separator === CLOSE_BRACKET) break;
        if (separator !== COMMA) return -1;
      }
    }
    if (count < MIN_RUN_CHUNKS || !startsWith(view, at, end, CHUNKS_KEY)) return -1;
    return this.#sizeChunks(view, at + CHUNKS_KEY.length, end, around, count);
  }

  /** Sizes the `count` chunks of the array at `start`, which must end the line with `]}}`. */
  #sizeChunks(view: Buffer, start: number, end: number, around: number, count: number): number {
    const sizes = this.sizes;
    let at = start;
    // What a delta string's data holds beside it: `around` and `{"type":…,"id":…,"delta":}`.
    let deltaAround = -1;
    for (let i = 0; i < count; i++) {
      const first = view[at];
      let after: number;
      if (first === QUOTE) {
        after = this.#deltaEnd(view, at, end);
        if (after === -1 || deltaAround === -1) return -1;
        const length = scanned.unicodeEscape ? stringifiedLength(view, at, after) : after - at;
        if (length === -1) return -1;
        sizes[i] = deltaAround + length;
      } else if (first === OPEN_BRACE) {
        after = objectEnd(view, at, end);
        const part = after === -1 ? undefined : parsePart(view, at, after);
        if (part === undefined) return -1;
        sizes[i] = around + Buffer.byteLength(JSON.stringify(part));
        const delta = deltaPart(part);
        deltaAround =
          delta === undefined
            ? -1
            : around +
              Buffer.byteLength(
                `{"type":${JSON.stringify(delta.type)},"id":${JSON.stringify(delta.id)},"delta":}`,
              );
      } else {
        return -1;
      }
      at = after;
      const separator = view[at++];
      if (separator !== (i < count - 1 ? COMMA : CLOSE_BRACKET)) return -1;
    }
    return at + 2 === end && view[at] === CLOSE_BRACE && view[at + 1] === CLOSE_BRACE ? count : -1;
  }

  /**
   * Where the delta string at `start` ends, as {@link stringEnd}. Most deltas hold no escape:
   * their closing quote is found natively, and the line's next backslash tells whether one came
   * before it (then the string is read byte by byte). Raw control characters are not looked for
   * on that path: as in the data of a chunk line, bytes the batch's checksum covers are taken as
   * written.
   */
  #deltaEnd(view: Buffer, start: number, end: number): number {
    const quote = view.indexOf(QUOTE, start + 1);
    if (quote === -1 || quote >= end) return -1;
    if (this.#backslash < start) {
      const next = view.indexOf(BACKSLASH, start);
      this.#backslash = next === -1 || next >= end ? end : next;
    }
    if (this.#backslash > quote) {
      scanned.unicodeEscape = false;
      return quote + 1;
    }
    return stringEnd(view, start, end);
  }

  #reserve(count: number): void {
    if (count <= this.times.length) return;
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
    this.sizes = new Float64Array(times.length);
  }
}

/** Reads `key` and the integer after it at `at`; where it ends, or -1. */
function field(view: Buffer, at: number, end: number, key: Uint8Array): number {
  return startsWith(view, at, end, key) ? signedIntegerEnd(view, at + key.length, end) : -1;
}

/** What {@link stringEnd} saw in the last string it read. */
const scanned = { unicodeEscape: false };

/**
 * Where the JSON string at `start` ends (after its closing quote), or -1 when it is malformed
 * (a raw control character, an escape JSON does not have, no closing quote). Whether it holds a
 * `\u` escape is left in {@link scanned}.
 */
function stringEnd(view: Buffer, start: number, end: number): number {
  scanned.unicodeEscape = false;
  let at = start + 1;
  while (at < end) {
    const byte = view[at] as number;
    if (byte === QUOTE) return at + 1;
    if (byte < CONTROL_LIMIT) return -1;
    if (byte === BACKSLASH) {
      const escaped = view[at + 1] as number;
      if (escaped === LOWER_U) scanned.unicodeEscape = true;
      else if (!SHORT_ESCAPES.has(escaped)) return -1;
      // The four digits of a `\u` escape are read as plain characters; the parse checks them.
      at += 2;
      continue;
    }
    at++;
  }
  return -1;
}

/** The UTF-8 length of the string `[start, end)` as `JSON.stringify` writes it, or -1. */
function stringifiedLength(view: Buffer, start: number, end: number): number {
  try {
    const value: unknown = JSON.parse(view.toString('utf8', start, end));
    return typeof value === 'string' ? Buffer.byteLength(JSON.stringify(value)) : -1;
  } catch {
    return -1;
  }
}

/** Where the JSON object at `start` ends (after its closing brace), or -1. */
function objectEnd(view: Buffer, start: number, end: number): number {
  let depth = 0;
  let at = start;
  while (at < end) {
    const byte = view[at] as number;
    if (byte === QUOTE) {
      at = stringEnd(view, at, end);
      if (at === -1) return -1;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return at + 1;
    }
    at++;
  }
  return -1;
}

/** The part (a plain object) at `[start, end)`, or `undefined`. */
function parsePart(view: Buffer, start: number, end: number): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(view.toString('utf8', start, end));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}
