/**
 * Loading a JSONL log: the batch scanner, and the elision of finished chunks.
 *
 * The log is read in chunks and handled batch by batch rather than line by line: the native
 * calls (CRC-32, UTF-8 validation, UTF-8 decoding) run once per run of lines, and the lines of
 * a run are parsed from one decoded string, instead of a Buffer view, a checksum call, a
 * validation call and a decode per line. A batch's events count only once its commit marker
 * matches (count, length and checksum), exactly as in the line-by-line reader of `line-scan.ts`.
 * At the first batch this scanner doubts (anything but a well-formed committed batch: a torn
 * tail, damage, an over-long line), it hands over to that reader at the batch's first line; the
 * reader then decides every line on its own and names the damage exactly as it always has.
 *
 * With `elideFinishedChunks`, an `assistant/chunk` line in the form palimpsest writes,
 * `{"seq":N,"time":T,"type":"assistant/chunk","data":{...}}`, is not decoded or parsed: its
 * seq, time and data length are read from the bytes and it becomes a stub (see
 * `core/elided.ts`), once the batch's checksum has covered its bytes like any other line's; a
 * run line's chunks become stubs the same way, their times and sizes read from its bytes
 * (`run-stubs.ts`). A stub stands for a *finished* chunk, one a later `assistant/message` of
 * the log cites, so the scanner finally reads back (with a few large reads) and parses the
 * chunks no message cites: the stream of a turn a crash left open, or chunks a writer never
 * cited.
 */
