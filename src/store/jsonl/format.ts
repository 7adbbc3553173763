/**
 * The JSONL log format: how a batch is framed (event lines, then a commit marker with the
 * batch's length and CRC-32), and how a commit marker is recognized.
 *
 * A log is UTF-8 text with `\n` line ends:
 *
 * ```text
 * {"version":1,"id":"demo","createdAt":1700000000000}      <- header (line 1)
 * {"seq":0,"time":...,"type":"turn/start","data":{...}}     <- batch 1: its events...
 * {"seq":1,...}
 * {"commit":2}                                             <- ...then one commit marker
 * {"seq":2,...}                                             <- batch 2
 * {"run":{"seq":3,...,"chunks":[...]}}                     <- chunks 3..5 (`run-line.ts`)
 * {"commit":6}
 * ```
 *
 * Every batch (one append) is written as its event lines followed by one commit marker
 * `{"commit":N}`, N being the number of events committed once the batch is in. The marker is
 * what makes "only the final, unacknowledged batch may be damaged" decidable without
 * heuristics: an append is acknowledged only after its whole buffer, marker included, is
 * durable, and at most one batch is in flight per session. So damage *before* the last commit
 * marker is in acknowledged data (a `CorruptLogError`), while lines after it belong to a batch
 * that never completed (a torn tail, dropped by the next writer). An empty session is just the
 * header line.
 *
 * Reading lines is `line-reader.ts`, the header line `header.ts`, the reference line-by-line
 * reader `line-scan.ts` and the fast batch scanner `scan.ts`.
 */

import type { SessionEvent } from '../../core/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { crc32 } from '../contract/crc32.js';
import { LimitExceededError } from '../contract/errors.js';
import { encodeLines } from './chunk-run-line.js';
import type { FsFileHandle } from './fs.js';
import { readFully } from './line-reader.js';

/** Default largest line (and so largest serialized event or header), in bytes, without the `\n`. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** The key of a commit marker line. */
export const COMMIT_KEY = 'commit';

const NEWLINE = 0x0a;
/** `{"commit":` */
const COMMIT_PREFIX = Buffer.from(`{"${COMMIT_KEY}":`);
/** A commit marker, exactly as written (no spaces, no leading zeros). */
const COMMIT_LINE =
  /^\{"commit":(0|[1-9][0-9]{0,15}),"bytes":(0|[1-9][0-9]{0,15}),"crc32":(0|[1-9][0-9]{0,9})\}$/;
/**
 * Longest commit line with its `\n` (a 16-digit count and a 10-digit checksum), so the tail
 * probe reads little.
 */
const MAX_COMMIT_LINE_BYTES =
  COMMIT_PREFIX.length + 16 + ',"bytes":'.length + 16 + ',"crc32":'.length + 10 + 2;
/** A line end, for checksums over a line and its `\n`. */
export const NEWLINE_BYTES = Buffer.from('\n');
/** The first size of a batch's buffer: a streamed turn's lines fit in it or in its double. */
const FIRST_BATCH_BYTES = 64 * 1024;

/**
 * One batch as written: its event lines (consecutive chunks of a step as run lines), then the
 * commit marker. Every line is checked against the limit before anything is written.
 */
export function encodeBatch(
  id: string,
  events: readonly SessionEvent[],
  committedAfter: number,
  maxLineBytes: number,
): Buffer {
  // Each line is encoded into the batch's buffer as soon as it is made, once: its string is
  // garbage before the next line exists. Joining a batch's lines into one string first (as this
  // did until 2026-12-07) kept every line alive until the batch was encoded, so a group commit's
  // batch of a few hundred turns was copied by each scavenge it lived through and cost about 1.5×
  // per turn what a batch of one turn did (see docs/benchmarks.md, "Group commit").
  const out = new BatchBytes(FIRST_BATCH_BYTES);
  const where = `append to session '${id.slice(0, 80)}'`;
  const stringify = (value: unknown, seq: number): string => {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      throw new InvalidArgumentError(`${where}: event seq ${seq} is not serializable as JSON`, {
        cause: error,
      });
    }
    if (typeof json !== 'string') {
      throw new InvalidArgumentError(`${where}: event seq ${seq} is not serializable as JSON`);
    }
    return json;
  };
  encodeLines(events, maxLineBytes, stringify, (line, seq) => {
    if (!line.startsWith('{')) {
      throw new InvalidArgumentError(`${where}: event seq ${seq} is not a JSON object`);
    }
    // A line's UTF-8 length is at most 3 bytes per UTF-16 unit: only a line that could be over
    // the limit is measured before it is written.
    if (line.length * 3 > maxLineBytes) {
      const bytes = Buffer.byteLength(line, 'utf8');
      if (bytes > maxLineBytes) {
        throw new LimitExceededError(
          'maxLineBytes',
          maxLineBytes,
          bytes,
          `${where}, event seq ${seq}`,
        );
      }
    }
    out.writeLine(line);
  });
  return out.framed(committedAfter);
}

/** A batch's bytes as they are written: its lines' UTF-8, then its commit marker. */
class BatchBytes {
  #buffer: Buffer;
  #used = 0;

  constructor(size: number) {
    this.#buffer = Buffer.allocUnsafe(size);
  }

  /** Writes `line` and its `\n`, making room for 3 bytes per UTF-16 unit first. */
  writeLine(line: string): void {
    this.#reserve(line.length * 3 + 1);
    this.#used += this.#buffer.write(line, this.#used, 'utf8');
    this.#buffer[this.#used++] = NEWLINE;
  }

