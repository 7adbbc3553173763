/**
 * The read side of chunk runs both SQL backends share: a session's rows of `events` and its
 * rows of `chunk_runs` (each ordered by seq) merged back into its events, checked as they are
 * read (a gap, an overlap, a run that does not match its checksum is a `CorruptLogError` naming
 * the seq, never a silently different session). How one row of `events` decodes is the
 * backend's, given as a {@link RowCodec}.
 */

import { CitedSeqs } from '../../core/elided.js';
import { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent } from '../../core/index.js';

import { CorruptLogError } from '../contract/errors.js';
import { logSizedFor } from '../contract/loaded-session.js';
import { checkRowPosition, checkRowsComplete } from '../contract/store-rules.js';
import { pushRunTexts, runLineEnds } from './chunk-run-texts.js';
import {
  envelopeChecksum,
  inflateRun,
  RUN_TYPE,
  type RunEnvelopeRow,
  type RunRow,
  runChecksum,
  runDigest,
  runEnvelopes,
} from './chunk-runs.js';

/** Whose rows these are: the location for errors, the session's id and its integer key. */
export interface RunContext {
  readonly file: string;
  readonly id: string;
  /** The key a run's checksum covers. */
  readonly key: number;
}

/** How a backend's row of `events` is read. */
export interface RowCodec<R> {
  /** The row's seq. */
  seq(row: R): number;
  /** The row's event, checked; throws a `CorruptLogError` naming the row's seq. */
  decode(row: R): SessionEvent;
  /** The UTF-8 byte length of the row's data text (the size of its stub). */
  dataBytes(row: R): number;
}

/**
 * A run as read: whole, or with the digest of its data in place of its data, for a load that
 * elides finished chunks from a backend that checksums envelopes apart (PostgreSQL).
 */
export type ReadRun = RunRow | RunEnvelopeRow;

/** How {@link decodeSessionRows} reads a session. */
export interface DecodeOptions {
  /** Finished chunks become stubs: the data of runs is neither inflated nor parsed. */
  readonly elide?: boolean;
  /** Stop at damage and return the events before it, with the damage. */
  readonly salvage?: boolean;
}

/**
 * The events of a session from its rows and its chunk runs (each ordered by seq), merged by seq
 * and checked against the recorded length; with `elide`, the finished chunks are holes of the
 * log (no object each).
 */
export function decodeSessionRows<R>(
  context: RunContext,
  codec: RowCodec<R>,
  rows: Iterable<R>,
  runs: readonly ReadRun[],
  recordedLength: number,
  options: DecodeOptions = {},
): { log: ElidedLog; damage?: CorruptLogError } {
  const events = logSizedFor(recordedLength);
  const reading = options.elide === true ? 'elide' : 'hold';
  try {
    const chunkRows = mergeRows(context, codec, rows, runs, 0, recordedLength, reading, events);
    checkRowsComplete(context, events.length, recordedLength);
    if (chunkRows.length > 0) elideFinishedRows(events, chunkRows);
  } catch (error) {
    // Rows are checked in seq order: everything before the row an error names is intact (a
    // damaged run is cut off whole, from its first seq).
    if (options.salvage !== true || !CorruptLogError.isInstance(error)) throw error;
    events.truncate(Math.min(events.length, error.row ?? events.length));
    return { log: events, damage: error };
  }
  return { log: events };
}

/**
 * The events from seq `from` on, as far as the rows and runs given reach without a gap (a
 * watcher's page: a run may begin before `from`). With `recordedLength` (read in the same
 * snapshot as the rows), a row beyond it is damage, and so, with `complete` (the page was not cut
 * by its size limit), are rows that end before it.
 */
export function decodeRowsFrom<R>(
  context: RunContext,
  codec: RowCodec<R>,
  rows: Iterable<R>,
  runs: readonly RunRow[],
  from: number,
  recorded: { readonly length: number; readonly complete: boolean } = {
    length: Number.MAX_SAFE_INTEGER,
    complete: false,
  },
): SessionEvent[] {
  // A page's log begins at `from`, not at seq 0: its chunks are events, not held deltas.
  const events = new ElidedLog();
  mergeRows(context, codec, rows, runs, from, recorded.length, 'parse', events);
  if (recorded.complete) checkRowsComplete(context, from + events.length, recorded.length);
  return events.toEvents();
}

/**
 * How a run's chunks are read: `elide` as holes of their times and sizes (data neither inflated
 * nor parsed), `hold` with their text deltas held as strings, `parse` each as its event.
 */
type RunReading = 'elide' | 'hold' | 'parse';

/** A chunk stored as a row of its own, which a load eliding finished chunks may stub. */
interface ChunkRow {
  readonly seq: number;
  readonly time: number;
  readonly bytes: number;
}

/**
 * Stubs the chunk rows a later message cites. Runs hold most finished chunks; the rest (a
 * message's only chunk, a run its writer split) are rows, found finished only once every
 * message has been read.
 */
