/**
 * The JSONL log format and its streaming scanner.
 *
 * A log is UTF-8 text with `\n` line ends:
 *
 * ```text
 * {"version":0,"id":"demo","createdAt":1700000000000}      <- header (line 1)
 * {"seq":0,"time":...,"type":"turn/start","data":{...}}     <- batch 1: its events...
 * {"seq":1,...}
 * {"commit":2}                                             <- ...then one commit marker
 * {"seq":2,...}                                             <- batch 2
 * {"commit":3}
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
 * The scanner reads Buffers in chunks, splits them on 0x0A and decodes only complete lines, so
 * no whole-file string is ever built (V8 strings stop at about 512 MiB) and a line over the
 * configured limit is refused before it is decoded or parsed.
 */
import { isUtf8 } from 'node:buffer';
import {
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
  validateHeader,
} from '../../core/index.js';
import type { TornTail } from '../contract.js';
import {
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  LimitExceededError,
} from '../errors.js';
import { crc32 } from './crc32.js';
import type { FsFileHandle } from './fs.js';

/** Default largest line (and so largest serialized event or header), in bytes, without the `\n`. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Bytes read per chunk when scanning a log. */
export const READ_CHUNK_BYTES = 1024 * 1024;
/** Bytes read per chunk when only the header is wanted (`list`). */
export const HEADER_CHUNK_BYTES = 64 * 1024;
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
const NEWLINE_BYTES = Buffer.from('\n');
/** Characters of JSON lines encoded at once by {@link encodeBatch}. */
const ENCODE_PIECE_CHARS = 8 * 1024 * 1024;

/** The header line, `\n` included. */
export function encodeHeaderLine(header: SessionHeader, maxLineBytes: number): Buffer {
  const line = Buffer.from(JSON.stringify(header), 'utf8');
  if (line.length > maxLineBytes) {
    throw new LimitExceededError(
      'maxLineBytes',
      maxLineBytes,
      line.length,
      `header of session '${header.id.slice(0, 80)}'`,
    );
  }
  return Buffer.concat([line, Buffer.from('\n')]);
}

/**
 * One batch as written: each event on its own line, then the commit marker. Every line is
 * checked against the limit before anything is written.
 */
