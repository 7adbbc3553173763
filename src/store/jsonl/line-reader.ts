/**
 * Reading a JSONL log as raw lines: a chunked reader that splits Buffers on 0x0A and hands out
 * views, never a whole-file string (V8 strings stop at about 512 MiB), refusing a line over the
 * configured limit before it is decoded; and the checked decoding of one line's JSON.
 */
import { isUtf8 } from 'node:buffer';
import { LimitExceededError } from '../contract/errors.js';
import type { FsFileHandle } from './fs.js';

/** Bytes read per chunk when scanning a log. */
export const READ_CHUNK_BYTES = 1024 * 1024;
/** Bytes read per chunk when only the header is wanted (`list`). */
export const HEADER_CHUNK_BYTES = 64 * 1024;

const NEWLINE = 0x0a;

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
  readonly #chunk: Buffer;
  /** The filled part of `chunk`. */
  #view: Buffer;
  #chunkLength = 0;
  #chunkPos = 0;
  /** File offset of `chunk[0]`. */
  #chunkOffset: number;
  #eof = false;
  #lineNumber: number;

  readonly #handle: FsFileHandle;
  readonly #file: string;
  readonly #maxLineBytes: number;

  constructor(
    handle: FsFileHandle,
    file: string,
    maxLineBytes: number,
    start = 0,
    firstLineNumber = 1,
    chunkBytes = READ_CHUNK_BYTES,
  ) {
    this.#handle = handle;
    this.#file = file;
    this.#maxLineBytes = maxLineBytes;
    this.#chunk = Buffer.allocUnsafe(chunkBytes);
    this.#view = this.#chunk.subarray(0, 0);
    this.#chunkOffset = start;
    this.#lineNumber = firstLineNumber;
  }

  /**
   * The next line when it ends inside the chunk already read (no I/O, no promise: most lines of
   * a log), else `undefined`; then {@link LineReader.next} reads on.
   */
  nextBuffered(): RawLine | undefined {
    if (this.#chunkPos >= this.#chunkLength) return undefined;
    const newline = this.#view.indexOf(NEWLINE, this.#chunkPos);
    if (newline === -1) return undefined;
    const length = newline - this.#chunkPos;
    if (length > this.#maxLineBytes) return undefined; // next() reports it
    const offset = this.#chunkOffset + this.#chunkPos;
    const withNewline = this.#view.subarray(this.#chunkPos, newline + 1);
    const bytes = withNewline.subarray(0, length);
    this.#chunkPos = newline + 1;
    return { number: this.#lineNumber++, offset, bytes, terminated: true, withNewline };
  }

  /** The next line, or `undefined` at the end of the file. */
  async next(): Promise<RawLine | undefined> {
    const pieces: Buffer[] = [];
    let length = 0;
    let offset = -1;
    let over = false;
    for (;;) {
      if (this.#chunkPos >= this.#chunkLength) {
        if (this.#eof || !(await this.#fill())) {
          if (length === 0 && offset === -1) return undefined;
          if (over) this.#throwLimit(offset, length);
          return this.#emit(pieces, length, offset, false);
        }
      }
      if (offset === -1) offset = this.#chunkOffset + this.#chunkPos;
      const newline = this.#view.indexOf(NEWLINE, this.#chunkPos);
      const end = newline === -1 ? this.#chunkLength : newline;
      const piece = end - this.#chunkPos;
      length += piece;
      if (length > this.#maxLineBytes) {
        over = true;
        pieces.length = 0;
      } else if (piece > 0) {
        const bytes = this.#view.subarray(this.#chunkPos, end);
        // A line that ends in this chunk is handed out as a view (no copy); the part of a line
        // that continues into the next chunk is copied, because the next read reuses the chunk.
        pieces.push(end < this.#chunkLength ? bytes : Buffer.from(bytes));
      }
      this.#chunkPos = end;
      if (end < this.#chunkLength) {
        this.#chunkPos = end + 1;
        if (over) this.#throwLimit(offset, length);
        return this.#emit(pieces, length, offset, true);
      }
    }
  }

  #emit(pieces: Buffer[], length: number, offset: number, terminated: boolean): RawLine {
    const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, length);
    return { number: this.#lineNumber++, offset, bytes, terminated };
  }

  #throwLimit(offset: number, length: number): never {
    throw new LimitExceededError(
      'maxLineBytes',
      this.#maxLineBytes,
      length,
      `${this.#file} line ${this.#lineNumber} (byte ${offset})`,
    );
  }

  async #fill(): Promise<boolean> {
    this.#chunkOffset += this.#chunkLength;
    this.#chunkPos = 0;
    this.#chunkLength = 0;
    const read = await this.#handle.read(this.#chunk, 0, this.#chunk.length, this.#chunkOffset);
    if (read === 0) {
      this.#eof = true;
      return false;
    }
    this.#chunkLength = read;
    this.#view = this.#chunk.subarray(0, read);
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