function elideFinishedRows(events: ElidedLog, chunkRows: readonly ChunkRow[]): void {
  const cited = new CitedSeqs();
  for (let seq = 0; seq < events.length; seq++) {
    const event = events.peek(seq);
    if (event !== undefined) cited.cite(event);
  }
  for (const { seq, time, bytes } of chunkRows) {
    if (cited.has(seq)) events.elide(seq, time, bytes);
  }
}

/**
 * Pushes the events of the rows and runs, in seq order, onto `events`; when eliding, returns
 * the chunk rows that may be finished (see {@link elideFinishedRows}).
 */
function mergeRows<R>(
  context: RunContext,
  codec: RowCodec<R>,
  rows: Iterable<R>,
  runs: readonly ReadRun[],
  from: number,
  recordedLength: number,
  reading: RunReading,
  events: ElidedLog,
): ChunkRow[] {
  const chunkRows: ChunkRow[] = [];
  let next = 0;
  const expandBefore = (limit: number): void => {
    while (next < runs.length && (runs[next] as ReadRun).first_seq < limit) {
      expandRun(context, runs[next] as ReadRun, from, recordedLength, reading, events);
      next++;
    }
  };
  for (const row of rows) {
    const seq = codec.seq(row);
    expandBefore(seq);
    checkRowPosition(context, seq, from + events.length, recordedLength);
    const event = codec.decode(row);
    events.push(event);
    if (reading === 'elide' && event.type === RUN_TYPE && event.sourceEventSeqs === undefined) {
      chunkRows.push({ seq, time: event.time, bytes: codec.dataBytes(row) });
    }
  }
  expandBefore(Number.POSITIVE_INFINITY);
  return chunkRows;
}

/** Pushes the chunks of a run (from `from` on, for a run that begins before it). */
function expandRun(
  context: RunContext,
  run: ReadRun,
  from: number,
  recordedLength: number,
  reading: RunReading,
  events: ElidedLog,
): void {
  const expected = from + events.length;
  const first = run.first_seq;
  // Only the first item of a page may begin before `from`.
  const skip = events.length === 0 && first < expected ? expected - first : 0;
  if (skip === 0 || skip >= run.count) checkRowPosition(context, first, expected, recordedLength);
  if (!Number.isSafeInteger(run.count) || run.count < 1) {
    throw corruptRun(
      context,
      first,
      `the chunk run of session '${context.id}' has count ${run.count}`,
    );
  }
  const last = first + run.count - 1;
  // Throws (naming the run's last seq) when the run reaches beyond the recorded length.
  if (last >= recordedLength) checkRowPosition(context, last, last, recordedLength);
  const where = `the chunk run of session '${context.id}' at seqs ${first}..${last}`;
  if (!isIntact(context.key, run)) {
    throw corruptRun(context, first, `${where} does not match its checksum`);
  }
  const envelopes = runEnvelopes(run);
  if (envelopes === undefined) {
    throw corruptRun(context, first, `${where} does not hold ${run.count} times and sizes`);
  }
  const { times, sizes } = envelopes;
  if (reading === 'elide') {
    try {
      events.pushElidedRun(times, sizes, skip);
    } catch (error) {
      throw corruptRun(context, first, `${where} holds a time or size no chunk can have`, error);
    }
    return;
  }
  if (run.data === undefined) {
    throw new TypeError(`${where} was read without its data, which a full load needs`);
  }
  const text = inflateRun(run);
  const ends = text === undefined ? undefined : runLineEnds(text, run.count);
  if (text === undefined || ends === undefined) {
    throw corruptRun(context, first, `${where} does not inflate into ${run.count} chunks`);
  }
  pushRunTexts(text, ends, times, first, skip, events, reading === 'hold', (line, seq) => {
    try {
      return JSON.parse(line) as unknown;
    } catch (error) {
      throw new CorruptLogError(
        {
          file: context.file,
          row: seq,
          reason: `the data of session '${context.id}' is not valid JSON`,
        },
        { cause: error },
      );
    }
  });
}

/**
 * True when a run matches its checksums: a run read without its data, its envelope checksum
 * (which covers the data's digest and `crc`); a whole one, its checksum and, where the backend
 * keeps one, its envelope checksum too (so that a run a fast load refuses is never one a full
 * load accepts).
 */
export function isIntact(key: number, run: ReadRun): boolean {
  if (run.data === undefined) return envelopeChecksum(key, run, run.digest) === run.envelope_crc;
  if (runChecksum(key, run) !== run.crc) return false;
  return (
    run.envelope_crc === undefined ||
    envelopeChecksum(key, run, runDigest(run.data)) === run.envelope_crc
  );
}

function corruptRun(
  context: RunContext,
  seq: number,
  reason: string,
  cause?: unknown,
): CorruptLogError {
  const where = { file: context.file, row: seq, reason };
  return cause === undefined ? new CorruptLogError(where) : new CorruptLogError(where, { cause });
}
