/**
 * Loading a JSONL log, the store's read of a whole session: the header, then the batch scanner
 * (`batch-scanner.ts`) with the line-by-line reader (`line-scan.ts`) behind it, the salvage of a
 * damaged log's acknowledged prefix, and the elision of finished chunks (`stub-ledger.ts`).
 *
 * The log is read in chunks and handled batch by batch rather than line by line: the native
 * calls (CRC-32, UTF-8 validation, UTF-8 decoding) run once per run of lines, and the lines of
 * a run are parsed from one decoded string, instead of a Buffer view, a checksum call, a
 * validation call and a decode per line. A batch's events count only once its commit marker
 * matches (count, length and checksum), exactly as in the line-by-line reader of `line-scan.ts`.
 * At the first batch the scanner doubts (anything but a well-formed committed batch: a torn
 * tail, damage, an over-long line), it hands over to that reader at the batch's first line; the
 * reader then decides every line on its own and names the damage exactly as it always has. With
 * `salvage`, damage the reader finds ends the load instead of failing it: the events before the
 * damaged batch come back, with the damage.
 *
 * With `elideFinishedChunks`, an `assistant/chunk` line in the form palimpsest writes,
 * `{"seq":N,"time":T,"type":"assistant/chunk","data":{...}}`, is not decoded or parsed: its
 * seq, time and data length are read from the bytes and it becomes a stub (see
 * `core/elided.ts`), once the batch's checksum has covered its bytes like any other line's; a
 * run line's chunks become stubs the same way, their times and sizes read from its bytes
 * (`chunk-run-stubs.ts`). A stub stands for a *finished* chunk, one a later `assistant/message`
 * of the log cites, so the load finally reads back (with a few large reads) and parses the
 * chunks no message cites: the stream of a turn a crash left open, or chunks a writer never
 * cited.
 */
import type { ElidedLog } from '../../core/elided-log.js';
import type { SessionHeader } from '../../core/index.js';
import { CorruptLogError } from '../contract/errors.js';
import { logSizedFor } from '../contract/loaded-session.js';
import type { TornTail } from '../contract/session-store.js';
import { BatchScanner } from './batch-scanner.js';
import { commitBefore } from './format.js';
import type { FsFileHandle } from './fs.js';
import { eventsStart, headerCorrupt, parseHeaderLine } from './header.js';
import { LineReader, READ_CHUNK_BYTES } from './line-reader.js';
import { type LineScanEnd, scanLines } from './line-scan.js';
import { restoreUnfinished } from './stub-ledger.js';

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
  const from = await eventsStart(handle, file, first.bytes, first.offset + first.bytes.length + 1);

  // The last commit marker says how many events the log holds (a few dozen bytes read at its
  // end): room for them up front. A file ending otherwise (a torn tail) grows as it is read.
  const { size } = await handle.stat();
  const events = logSizedFor(
    size > from.offset ? await commitBefore(handle, size, from.offset) : undefined,
  );
  const salvage = options.salvage === true;
  const scanner = new BatchScanner(handle, {
    maxLineBytes,
    chunkBytes,
    start: from.offset,
    lineNumber: from.lineNumber,
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
