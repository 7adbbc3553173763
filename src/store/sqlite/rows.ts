/**
 * The row codec of the SQLite store: session and event rows decoded into headers and events,
 * checked as they are read (a gap, a row out of order, bad JSON, an unknown type code is a
 * `CorruptLogError`, never a silently different session), with the runs of finished chunks
 * (see `chunk-runs.ts`) merged in by seq (`run-rows.ts`, shared with PostgreSQL).
 */

import type { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { crc32Text } from '../contract/crc32.js';
import { CorruptLogError } from '../contract/errors.js';
import { decodeStoredHeader } from '../contract/store-rules.js';
import {
  type DecodeOptions,
  decodeSessionRows as decodeRunRows,
  decodeRowsFrom as decodeRunRowsFrom,
  type RowCodec,
} from '../sql/chunk-run-rows.js';
import type { RunRow } from '../sql/chunk-runs.js';

/** A row of `sessions`. */
export interface SessionRow {
  readonly key: number;
  readonly id: string;
  readonly header: string;
  readonly created_at: number;
  readonly next_seq: number;
  readonly updated_at: number;
  readonly crc: number;
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

/**
 * The checksum of an event row: the CRC-32 of its `data` text (UTF-8, as stored), continued over
 * a line of its other fields, `\n<session key> <seq> <type name> <time> <source_event_seqs or
 * -> <surface_op or ->`. It covers the type's name, not its code, so damage to `event_types` is
 * caught too, and the session key, so a row that strays into another session is.
 */
export function rowChecksum(
  key: number,
  seq: number,
  type: string,
  time: number,
  data: string,
  sources: string | null,
  surfaceOp: string | null,
): number {
  return crc32Text(`${data}\n${key} ${seq} ${type} ${time} ${sources ?? '-'} ${surfaceOp ?? '-'}`);
}

/** The checksum of a session row: the CRC-32 of `<id>\n<created_at>\n<header>`. */
export function sessionChecksum(id: string, createdAt: number, header: string): number {
  return crc32Text(`${id}\n${createdAt}\n${header}`);
}

/** A `CorruptLogError` at the row of `seq`. */
export function corruptRow(file: string, seq: number, reason: string): CorruptLogError {
  return new CorruptLogError({ file, row: seq, reason });
}

/** Parses and checks a stored header (the rule every backend shares), and its `created_at`. */
export function decodeHeaderRow(file: string, row: SessionRow): SessionHeader {
  const subject = `the header of session '${row.id}'`;
  let value: unknown;
  try {
    value = JSON.parse(row.header);
  } catch (error) {
    throw new CorruptLogError({ file, reason: `${subject} is not valid JSON` }, { cause: error });
  }
  const header = decodeStoredHeader(value, { where: { file }, expectedId: row.id, subject });
  if (header.createdAt !== row.created_at) {
    throw new CorruptLogError({
      file,
      reason: `session '${header.id}' has created_at ${row.created_at} but its header says ${header.createdAt}`,
    });
  }
  // Last: what a checksum adds is the damage that still reads as a valid header.
  if (sessionChecksum(row.id, row.created_at, row.header) !== row.crc) {
    throw new CorruptLogError({
      file,
      reason: `the row of session '${row.id}' does not match its checksum (its id, created_at or header is damaged)`,
    });
  }
  return header;
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

/** Throws unless the row matches its checksum. */
function checkRow(context: RowContext, row: EventRow): void {
  compareChecksum(context, row.seq, row.type, row.crc, (type) =>
    rowChecksum(
      context.key,
      row.seq,
      type,
      row.time,
      row.data,
      row.source_event_seqs,
      row.surface_op,
    ),
  );
}

/**
 * Throws unless `compute` (given the type's name) reproduces the stored checksum: a CRC that
 * cannot be computed (an unknown type code, a left-out body without its CRC) is damage too.
 */
function compareChecksum(
  context: RowContext,
  seq: number,
  code: number,
  stored: number,
  compute: (type: string) => number | undefined,
): void {
  const type = context.typeName(code);
  const crc = type === undefined ? undefined : compute(type);
  if (crc === undefined || crc !== stored) {
    throw corruptRow(
      context.file,
      seq,
      type === undefined
        ? `session '${context.id}' has an event of unknown type code ${code}`
        : `the event row of session '${context.id}' does not match its checksum`,
    );
  }
}

/** One event of its row, checked against the row's checksum. */
export function decodeCheckedRow(context: RowContext, row: EventRow): SessionEvent {
  const event = decodeEventRow(context, row);
  checkRow(context, row);
  return event;
}

/** One event of its row. */
export function decodeEventRow(context: RowContext, row: EventRow): SessionEvent {
  const { file, id } = context;
  const { seq } = row;
  const type = context.typeName(row.type);
  if (type === undefined) {
    throw corruptRow(file, seq, `session '${id}' has an event of unknown type code ${row.type}`);
  }
  const data = parseColumn(file, row.data, seq, `the data of session '${id}'`);
  let surfaceOp: unknown;
  if (row.surface_op !== null) {
    surfaceOp = parseColumn(file, row.surface_op, seq, `the surface_op of session '${id}'`);
    if (typeof surfaceOp !== 'string' && (typeof surfaceOp !== 'object' || surfaceOp === null)) {
      throw corruptRow(file, seq, `the surface_op of session '${id}' is not a surface op`);
    }
  }
  let sources: unknown;
  if (row.source_event_seqs !== null) {
    sources = parseColumn(
      file,
      row.source_event_seqs,
      seq,
      `the source_event_seqs of session '${id}'`,
    );
    if (!Array.isArray(sources)) {
      throw corruptRow(file, seq, `the source_event_seqs of session '${id}' is not an array`);
    }
  }
  return {
    seq,
    time: row.time,
    type,
    data,
    ...(surfaceOp === undefined ? {} : { surfaceOp: surfaceOp as SessionEvent['surfaceOp'] }),
    ...(sources === undefined ? {} : { sourceEventSeqs: sources as number[] }),
  } as SessionEvent;
}

function parseColumn(file: string, text: string, seq: number, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CorruptLogError(
      { file, row: seq, reason: `${what} is not valid JSON` },
      { cause: error },
    );
  }
}
