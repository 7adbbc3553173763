/**
 * Rows of the PostgreSQL store and their decoding: each row checked as it is turned back into an
 * event (its seq where the log says, its JSON columns parseable), so that damage, or rows another
 * program wrote, is a `CorruptLogError` naming the row, never a shorter or different session.
 * The runs of finished chunks (`chunk_runs`, see `../chunk-runs.ts`) are merged in by seq with
 * the merge the SQLite store uses (`../run-rows.ts`).
 */

import type { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent } from '../../core/index.js';
import { CorruptLogError } from '../contract/errors.js';
import {
  type DecodeOptions,
  decodeRowsFrom,
  decodeSessionRows,
  type ReadRun,
  type RowCodec,
  type RunContext,
} from '../sql/chunk-run-rows.js';
import type { RunRow } from '../sql/chunk-runs.js';

/** A row of `events` as a load selects it. */
export interface EventRow {
  readonly seq: string | number;
  readonly type: string;
  readonly time: string | number;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
}

/** Where rows come from, for messages. */
export interface RowSite {
  readonly location: string;
  readonly id: string;
}

/**
 * A row of `chunk_runs` as the driver gives it (int8 as text, bytea as a Buffer); `data` and
 * `crc` are absent from a read of {@link RUN_ENVELOPE_COLUMNS}.
 */
export interface PgRunRow {
  readonly first_seq: string;
  readonly count: number;
  readonly time: string;
  readonly times: Buffer;
  readonly sizes: Buffer;
  readonly data?: Buffer;
  readonly crc?: string;
  readonly envelope_crc: string;
}

/** The columns of `chunk_runs` a read selects, in the order of {@link PgRunRow}. */
export const RUN_COLUMNS = 'first_seq, count, time, times, sizes, data, crc, envelope_crc';

/**
 * The columns a load that elides finished chunks selects: no `data`, which it would neither
 * inflate nor use, and which is most of a run's bytes.
 */
export const RUN_ENVELOPE_COLUMNS = 'first_seq, count, time, times, sizes, envelope_crc';

/** A run row with its integers as numbers, as the shared codec reads it. */
export function toReadRun(row: PgRunRow): ReadRun {
  const envelope = {
    first_seq: Number(row.first_seq),
    count: row.count,
    time: Number(row.time),
    times: row.times,
    sizes: row.sizes,
    envelope_crc: Number(row.envelope_crc),
  };
  if (row.data === undefined) return envelope;
  return { ...envelope, data: row.data, crc: Number(row.crc) };
}

/** {@link toReadRun} of a row read whole ({@link RUN_COLUMNS}). */
export function toRunRow(row: PgRunRow): RunRow {
  const run = toReadRun(row);
  if (run.data === undefined) throw new TypeError('expected a chunk run read with its data');
  return run;
}

/** Where rows come from, and the session's key (which a run's checksum covers). */
export function runContext(site: RowSite, key: string): RunContext {
  return { file: site.location, id: site.id, key: Number(key) };
}

/** How the shared merge (`run-rows.ts`) reads a row of this store. */
export function rowCodec(site: RowSite): RowCodec<EventRow> {
  return {
    seq: (row) => Number(row.seq),
    decode: (row) => decodeRow(site, row),
    dataBytes: (row) => Buffer.byteLength(row.data, 'utf8'),
  };
}

/**
 * Decodes a session's rows and runs, which must be exactly seqs `0..recordedLength-1`. With
 * `salvage`, the first problem ends the events there and is returned instead of thrown.
 */
export function decodeRows(
  site: RowSite,
  key: string,
  rows: readonly EventRow[],
  runs: readonly PgRunRow[],
  recordedLength: number,
  options: DecodeOptions,
): { log: ElidedLog; damage?: CorruptLogError } {
  return decodeSessionRows(
    runContext(site, key),
    rowCodec(site),
    rows,
    runs.map(toReadRun),
    recordedLength,
    options,
  );
}

/** A watcher's page: the events from `from` on that the rows and runs given reach. */
export function decodePage(
  site: RowSite,
  key: string,
  rows: readonly EventRow[],
  runs: readonly PgRunRow[],
  from: number,
): SessionEvent[] {
  return decodeRowsFrom(runContext(site, key), rowCodec(site), rows, runs.map(toRunRow), from);
}

/** One event of its row (its body present). */
export function decodeRow(site: RowSite, row: EventRow): SessionEvent {
  const seq = Number(row.seq);
  const data = parseColumn(site, row.data, seq, 'data');
  const surfaceOp =
    row.surface_op === null ? undefined : parseColumn(site, row.surface_op, seq, 'surface_op');
  if (
    surfaceOp !== undefined &&
    typeof surfaceOp !== 'string' &&
    (typeof surfaceOp !== 'object' || surfaceOp === null)
  ) {
    throw corruptRow(site, seq, `the surface_op of session '${site.id}' is not a surface op`);
  }
  const sources =
    row.source_event_seqs === null
      ? undefined
      : parseColumn(site, row.source_event_seqs, seq, 'source_event_seqs');
  if (sources !== undefined && !Array.isArray(sources)) {
    throw corruptRow(site, seq, `the source_event_seqs of session '${site.id}' is not an array`);
  }
  return {
    seq,
    time: Number(row.time),
    type: row.type,
    data,
    ...(surfaceOp === undefined ? {} : { surfaceOp }),
    ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
  } as SessionEvent;
}

function parseColumn(site: RowSite, text: string, seq: number, column: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CorruptLogError(
      {
        file: site.location,
        row: seq,
        reason: `the ${column} of session '${site.id}' is not valid JSON`,
      },
      { cause: error },
    );
  }
}

/** A `CorruptLogError` at the row of `seq`. */
export function corruptRow(site: RowSite, seq: number, reason: string): CorruptLogError {
  return new CorruptLogError({ file: site.location, row: seq, reason });
}

/** The key `list` sorts ids by: UTF-16BE code units, as JavaScript compares strings. */
export function idOrder(id: string): Buffer {
  return Buffer.from(id, 'utf16le').swap16();
}