export function encodeBatch(
  id: string,
  events: readonly SessionEvent[],
  committedAfter: number,
  maxLineBytes: number,
): Buffer {
  // The lines are joined into strings of up to ENCODE_PIECE_CHARS and encoded once per piece: a
  // Buffer per line plus a concat cost more than the JSON itself. A line's UTF-8 length is at
  // most 3 bytes per UTF-16 unit, so only lines that could be over the limit are measured.
  const pieces: Buffer[] = [];
  let text = '';
  for (const event of events) {
    let line: string | undefined;
    try {
      line = JSON.stringify(event);
    } catch (error) {
      throw new InvalidStoreError(
        `append to session '${id.slice(0, 80)}': event seq ${event.seq} is not serializable as JSON`,
        {
          cause: error,
        },
      );
    }
    if (typeof line !== 'string' || !line.startsWith('{')) {
      throw new InvalidStoreError(
        `append to session '${id.slice(0, 80)}': event seq ${String(event.seq)} is not a JSON object`,
      );
    }
    if (line.length * 3 > maxLineBytes) {
      const bytes = Buffer.byteLength(line, 'utf8');
      if (bytes > maxLineBytes) {
        throw new LimitExceededError(
          'maxLineBytes',
          maxLineBytes,
          bytes,
          `append to session '${id.slice(0, 80)}', event seq ${event.seq}`,
        );
      }
    }
    if (text.length + line.length > ENCODE_PIECE_CHARS && text !== '') {
      pieces.push(Buffer.from(text, 'utf8'));
      text = '';
    }
    text += `${line}\n`;
  }
  pieces.push(Buffer.from(text, 'utf8'));
  let body = 0;
  let checksum = 0;
  // The CRC of the concatenated lines equals the per-line chained one the scanner computes.
  for (const piece of pieces) {
    body += piece.length;
    checksum = crc32(piece, checksum);
  }
  pieces.push(Buffer.from(`${commitLine(committedAfter, body, checksum)}\n`, 'latin1'));
  return Buffer.concat(pieces, body + (pieces.at(-1)?.length ?? 0));
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

/** One line of a log, as raw bytes. */
export interface RawLine {
  /** 1-based line number. */
  readonly number: number;
  /** Byte offset of the line's first byte. */
  readonly offset: number;
  /**
   * The line without its `\n`. It may be a view into the reader's buffer: valid until the next
   * call to `next()` (copy it to keep it longer).
   */
  readonly bytes: Buffer;
  /** False for a final line with no `\n` (a write that did not complete). */
  readonly terminated: boolean;
  /** The line with its `\n`, when both lie in one chunk (one checksum call instead of two). */
  readonly withNewline?: Buffer;
}

/**
 * Reads a file line by line from `start`, in chunks. A line longer than `maxLineBytes` throws a
 * `LimitExceededError` before it is decoded; its full length is counted (without keeping it) so
 * the error can say how long it is.
 */
export class LineReader {
  private readonly chunk: Buffer;
  /** The filled part of `chunk`. */
  private view: Buffer;
  private chunkLength = 0;
  private chunkPos = 0;
  /** File offset of `chunk[0]`. */
  private chunkOffset: number;
  private eof = false;
  private lineNumber: number;

  constructor(
    private readonly handle: FsFileHandle,
    private readonly file: string,
    private readonly maxLineBytes: number,
    start = 0,
    firstLineNumber = 1,
    chunkBytes = READ_CHUNK_BYTES,
  ) {
    this.chunk = Buffer.allocUnsafe(chunkBytes);
    this.view = this.chunk.subarray(0, 0);
    this.chunkOffset = start;
    this.lineNumber = firstLineNumber;
  }

  /**
   * The next line when it ends inside the chunk already read (no I/O, no promise: most lines of
   * a log), else `undefined`; then {@link LineReader.next} reads on.
   */
  nextBuffered(): RawLine | undefined {
    if (this.chunkPos >= this.chunkLength) return undefined;
    const newline = this.view.indexOf(NEWLINE, this.chunkPos);
    if (newline === -1) return undefined;
    const length = newline - this.chunkPos;
    if (length > this.maxLineBytes) return undefined; // next() reports it
    const offset = this.chunkOffset + this.chunkPos;
    const withNewline = this.view.subarray(this.chunkPos, newline + 1);
    const bytes = withNewline.subarray(0, length);
    this.chunkPos = newline + 1;
    return { number: this.lineNumber++, offset, bytes, terminated: true, withNewline };
  }

  /** The next line, or `undefined` at the end of the file. */
  async next(): Promise<RawLine | undefined> {
    const pieces: Buffer[] = [];
    let length = 0;
    let offset = -1;
    let over = false;
    for (;;) {
      if (this.chunkPos >= this.chunkLength) {
        if (this.eof || !(await this.fill())) {
          if (length === 0 && offset === -1) return undefined;
          if (over) this.throwLimit(offset, length);
          return this.emit(pieces, length, offset, false);
        }
      }
      if (offset === -1) offset = this.chunkOffset + this.chunkPos;
      const newline = this.view.indexOf(NEWLINE, this.chunkPos);
      const end = newline === -1 ? this.chunkLength : newline;
      const piece = end - this.chunkPos;
      length += piece;
      if (length > this.maxLineBytes) {
        over = true;
        pieces.length = 0;
      } else if (piece > 0) {
        const bytes = this.view.subarray(this.chunkPos, end);
        // A line that ends in this chunk is handed out as a view (no copy); the part of a line
        // that continues into the next chunk is copied, because the next read reuses the chunk.
        pieces.push(end < this.chunkLength ? bytes : Buffer.from(bytes));
      }
      this.chunkPos = end;
      if (end < this.chunkLength) {
        this.chunkPos = end + 1;
        if (over) this.throwLimit(offset, length);
        return this.emit(pieces, length, offset, true);
      }
    }
  }

  private emit(pieces: Buffer[], length: number, offset: number, terminated: boolean): RawLine {
    const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, length);
    return { number: this.lineNumber++, offset, bytes, terminated };
  }

  private throwLimit(offset: number, length: number): never {
    throw new LimitExceededError(
      'maxLineBytes',
      this.maxLineBytes,
      length,
      `${this.file} line ${this.lineNumber} (byte ${offset})`,
    );
  }

  private async fill(): Promise<boolean> {
    this.chunkOffset += this.chunkLength;
    this.chunkPos = 0;
    this.chunkLength = 0;
    const read = await this.handle.read(this.chunk, 0, this.chunk.length, this.chunkOffset);
    if (read === 0) {
      this.eof = true;
      return false;
    }
    this.chunkLength = read;
    this.view = this.chunk.subarray(0, read);
    return true;
  }
}