  /** The lines followed by the commit marker of a batch after which `committedAfter` are in. */
  framed(committedAfter: number): Buffer {
    const body = this.#used;
    this.#reserve(MAX_COMMIT_LINE_BYTES);
    const out = this.#buffer;
    const marker = `${commitLine(committedAfter, body, crc32(out.subarray(0, body), 0))}\n`;
    return out.subarray(0, body + out.write(marker, body, 'latin1'));
  }

  #reserve(bytes: number): void {
    const needed = this.#used + bytes;
    if (needed <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.#buffer.length * 2));
    this.#buffer.copy(grown, 0, 0, this.#used);
    this.#buffer = grown;
  }
}

/** The CRC-32 a commit marker carries for a batch made of these event lines (without `\n`). */
export function batchChecksum(lines: readonly string[]): number {
  let checksum = 0;
  for (const line of lines)
    checksum = crc32(NEWLINE_BYTES, crc32(Buffer.from(line, 'utf8'), checksum));
  return checksum;
}

/** A whole batch as text: the event lines, then their commit marker, each ending with `\n`. */
export function batchText(lines: readonly string[], committedAfter: number): string {
  const body = lines.map((line) => `${line}\n`).join('');
  return `${body}${commitLine(committedAfter, Buffer.byteLength(body), batchChecksum(lines))}\n`;
}

/**
 * The commit marker of a batch after which `committed` events are in the log. `bytes` is the
 * length of the batch's event lines (`\n`s included) and `checksum` their CRC-32: damage anywhere
 * in a batch, also a flipped byte inside a string that still parses, is detected, and a marker
 * found after damage tells where its own batch began.
 */
export function commitLine(committed: number, bytes: number, checksum: number): string {
  return `{"${COMMIT_KEY}":${committed},"bytes":${bytes},"crc32":${checksum}}`;
}

/**
 * The commit marker that seals the header: a batch of no events whose `bytes` and `crc32` cover
 * the header line, written with it by `create`, so a flipped byte in the header (a digit of
 * `createdAt` still parses) is detected like damage in any batch. Logs written before the seal
 * existed have none and load as before.
 */
export function headerSealLine(headerLine: Buffer): string {
  return commitLine(0, headerLine.length + 1, crc32(NEWLINE_BYTES, crc32(headerLine, 0)));
}

/**
 * Reads the line at `offset` (right after the header line) as a header seal: the offset after it
 * when it is one, `undefined` when the line is not a commit marker of 0 events (a log written
 * before seals). A seal that does not match `headerLine` is reported through `mismatch`.
 */
export async function readHeaderSeal(
  handle: FsFileHandle,
  offset: number,
  headerLine: Buffer,
): Promise<{ readonly end: number; readonly matches: boolean } | undefined> {
  const window = Buffer.alloc(MAX_COMMIT_LINE_BYTES);
  const read = await readFully(handle, window, offset);
  const newline = window.subarray(0, read).indexOf(NEWLINE);
  if (newline === -1) return undefined;
  const line = window.subarray(0, newline);
  const marker = parseCommit(line);
  if (marker === undefined || marker.count !== 0) return undefined;
  const matches = headerSealLine(headerLine) === line.toString('latin1');
  return { end: offset + newline + 1, matches };
}

/** The count of a commit marker line, or `undefined` when the line is not one. */
export function commitCount(bytes: Buffer): number | undefined {
  return parseCommit(bytes)?.count;
}

/** Whether a line starts like a commit marker (it may still be malformed). */
export function looksLikeCommit(bytes: Buffer): boolean {
  // Event lines start with `{"seq"`: the third byte tells them apart without a view.
  return (
    bytes.length >= COMMIT_PREFIX.length &&
    bytes[2] === COMMIT_PREFIX[2] &&
    bytes.compare(COMMIT_PREFIX, 0, COMMIT_PREFIX.length, 0, COMMIT_PREFIX.length) === 0
  );
}

/** The count and checksum of a well-formed commit marker line, or `undefined`. */
export function parseCommit(
  bytes: Buffer,
): { count: number; bytes: number; checksum: number } | undefined {
  if (bytes.length > MAX_COMMIT_LINE_BYTES || !looksLikeCommit(bytes)) return undefined;
  const match = COMMIT_LINE.exec(bytes.toString('latin1'));
  if (match === null) return undefined;
  const count = Number(match[1]);
  const length = Number(match[2]);
  const checksum = Number(match[3]);
  return Number.isSafeInteger(count) && Number.isSafeInteger(length) && checksum <= 0xffffffff
    ? { count, bytes: length, checksum }
    : undefined;
}

/**
 * The count of the commit marker the file ends with (the line that ends exactly at `end`), or
 * `undefined` when the bytes before `end` are not a complete commit marker line. Reads at most a
 * few dozen bytes, so a writer can learn the next seq of a huge log without scanning it.
 */
export async function commitBefore(
  handle: FsFileHandle,
  end: number,
  notBefore: number,
): Promise<number | undefined> {
  const start = Math.max(notBefore, end - (MAX_COMMIT_LINE_BYTES + 1));
  if (end - start < 2) return undefined;
  const window = Buffer.alloc(end - start);
  const read = await readFully(handle, window, start);
  if (read !== window.length || window.length < 2 || window[window.length - 1] !== NEWLINE)
    return undefined;
  const previous = window.lastIndexOf(NEWLINE, window.length - 2);
  // The marker must start right after a `\n` inside the window, or exactly at `notBefore`
  // (the end of the header line, which also ends with `\n`).
  if (previous === -1 && start !== notBefore) return undefined;
  return commitCount(window.subarray(previous + 1, window.length - 1));
}
