/**
 * Event rows and chunk runs of the PostgreSQL store, and their decoding: each row checked as it
 * is turned back into an event (its seq where the log says, its JSON columns parseable, the row
 * matching its checksum), so that damage, an edit made with SQL, or rows another program wrote,
 * is a `CorruptLogError` naming the session and the row, never a shorter or different session.
 * The runs of finished chunks (`chunk_runs`, see `../sql/chunk-runs.ts`) are merged in by seq
 * with the merge the SQLite store uses (`../sql/chunk-run-rows.ts`).
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
import { decodeEventColumns } from '../sql/event-columns.js';
import { checkEventRow } from '../sql/row-checksums.js';

/** A row of `events` as a read selects it ({@link EVENT_COLUMNS}; int8 as text). */
export interface EventRow {
  readonly seq: string | number;
  readonly type: string;
  readonly time: string | number;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
  readonly crc: string | number;
}

/** The columns of `events` a read selects, in the order of {@link EventRow}. */
export const EVENT_COLUMNS = 'seq, type, time, data, source_event_seqs, surface_op, crc';

/** Where rows come from, for messages. */
export interface RowSite {
  readonly location: string;
  readonly id: string;
}

/**
 * A row of `chunk_runs` as the driver gives it (int8 as text, bytea as a Buffer): read whole
 * ({@link RUN_COLUMNS}), or with the digest of its data in place of the data
 * ({@link RUN_ENVELOPE_COLUMNS}).
 */
export interface PgRunRow {
  readonly first_seq: string;
  readonly count: number;
  readonly time: string;
  readonly times: Buffer;
  readonly sizes: Buffer;
  readonly data?: Buffer;
  readonly digest?: Buffer;
  readonly crc: string;
  readonly envelope_crc: string;
}

/** The columns of `chunk_runs` a read selects, in the order of {@link PgRunRow}. */
export const RUN_COLUMNS = 'first_seq, count, time, times, sizes, data, crc, envelope_crc';

/**
 * The columns a load that elides finished chunks selects: the SHA-256 of `data`, computed by the
 * server, in place of `data`, which it would neither inflate nor use and which is most of a
 * run's bytes. The digest is all `envelope_crc` needs to find damage to the data.
 */
export const RUN_ENVELOPE_COLUMNS =
  'first_seq, count, time, times, sizes, sha256(data) AS digest, crc, envelope_crc';

/** A run row with its integers as numbers, as the shared codec reads it. */
export function toReadRun(row: PgRunRow): ReadRun {
  const envelope = {
    first_seq: Number(row.first_seq),
    count: row.count,
    time: Number(row.time),
    times: row.times,
    sizes: row.sizes,
    crc: Number(row.crc),
    envelope_crc: Number(row.envelope_crc),
  };
  if (row.data !== undefined) return { ...envelope, data: row.data };
  if (row.digest === undefined) throw new TypeError('expected a chunk run read with its digest');
  return { ...envelope, digest: row.digest };
}

/** {@link toReadRun} of a row read whole ({@link RUN_COLUMNS}). */
export function toRunRow(row: PgRunRow): RunRow {
  const run = toReadRun(row);
  if (run.data === undefined) throw new TypeError('expected a chunk run read with its data');
  return run;
}

/** Where rows come from, and the session's key (which the checksums cover). */
export function runContext(site: RowSite, key: string): RunContext {
  return { file: site.location, id: site.id, key: Number(key) };
}

/** How the shared merge (`chunk-run-rows.ts`) reads a row of this store. */
export function rowCodec(context: RunContext): RowCodec<EventRow> {
  return {
    seq: (row) => Number(row.seq),
    decode: (row) => decodeRow(context, row),
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
  const context = runContext(site, key);
  return decodeSessionRows(
    context,
    rowCodec(context),
    rows,
    runs.map(toReadRun),
    recordedLength,
    options,
  );
}

/**
 * A watcher's page: the events from `from` on that the rows and runs given reach; checked
 * against the session's recorded length, which the page must reach unless it was `cut` by its
 * size limit.
 */
export function decodePage(
  site: RowSite,
  key: string,
  rows: readonly EventRow[],
  runs: readonly PgRunRow[],
  from: number,
  recorded: { readonly length: number; readonly cut: boolean },
): SessionEvent[] {
  const context = runContext(site, key);
  return decodeRowsFrom(context, rowCodec(context), rows, runs.map(toRunRow), from, {
    length: recorded.length,
    complete: !recorded.cut,
  });
}

/**
 * One event of its row, checked against the row's checksum.
 *
 * @throws CorruptLogError naming the session and the row's seq.
 */
export function decodeRow(context: RunContext, row: EventRow): SessionEvent {
  const event = decodeEventColumns(context, Number(row.seq), row.type, Number(row.time), row);
  checkEventRow(context, row.type, row);
  return event;
}

/** A `CorruptLogError` at the row of `seq`. */
export function corruptRow(site: RowSite, seq: number, reason: string): CorruptLogError {
  return new CorruptLogError({ file: site.location, row: seq, reason });
}