/** A line's JSON value, or why it has none. Never returns a partial value. */
export function decodeJson(bytes: Buffer): { value: unknown } | { problem: string } {
  if (bytes.length === 0) return { problem: 'empty line' };
  // Validate first, then decode with the fast built-in: `toString` alone would replace bad
  // sequences with U+FFFD and so accept a damaged line. A BOM is kept, and JSON.parse refuses it.
  if (!isUtf8(bytes)) return { problem: 'invalid UTF-8' };
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch {
    // A raw NUL is valid UTF-8 but never valid JSON; name it, as NUL runs are what an
    // unfinished write leaves behind on some file systems.
    return { problem: bytes.includes(0) ? 'NUL bytes (an unfinished write)' : 'not valid JSON' };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses and checks a header line. A numeric `version` other than {@link SESSION_FORMAT_VERSION}
 * is a `FormatVersionError`, checked before anything else about the header; any other problem
 * (including a header naming a different session) is a `CorruptLogError` at line 1.
 */
export function parseHeaderLine(
  bytes: Buffer,
  file: string,
  expectedId: string | undefined,
): SessionHeader {
  const decoded = decodeJson(bytes);
  if ('problem' in decoded) throw headerCorrupt(file, `header is ${decoded.problem}`);
  const value = decoded.value;
  if (
    isRecord(value) &&
    typeof value.version === 'number' &&
    value.version !== SESSION_FORMAT_VERSION
  ) {
    throw new FormatVersionError(file, value.version, SESSION_FORMAT_VERSION);
  }
  let header: SessionHeader;
  try {
    header = validateHeader(value);
  } catch (error) {
    throw headerCorrupt(file, error instanceof Error ? error.message : 'invalid header', error);
  }
  if (expectedId !== undefined && header.id !== expectedId) {
    throw headerCorrupt(
      file,
      `header names session '${header.id.slice(0, 80)}', not '${expectedId.slice(0, 80)}'`,
    );
  }
  return header;
}

export function headerCorrupt(file: string, reason: string, cause?: unknown): CorruptLogError {
  return new CorruptLogError(
    { file, line: 1, offset: 0, reason },
    cause === undefined ? undefined : { cause },
  );
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

/** Where {@link scanLines} starts: at a batch boundary, with the log committed so far. */
export interface LineScanStart {
  /** The log's path, for error messages. */
  readonly file: string;
  readonly maxLineBytes: number;
  /** Byte offset of the first line to read (a batch's first line, or the end of the file). */
  readonly offset: number;
  /** Its 1-based line number. */
  readonly lineNumber: number;
  /** Where the committed log ends (after the last commit marker, or the header). */
  readonly committedEnd: number;
  /** Bytes per read (defaults to {@link READ_CHUNK_BYTES}). */
  readonly chunkBytes?: number;
}

/** How a log ends, as {@link scanLines} found it. */
export interface LineScanEnd {
  /** Byte offset where the committed log ends. */
  readonly committedEnd: number;
  /** Bytes scanned (the file size as read). */
  readonly size: number;
  readonly tornTail?: TornTail;
}

/**
 * Reads a log line by line from a batch boundary to its end, adding each committed batch's
 * events to `events` (which holds the events committed before `start`), and classifies the end.
 * The reference reader: it decides every line on its own, so it names the first damaged line
 * exactly. The batch scanner (`scan.ts`) hands over to it at the first batch it doubts.
 *
 * @throws CorruptLogError for damage before the last commit marker; LimitExceededError for an
 *   over-long line.
 */
export async function scanLines(
  handle: FsFileHandle,
  start: LineScanStart,
  events: SessionEvent[],
): Promise<LineScanEnd> {
  const { file, maxLineBytes } = start;
  const reader = new LineReader(
    handle,
    file,
    maxLineBytes,
    start.offset,
    start.lineNumber,
    start.chunkBytes ?? READ_CHUNK_BYTES,
  );
  const batch: BatchState = { events: [], checksum: 0, bytes: 0 };
  let committedEnd = start.committedEnd;
  let end = start.offset;
  let damage: { line: RawLine; problem: string } | undefined;
  const acknowledged = (problem: string, reason: string): CorruptLogError =>
    new CorruptLogError({
      file,
      line: damage?.line.number,
      offset: damage?.line.offset,
      reason: `${problem}; ${reason}, so the damage is in acknowledged data`,
    });
  // The marker that closes the damaged batch, once found.
  let closing: RawLine | undefined;
  for (;;) {
    const line = reader.nextBuffered() ?? (await reader.next());
    if (line === undefined) break;
    end = line.offset + line.bytes.length + (line.terminated ? 1 : 0);
    if (damage !== undefined) {
      // Damage is tolerated only in the last batch written: batches are written one at a time,
      // each after the previous one's fsync, so a crash can damage the final batch alone (even
      // with its commit marker intact, when pages reach the disk out of order).
      if (closing !== undefined) {
        throw acknowledged(
          damage.problem,
          `the batch was committed at line ${closing.number} and more was written after it`,
        );
      }
      const commit = line.terminated ? parseCommit(line.bytes) : undefined;
      if (commit !== undefined) {
        // The marker says where its batch began: later than the last good marker means an
        // earlier, acknowledged batch lies in between, damaged.
        if (line.offset - commit.bytes !== committedEnd) {
          throw acknowledged(
            damage.problem,
            `the marker at line ${line.number} closes a later batch`,
          );
        }
        closing = line;
      }
      continue;
    }
    if (!line.terminated) {
      damage = { line, problem: 'incomplete final line' };
      continue;
    }
    const verdict = acceptLine(line.bytes, line.withNewline, events.length, batch);
    if (verdict.kind === 'commit') {
      for (const event of batch.events) events.push(event);
      batch.events = [];
      batch.checksum = 0;
      batch.bytes = 0;
      committedEnd = end;
    } else if (verdict.kind === 'damage') {
      damage = { line, problem: verdict.problem };
      // A well-formed marker that does not match its batch still closes that batch.
      const commit = parseCommit(line.bytes);
      if (commit !== undefined) {
        if (line.offset - commit.bytes !== committedEnd) {
          throw acknowledged(
            verdict.problem,
            `the marker at line ${line.number} closes a later batch`,
          );
        }
        closing = line;
      }
    }
  }
  const pending = batch.events;
  const size = end;
  if (damage === undefined && pending.length === 0) return { committedEnd, size };
  const reason =
    damage === undefined
      ? `${pending.length} event line(s) after the last commit marker (a batch that never completed)`
      : `${damage.problem} at line ${damage.line.number} (byte ${damage.line.offset}), after the last commit marker`;
  return {
    committedEnd,
    size,
    tornTail: { offset: committedEnd, size: size - committedEnd, reason },
  };
}

type LineVerdict =
  | { readonly kind: 'event' | 'commit' }
  | { readonly kind: 'damage'; readonly problem: string };

/** The events of the batch being read, the running checksum and length of their lines. */
interface BatchState {
  events: SessionEvent[];
  checksum: number;
  bytes: number;
}

/**
 * Takes one complete body line: an event (added to the batch) or the commit marker closing the
 * batch (its count and checksum must match); anything else is damage, with the reason.
 */
function acceptLine(
  bytes: Buffer,
  withNewline: Buffer | undefined,
  committed: number,
  batch: BatchState,
): LineVerdict {
  const next = committed + batch.events.length;
  if (looksLikeCommit(bytes)) {
    const commit = parseCommit(bytes);
    if (commit === undefined) return { kind: 'damage', problem: 'a malformed commit marker' };
    if (batch.events.length === 0) {
      return { kind: 'damage', problem: 'a commit marker with no events before it' };
    }
    if (commit.count !== next) {
      return {
        kind: 'damage',
        problem: `commit marker ${commit.count} where ${next} was expected`,
      };
    }
    if (commit.bytes !== batch.bytes || commit.checksum !== batch.checksum) {
      return {
        kind: 'damage',
        problem: 'the batch does not match the length and checksum of its commit marker',
      };
    }
    return { kind: 'commit' };
  }
  const decoded = decodeJson(bytes);
  if ('problem' in decoded) return { kind: 'damage', problem: decoded.problem };
  const value = decoded.value;
  if (!isRecord(value)) return { kind: 'damage', problem: 'not a JSON object' };
  if (value.seq !== next) {
    return {
      kind: 'damage',
      problem: `event seq ${describe(value.seq)} where seq ${next} was expected`,
    };
  }
  batch.checksum =
    withNewline === undefined
      ? crc32(NEWLINE_BYTES, crc32(bytes, batch.checksum))
      : crc32(withNewline, batch.checksum);
  batch.bytes += bytes.length + 1;
  batch.events.push(value as unknown as SessionEvent);
  return { kind: 'event' };
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === undefined) return 'missing';
  return value === null ? 'null' : typeof value;
}

/** The first line of a file and where the next begins, or `undefined` if it has no `\n`. */
export async function readFirstLine(
  handle: FsFileHandle,
  file: string,
  maxLineBytes: number,
  chunkBytes = HEADER_CHUNK_BYTES,
): Promise<{ bytes: Buffer; end: number } | undefined> {
  const reader = new LineReader(handle, file, maxLineBytes, 0, 1, chunkBytes);
  const line = await reader.next();
  if (line === undefined || !line.terminated) return undefined;
  return { bytes: line.bytes, end: line.bytes.length + 1 };
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

/** Reads until `buffer` is full or the file ends; resolves to the bytes read. */
export async function readFully(
  handle: FsFileHandle,
  buffer: Uint8Array,
  position: number,
): Promise<number> {
  let total = 0;
  while (total < buffer.length) {
    const read = await handle.read(buffer, total, buffer.length - total, position + total);
    if (read === 0) break;
    total += read;
  }
  return total;
}