import { isUtf8 } from 'node:buffer';
import { CitedSeqs } from '../../core/elided.js';
import type { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';

import { crc32 } from '../contract/crc32.js';
import { CorruptLogError } from '../contract/errors.js';
import { logSizedFor } from '../contract/loaded-session.js';
import type { TornTail } from '../contract/session-store.js';
import { coalesce } from '../contract/store-rules.js';
import { forEachChunkSize, pushRunChunks, runEvents, runOf } from './chunk-run-line.js';
import { RunStubs } from './chunk-run-stubs.js';
import { commitBefore, parseCommit } from './format.js';
import type { FsFileHandle } from './fs.js';
import { headerCorrupt, parseHeaderLine } from './header.js';
import {
  CLOSE_BRACE,
  integerEnd,
  NEWLINE,
  OPEN_BRACE,
  parsed,
  signedIntegerEnd,
  startsWith,
} from './line-bytes.js';
import { LineReader, READ_CHUNK_BYTES, readFully } from './line-reader.js';
import { type LineScanEnd, scanLines } from './line-scan.js';
import { ReadAhead } from './read-ahead.js';

/** A scanned log. */
export interface ScanResult {
  readonly header: SessionHeader;
  /** The committed events, freshly parsed (and, when asked, finished chunks elided). */
  readonly log: ElidedLog;
  /** Byte offset where the committed log ends (after the last commit marker, or the header). */
  readonly committedEnd: number;
  /** Bytes scanned (the file size as read). */
  readonly size: number;
  readonly tornTail?: TornTail;
  /** With `salvage`: the damage that ended `events` (see `LoadOptions.salvage`). */
  readonly damage?: CorruptLogError;
}

/** Options of {@link scanLog}. */
export interface ScanOptions {
  /** The log's path, for error messages. */
  readonly file: string;
  /** The id the header must carry. */
  readonly expectedId: string;
  readonly maxLineBytes: number;
  /** Bytes per read (defaults to {@link READ_CHUNK_BYTES}). */
  readonly chunkBytes?: number;
  /** Return finished `assistant/chunk` events as stubs, without parsing their bodies. */
  readonly elideFinishedChunks?: boolean;
  /** Stop at damage after the header and return the committed events before it. */
  readonly salvage?: boolean;
}

/**
 * Reads a whole log, streaming, and classifies its end. Never writes.
 *
 * @throws FormatVersionError for a header of another format version; CorruptLogError for a bad
 *   header or damage before the last commit marker; LimitExceededError for an over-long line.
 */
export async function scanLog(handle: FsFileHandle, options: ScanOptions): Promise<ScanResult> {
  const { file, maxLineBytes } = options;
  const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
  const reader = new LineReader(handle, file, maxLineBytes, 0, 1, chunkBytes);
  const first = await reader.next();
  if (first === undefined) throw headerCorrupt(file, 'empty file (no header line)');
  if (!first.terminated) throw headerCorrupt(file, 'the header line is incomplete');
  const header = parseHeaderLine(first.bytes, file, options.expectedId);
  const headerEnd = first.offset + first.bytes.length + 1;

  // The last commit marker says how many events the log holds (a few dozen bytes read at its
  // end): room for them up front. A file ending otherwise (a torn tail) grows as it is read.
  const { size } = await handle.stat();
  const events = logSizedFor(
    size > headerEnd ? await commitBefore(handle, size, headerEnd) : undefined,
  );
  const salvage = options.salvage === true;
  const scanner = new BatchScanner(handle, {
    maxLineBytes,
    chunkBytes,
    start: headerEnd,
    lineNumber: 2,
    events,
    // A salvaged prefix comes back whole: stubs would need the rest of the log to be restored.
    elide: options.elideFinishedChunks === true && !salvage,
  });
  const stop = await scanner.run();
  let end: LineScanEnd = stop;
  const checkedFrom = events.length;
  if (stop.doubt !== undefined) {
    const start = {
      file,
      maxLineBytes,
      offset: stop.doubt.offset,
      lineNumber: stop.doubt.lineNumber,
      committedEnd: stop.committedEnd,
      chunkBytes,
    };
    try {
      end = await scanLines(handle, start, events);
    } catch (error) {
      // The line reader adds a batch's events only once its marker matched, so what `events`
      // holds when it gives up is exactly the acknowledged prefix before the damaged batch.
      if (!salvage || !CorruptLogError.isInstance(error)) throw error;
      return {
        header,
        log: events,
        committedEnd: start.committedEnd,
        size: end.size,
        damage: error,
      };
    }
  }
  if (scanner.stubs.length > 0) {
    // Messages the line reader accepted may cite stubs too.
    for (let seq = checkedFrom; seq < events.length; seq++) {
      const event = events.peek(seq);
      if (event?.type === 'assistant/message') scanner.stubs.cite(event);
    }
    await restoreUnfinished(handle, file, events, scanner.stubs);
  }
  return end.tornTail === undefined
    ? { header, log: events, committedEnd: end.committedEnd, size: end.size }
    : {
        header,
        log: events,
        committedEnd: end.committedEnd,
        size: end.size,
        tornTail: end.tornTail,
      };
}

const COMMIT_PREFIX = Buffer.from('{"commit":');
const SEQ_PREFIX = Buffer.from('{"seq":');
const TIME_PREFIX = Buffer.from(',"time":');
const CHUNK_TYPE = 'assistant/chunk';
const CHUNK_DATA_PREFIX = Buffer.from(`,"type":"${CHUNK_TYPE}","data":`);

/** Where the batch scanner stopped: the end of the log, or a batch for the line reader. */
interface ScanStop extends LineScanEnd {
  /** The first line of the batch it doubts, when it did not reach the end. */
  readonly doubt?: { readonly offset: number; readonly lineNumber: number };
}

/**
 * The stubs that no committed message has cited yet, with where their lines are, so that the
 * ones no message ever cites can be read back. An entry is a line's stubs: `counts[i]` chunks
 * from `seqs[i]` on (one for a chunk line, a run's length for a run line). Citations are taken
 * at each commit, and entries whose stubs are all cited dropped then, so the ledger holds little
 * more than the open stream's lines.
 */
class StubLedger {
  seqs: number[] = [];
  counts: number[] = [];
  offsets: number[] = [];
  lengths: number[] = [];
  /** What the committed messages cite. */
  readonly #cited = new CitedSeqs();
  /** The messages of the open batch, cited from once it commits. */
  #pendingMessages: SessionEvent[] = [];
  /** Ledger length after the last compaction (compactions are amortized O(1) per entry). */
  #compacted = 0;

  /** How many entries (lines) the ledger holds. */
  get length(): number {
    return this.seqs.length;
  }

  add(seq: number, count: number, offset: number, length: number): void {
    this.seqs.push(seq);
    this.counts.push(count);
    this.offsets.push(offset);
    this.lengths.push(length);
  }

  /** An assistant/message of the open batch. */
  noteMessage(message: SessionEvent): void {
    this.#pendingMessages.push(message);
  }

  /** The open batch committed: its messages' citations count. */
  commit(): void {
    for (const message of this.#pendingMessages) this.cite(message);
    this.#pendingMessages.length = 0;
    if (this.seqs.length >= 2 * this.#compacted + 1024) this.#compact();
  }

  /** The open batch did not commit: forgets its entries and messages. */
  drop(entries: number): void {
    this.seqs.length = entries;
    this.counts.length = entries;
    this.offsets.length = entries;
    this.lengths.length = entries;
    this.#pendingMessages.length = 0;
  }

  /** Counts the citations of a committed assistant/message. */
  cite(message: SessionEvent): void {
    this.#cited.cite(message);
  }

  isCited(seq: number): boolean {
    return this.#cited.has(seq);
  }

  /** Drops the entries whose stubs a committed message has all cited: they stay stubs for good. */
  #compact(): void {
    let kept = 0;
    for (let i = 0; i < this.seqs.length; i++) {
      const seq = this.seqs[i] as number;
      const count = this.counts[i] as number;
      let cited = 0;
      while (cited < count && this.isCited(seq + cited)) cited++;
      if (cited === count) continue;
      this.seqs[kept] = seq;
      this.counts[kept] = count;
      this.offsets[kept] = this.offsets[i] as number;
      this.lengths[kept] = this.lengths[i] as number;
      kept++;
    }
    this.drop(kept);
    this.#compacted = kept;
  }
}

interface ScannerOptions {
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
class BatchScanner {
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

function isEventRecord(value: unknown, seq: number): value is SessionEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { seq?: unknown }).seq === seq
  );
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

/** Gaps up to this many bytes between unfinished chunks are read rather than skipped. */
const RESTORE_GAP_BYTES = 64 * 1024;
/** The most bytes one read-back covers (a single longer line is read on its own). */
const RESTORE_SPAN_BYTES = 4 * 1024 * 1024;

/**
 * Replaces the stubs that no `assistant/message` of the log cites by their chunks, read back
 * from the file (the committed part of a log never changes) in a few large reads.
 */
async function restoreUnfinished(
  handle: FsFileHandle,
  file: string,
  events: ElidedLog,
  stubs: StubLedger,
): Promise<void> {
  const seqs: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < stubs.length; i++) {
    const first = stubs.seqs[i] as number;
    const offset = stubs.offsets[i] as number;
    const end = offset + (stubs.lengths[i] as number);
    for (let seq = first; seq < first + (stubs.counts[i] as number); seq++) {
      if (stubs.isCited(seq)) continue;
      seqs.push(seq);
      starts.push(offset);
      ends.push(end);
    }
  }
  for (const { first, last } of coalesce(starts, RESTORE_GAP_BYTES, ends, RESTORE_SPAN_BYTES)) {
    const spanStart = starts[first] as number;
    const span = Buffer.allocUnsafe((ends[last] as number) - spanStart);
    const read = await readFully(handle, span, spanStart);
    // The stubs of one run share its line: it is parsed once for all of them.
    let runLine = -1;
    let runChunks: readonly SessionEvent[] = [];
    for (let k = first; k <= last; k++) {
      const seq = seqs[k] as number;
      const from = (starts[k] as number) - spanStart;
      const to = (ends[k] as number) - spanStart;
      let value: unknown;
      try {
        if (from === runLine) value = runChunks[seq - (runChunks[0]?.seq ?? 0)];
        else value = to <= read ? JSON.parse(span.toString('utf8', from, to)) : undefined;
      } catch {
        value = undefined;
      }
      if (value !== undefined && from !== runLine && !isEventRecord(value, seq)) {
        const run = runOf(value, (value as { run?: { seq?: unknown } }).run?.seq as number);
        const chunks = run === undefined || typeof run === 'string' ? undefined : runEvents(run);
        if (chunks !== undefined && typeof chunks !== 'string') {
          runLine = from;
          runChunks = chunks;
          value = chunks[seq - (chunks[0]?.seq ?? 0)];
        }
      }
      if (!isEventRecord(value, seq) || value.type !== CHUNK_TYPE) {
        throw new CorruptLogError({
          file,
          offset: spanStart + from,
          reason: `the chunk at seq ${seq} read back differently than it was scanned (the log changed while it was loaded)`,
        });
      }
      events.restore(seq, value);
    }
  }
}
