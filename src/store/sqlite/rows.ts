/**
 * The row codec of the SQLite store: session and event rows decoded into headers and events,
 * checked as they are read (a gap, a row out of order, bad JSON, an unknown type code is a
 * `CorruptLogError`, never a silently different session), with the runs of finished chunks
 * (see `chunk-runs.ts`) merged in by seq (`run-rows.ts`, shared with PostgreSQL).
 */

import type { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent } from '../../core/index.js';
import { CorruptLogError } from '../contract/errors.js';
import {
  type DecodeOptions,
  decodeSessionRows as decodeRunRows,
  decodeRowsFrom as decodeRunRowsFrom,
  type RowCodec,
} from '../sql/chunk-run-rows.js';
import type { RunRow } from '../sql/chunk-runs.js';
import { decodeEventColumns } from '../sql/event-columns.js';
import { checkEventRow } from '../sql/row-checksums.js';

/** A row of `sessions`. */
export interface SessionRow {
  readonly key: number;
  readonly id: string;
  readonly header: string;
  readonly created_at: number;
  readonly next_seq: number;
  readonly updated_at: number;
  readonly crc: number;
  /** How many events the ledger held on disk when the row was last written (-1: none). */
  readonly vouched: number;
}

/** A row of `events`, as the load statements select it. */
export interface EventRow {
  readonly seq: number;
  /** The code of the type in `event_types`. */
  readonly type: number;
  readonly time: number;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
  readonly crc: number;
}

/** What decoding the rows of one session needs. */
export interface RowContext {
  /** The database file, for errors. */
  readonly file: string;
  /** The session the rows belong to, and its integer key. */
  readonly id: string;
  readonly key: number;
  /** The type name of a code (`undefined` if there is none, which is damage). */
  readonly typeName: (code: number) => string | undefined;
}

/** A `CorruptLogError` at the row of `seq`. */
export function corruptRow(file: string, seq: number, reason: string): CorruptLogError {
  return new CorruptLogError({ file, row: seq, reason });
}

/** How the shared merge (`run-rows.ts`) reads a row of this store: checked against its checksum. */
function codecOf(context: RowContext): RowCodec<EventRow> {
  return {
    seq: (row) => row.seq,
    decode: (row) => decodeCheckedRow(context, row),
    dataBytes: (row) => Buffer.byteLength(row.data, 'utf8'),
  };
}

/**
 * The events of a session from its rows and its chunk runs (each ordered by seq), merged by seq
 * and checked against the recorded length.
 */
export function decodeSessionRows(
  context: RowContext,
  rows: Iterable<EventRow>,
  runs: readonly RunRow[],
  recordedLength: number,
  options: DecodeOptions = {},
): { log: ElidedLog; damage?: CorruptLogError } {
  return decodeRunRows(context, codecOf(context), rows, runs, recordedLength, options);
}

/**
 * The events from seq `from` on, as far as the rows and runs given reach without a gap (a
 * watcher's page: a run may begin before `from`).
 */
export function decodeRowsFrom(
  context: RowContext,
  rows: Iterable<EventRow>,
  runs: readonly RunRow[],
  from: number,
): SessionEvent[] {
  return decodeRunRowsFrom(context, codecOf(context), rows, runs, from);
}

/** One event of its row, checked against the row's checksum. */
export function decodeCheckedRow(context: RowContext, row: EventRow): SessionEvent {
  const type = context.typeName(row.type);
  if (type === undefined) {
    throw corruptRow(
      context.file,
      row.seq,
      `session '${context.id}' has an event of unknown type code ${row.type}`,
    );
  }
  const event = decodeEventColumns(context, row.seq, type, row.time, row);
  checkEventRow(context, type, row);
  return event;
}
