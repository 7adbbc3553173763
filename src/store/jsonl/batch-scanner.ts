/**
 * The batch scanner of a JSONL load (see `scan.ts`): it frames the lines of a log chunk by chunk,
 * checks and parses them a run of lines at a time, commits each batch whose marker matches, and
 * makes stubs of finished chunks when asked. At the first batch it doubts it stops and says
 * where, for the line-by-line reader of `line-scan.ts` to take over.
 */
import { isUtf8 } from 'node:buffer';
import type { ElidedLog } from '../../core/elided-log.js';
import { crc32 } from '../contract/crc32.js';
import { forEachChunkSize, pushRunChunks, runOf } from './chunk-run-line.js';
import { RunStubs } from './chunk-run-stubs.js';
import { parseCommit } from './format.js';
import type { FsFileHandle } from './fs.js';
import {
  CLOSE_BRACE,
  integerEnd,
  NEWLINE,
  OPEN_BRACE,
  parsed,
  signedIntegerEnd,
  startsWith,
} from './line-bytes.js';
import type { LineScanEnd } from './line-scan.js';
import { ReadAhead } from './read-ahead.js';
import { CHUNK_TYPE, isEventRecord, StubLedger } from './stub-ledger.js';

const COMMIT_PREFIX = Buffer.from('{"commit":');
const SEQ_PREFIX = Buffer.from('{"seq":');
const TIME_PREFIX = Buffer.from(',"time":');
const CHUNK_DATA_PREFIX = Buffer.from(`,"type":"${CHUNK_TYPE}","data":`);

/** Where the batch scanner stopped: the end of the log, or a batch for the line reader. */
export interface ScanStop extends LineScanEnd {
  /** The first line of the batch it doubts, when it did not reach the end. */
  readonly doubt?: { readonly offset: number; readonly lineNumber: number };
}

export interface ScannerOptions {
  readonly maxLineBytes: number;
  readonly chunkBytes: number;
  /** Byte offset of the first line after the header. */
  readonly start: number;
  readonly lineNumber: number;
  /** Receives the events of each committed batch. */
  readonly events: ElidedLog;
  readonly elide: boolean;
}

/**
 * Frames lines in a buffer refilled chunk by chunk, checks and parses them a run at a time (the
 * complete lines of the open batch that the buffer holds), and commits a batch when its marker
 * matches. Events are added to `events` as they are parsed and dropped again if their batch
 * does not commit.
 */
export class BatchScanner {
  readonly stubs = new StubLedger();
  readonly #runStubs = new RunStubs();
  #buffer: Buffer;
  #view: Buffer;
  /** File offset of `buffer[0]`. */
  #base: number;
  #filled = 0;
  #pos = 0;
  #eof = false;
  #lineNumber: number;
  #committedEnd: number;
  #committedEvents = 0;
  #committedStubs = 0;
  // The open batch.
  #batchOffset = 0;
  #batchLine = 0;
  #batchLines = 0;
  #batchBytes = 0;
  #checksum = 0;
  // The current run: the ends of its lines in the buffer.
  #ends = new Int32Array(4096);
  #runLines = 0;

  readonly #reads: ReadAhead;
  readonly #options: ScannerOptions;

  constructor(handle: FsFileHandle, options: ScannerOptions) {
    this.#reads = new ReadAhead(handle, options.chunkBytes);
    this.#options = options;
    this.#buffer = Buffer.allocUnsafe(options.chunkBytes);
    this.#view = this.#buffer.subarray(0, 0);
    this.#base = options.start;
    this.#lineNumber = options.lineNumber;
    this.#committedEnd = options.start;
  }

  async run(): Promise<ScanStop> {
    try {
      return await this.#scan();
    } finally {
      // The line reader may take over the handle next: no read of ours may still be running.
      await this.#reads.settle();
    }
  }

  async #scan(): Promise<ScanStop> {
    for (;;) {
      const doubt = this.#frame();
      if (doubt !== undefined) return doubt;
      if (!(await this.#refill())) {
        if (this.#pos < this.#filled || this.#batchLines > 0) return this.#doubt(this.#pos);
        return { committedEnd: this.#committedEnd, size: this.#base + this.#filled };
      }
    }
  }

  /** Handles every complete line in the buffer; a stop when a batch is in doubt. */
  #frame(): ScanStop | undefined {
    const view = this.#view;
    const maxLineBytes = this.#options.maxLineBytes;
    let pos = this.#pos;
    let runStart = pos;
    for (;;) {
      const newline = view.indexOf(NEWLINE, pos);
      if (newline === -1) break;
      if (newline - pos > maxLineBytes) return this.#doubt(pos);
      if (startsWith(view, pos, newline, COMMIT_PREFIX)) {
        if (!this.#processRun(runStart, pos) || !this.#commit(pos, newline))
          return this.#doubt(pos);
        pos = newline + 1;
        runStart = pos;
        this.#lineNumber++;
        continue;
      }
      if (this.#batchLines === 0 && this.#runLines === 0) {
        this.#batchOffset = this.#base + pos;
        this.#batchLine = this.#lineNumber;
      }
      if (this.#runLines === this.#ends.length) {
        const grown = new Int32Array(this.#ends.length * 2);
        grown.set(this.#ends);
        this.#ends = grown;
      }
      this.#ends[this.#runLines++] = newline;
      pos = newline + 1;
      this.#lineNumber++;
    }
    if (!this.#processRun(runStart, pos)) return this.#doubt(pos);
    this.#pos = pos;
    return undefined;
  }

  /**
   * Checks and parses the run of event lines `[start, end)`: one checksum update and one UTF-8
   * validation for all of them, then each line parsed (or made a stub).
   */
  #processRun(start: number, end: number): boolean {
    const lines = this.#runLines;
    if (lines === 0) return true;
    this.#runLines = 0;
    this.#batchLines += lines;
    this.#batchBytes += end - start;
    const bytes = this.#view.subarray(start, end);
    this.#checksum = crc32(bytes, this.#checksum);
    // Decoding alone would turn a bad sequence into U+FFFD and so accept a damaged line.
    if (!isUtf8(bytes)) return false;
    return this.#options.elide ? this.#parseEliding(start, lines) : this.#parse(start, end, lines);
  }

  /** Parses every line of the run from one decoded string. */
  #parse(start: number, end: number, lines: number): boolean {
    const events = this.#options.events;
    const text = this.#view.toString('utf8', start, end);
    let seq = events.length;
    let from = 0;
    try {
      for (let i = 0; i < lines; i++) {
        const newline = text.indexOf('\n', from);
        const value: unknown = JSON.parse(text.slice(from, newline));
        from = newline + 1;
        if (isEventRecord(value, seq)) {
          events.push(value);
          seq++;
          continue;
        }
        const run = runOf(value, seq);
        if (run === undefined || typeof run === 'string') return false;
        if (pushRunChunks(run, events) !== undefined) return false;
        seq += run.chunks.length;
      }
    } catch {
      return false;
    }
    return true;
  }

  /** Makes stubs of the chunk and run lines in palimpsest's form and parses the other lines. */
  #parseEliding(start: number, lines: number): boolean {
    const events = this.#options.events;
    const view = this.#view;
    const ends = this.#ends;
    const runs = this.#runStubs;
    let seq = events.length;
    let from = start;
    for (let i = 0; i < lines; i++) {
      const end = ends[i] as number;
      const bytes = chunkDataBytes(view, from, end, seq);
      if (bytes !== -1) {
        events.pushElided(parsedTime, bytes);
        this.stubs.add(seq, 1, this.#base + from, end - from);
        seq++;
        from = end + 1;
        continue;
      }
      const count = runs.read(view, from, end, seq);
      if (count !== -1) {
        events.pushElidedRun(runs.times.subarray(0, count), runs.sizes.subarray(0, count));
        this.stubs.add(seq, count, this.#base + from, end - from);
        seq += count;
        from = end + 1;
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(view.toString('utf8', from, end));
      } catch {
        return false;
      }
      if (isEventRecord(value, seq)) {
        events.push(value);
        if (value.type === 'assistant/message') this.stubs.noteMessage(value);
        seq++;
      } else {
        // A run the bytes did not settle (a foreign writer's form, or damage): parsed and sized.
        const run = runOf(value, seq);
        if (run === undefined || typeof run === 'string') return false;
        const problem = forEachChunkSize(run, (_seq, time, size) => events.pushElided(time, size));
        if (problem !== undefined) return false;
        this.stubs.add(seq, run.chunks.length, this.#base + from, end - from);
        seq += run.chunks.length;
      }
      from = end + 1;
    }
    return true;
  }

  /** Commits the open batch if the marker on `[start, end)` matches it. */
  #commit(start: number, end: number): boolean {
    const commit = parseCommit(this.#view.subarray(start, end));
    const events = this.#options.events;
    if (
      commit === undefined ||
      this.#batchLines === 0 ||
      commit.count !== events.length ||
      commit.bytes !== this.#batchBytes ||
      commit.checksum !== this.#checksum
    ) {
      return false;
    }
    this.#committedEvents = events.length;
    this.stubs.commit();
    this.#committedStubs = this.stubs.length;
    this.#committedEnd = this.#base + end + 1;
    this.#batchLines = 0;
    this.#batchBytes = 0;
    this.#checksum = 0;
    return true;
  }

  /** Drops the open batch and says where the line reader should take over. */
  #doubt(at: number): ScanStop {
    this.#options.events.truncate(this.#committedEvents);
    this.stubs.drop(this.#committedStubs);
    const open = this.#batchLines > 0 || this.#runLines > 0;
    return {
      committedEnd: this.#committedEnd,
      size: this.#base + this.#filled,
      doubt: open
        ? { offset: this.#batchOffset, lineNumber: this.#batchLine }
        : { offset: this.#base + at, lineNumber: this.#lineNumber },
    };
  }

  /**
   * Moves the unfinished line to the front of the buffer (growing it for a line longer than the
   * buffer, up to `maxLineBytes`) and reads on. `false` at the end of the file, or when a line
   * is over the limit (the line reader then reports it).
   */
  async #refill(): Promise<boolean> {
    if (this.#eof) return false;
    const rest = this.#filled - this.#pos;
    if (this.#pos > 0) {
      this.#buffer.copyWithin(0, this.#pos, this.#filled);
      this.#base += this.#pos;
      this.#pos = 0;
      this.#filled = rest;
    } else if (this.#filled === this.#buffer.length) {
      if (this.#buffer.length > this.#options.maxLineBytes) return false;
      const grown = Buffer.allocUnsafe(
        Math.min(this.#buffer.length * 2, this.#options.maxLineBytes + 1),
      );
      this.#buffer.copy(grown, 0, 0, this.#filled);
      this.#buffer = grown;
    }
    const length = Math.min(this.#options.chunkBytes, this.#buffer.length - this.#filled);
    const read = await this.#reads.read(
      this.#buffer,
      this.#filled,
      length,
      this.#base + this.#filled,
    );
    this.#view = this.#buffer.subarray(0, this.#filled + read);
    if (read === 0) {
      this.#eof = true;
      return false;
    }
    this.#filled += read;
    this.#reads.prefetch(this.#base + this.#filled);
    return true;
  }
}

/**
 * The data length of the chunk line `[start, end)` when it is exactly in the form palimpsest
 * writes, `{"seq":<seq>,"time":<integer>,"type":"assistant/chunk","data":{...}}` with the
 * expected seq (its time left in {@link parsedTime}); else -1 and the line is parsed like any
 * other (a chunk with `sourceEventSeqs`, other key orders, a foreign writer's spacing...). Only
 * the prefix and the final `}}` are read.
 */
function chunkDataBytes(view: Buffer, start: number, end: number, seq: number): number {
  if (view[end - 1] !== CLOSE_BRACE || view[end - 2] !== CLOSE_BRACE) return -1;
  if (!startsWith(view, start, end, SEQ_PREFIX)) return -1;
  let at = integerEnd(view, start + SEQ_PREFIX.length, end);
  if (at === -1 || parsed.integer !== seq || !startsWith(view, at, end, TIME_PREFIX)) return -1;
  // `-0` is left to the parser (and refused by the session, as a time must not be -0).
  at = signedIntegerEnd(view, at + TIME_PREFIX.length, end);
  if (at === -1) return -1;
  parsedTime = parsed.integer;
  if (!startsWith(view, at, end, CHUNK_DATA_PREFIX)) return -1;
  at += CHUNK_DATA_PREFIX.length;
  if (view[at] !== OPEN_BRACE) return -1;
  // The data is everything between `"data":` and the envelope's closing brace.
  return end - 1 - at;
}

/** The time of the last chunk line {@link chunkDataBytes} accepted. */
let parsedTime = 0;
