/**
 * The row codec of the SQLite store: session and event rows decoded into headers and events,
 * checked as they are read (a gap, a row out of order, bad JSON, an unknown type code is a
 * `CorruptLogError`, never a silently different session), and the read-back of the chunks a
 * load left out that no message finishes.
 */
import { CitedSeqs, elidedChunk, type SessionEvent, type SessionHeader } from '../../core/index.js';
import { crc32Text } from '../crc32.js';
import { CorruptLogError } from '../errors.js';
import {
  checkRowPosition,
  checkRowsComplete,
  coalesce,
  decodeStoredHeader,
} from '../store-rules.js';

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
  /** NULL only where a load eliding chunk bodies left it out (see `data_bytes`). */
  readonly data: string | null;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
  readonly crc: number;
  /** With elision, the byte length of the data that was left out. */
  readonly data_bytes?: number | null;
  /** With elision, the CRC-32 of the data that was left out, computed by SQLite's caller. */
  readonly data_crc?: number | null;
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

/** Unfinished chunks at most this many rows apart are read back with one query. */
const RESTORE_GAP_ROWS = 256;

/**
 * The checksum of an event row: the CRC-32 of its `data` text (UTF-8, as stored), continued over
 * a line of its other fields, `\n<session key> <seq> <type name> <time> <source_event_seqs or
 * -> <surface_op or ->`. It covers the type's name, not its code, so damage to `event_types` is
 * caught too, and the session key, so a row that strays into another session is.
 */
export function eventChecksum(
  key: number,
  seq: number,
  type: string,
  time: number,
  dataCrc: number,
  sources: string | null,
  surfaceOp: string | null,
): number {
  return crc32Text(
    `\n${key} ${seq} ${type} ${time} ${sources ?? '-'} ${surfaceOp ?? '-'}`,
    dataCrc,
  );
}

/**
 * {@link eventChecksum} of a row whose `data` is at hand, in one CRC call over the data and the
 * line together (a CRC continued over a second text equals the CRC of the two joined): the
 * append path and a full load take this one, which costs one native call per row, not two.
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

/** The CRC-32 of a stored text value (for the SQL function a load eliding bodies calls). */
export function dataChecksum(data: string): number {
  return crc32Text(data);
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

/**
 * The events of a session's rows (ordered by seq), checked against the recorded length: rows
 * whose data a load left out become stubs, and their seqs are returned in `elided`.
 */
export function decodeEventRows(
  context: RowContext,
  rows: Iterable<EventRow>,
  recordedLength: number,
  salvage = false,
): { events: SessionEvent[]; elided: number[]; damage?: CorruptLogError } {
  const events: SessionEvent[] = [];
  const elided: number[] = [];
  try {
    decodeInto(context, rows, recordedLength, events, elided);
  } catch (error) {
    // Rows are checked in seq order: everything before the row an error names is intact (a row
    // is pushed before its checksum is compared, so the named row itself is cut off).
    if (!salvage || !CorruptLogError.isInstance(error)) throw error;
    const intact = events.slice(0, Math.min(events.length, error.row ?? events.length));
    return { events: intact, elided: elided.filter((seq) => seq < intact.length), damage: error };
  }
  return { events, elided };
}

/** Column positions of the raw rows of the eliding load (statements.ts `eventsEliding`). */
const ELIDING_COLUMNS = {
  seq: 0,
  type: 1,
  time: 2,
  data: 3,
  dataBytes: 4,
  dataCrc: 5,
  sources: 6,
  surfaceOp: 7,
  crc: 8,
} as const;

/**
 * {@link decodeEventRows} over the raw rows of the eliding load. A chunk whose body was left
 * out is checked and stubbed straight from its array; only the other rows become objects.
 */
export function decodeElidingRows(
  context: RowContext,
  rows: Iterable<unknown>,
  recordedLength: number,
): { events: SessionEvent[]; elided: number[] } {
  const c = ELIDING_COLUMNS;
  const events: SessionEvent[] = [];
  const elided: number[] = [];
  for (const value of rows) {
    const raw = value as readonly unknown[];
    const seq = raw[c.seq] as number;
    const expected = events.length;
    checkRowPosition(context, seq, expected, recordedLength);
    const code = raw[c.type] as number;
    const time = raw[c.time] as number;
    const data = raw[c.data] as string | null;
    const sources = raw[c.sources] as string | null;
    const surfaceOp = raw[c.surfaceOp] as string | null;
    const crc = raw[c.crc] as number;
    if (data === null) {
      const dataCrc = raw[c.dataCrc] as number | null;
      compareChecksum(context, seq, code, crc, (type) =>
        dataCrc === null
          ? undefined
          : eventChecksum(context.key, seq, type, time, dataCrc, sources, surfaceOp),
      );
      elided.push(expected);
      events.push(elidedChunk(expected, time, (raw[c.dataBytes] as number | null) ?? 0));
    } else {
      const row: EventRow = {
        seq,
        type: code,
        time,
        data,
        source_event_seqs: sources,
        surface_op: surfaceOp,
        crc,
      };
      events.push(decodeEventRow(context, row));
      checkRow(context, row);
    }
  }
  checkRowsComplete(context, events.length, recordedLength);
  return { events, elided };
}

function decodeInto(
  context: RowContext,
  rows: Iterable<EventRow>,
  recordedLength: number,
  events: SessionEvent[],
  elided: number[],
): void {
  for (const row of rows) {
    const expected = events.length;
    checkRowPosition(context, row.seq, expected, recordedLength);
    if (row.data === null) {
      checkRow(context, row);
      elided.push(expected);
      events.push(elidedChunk(expected, row.time, row.data_bytes ?? 0));
    } else {
      // Decoded first, so damage that breaks the JSON is named as such; the checksum then
      // catches the damage that still parses.
      events.push(decodeEventRow(context, row));
      checkRow(context, row);
    }
  }
  checkRowsComplete(context, events.length, recordedLength);
}

/**
 * Replaces the stubs of `elided` that no `assistant/message` of the session cites by their
 * chunks, read back with `read(first, last)` (the rows of seqs `first..last`, checked again) in
 * coalesced ranges: a stub stands only for a finished chunk.
 */
export function restoreUnfinished(
  context: RowContext,
  events: SessionEvent[],
  elided: readonly number[],
  read: (first: number, last: number) => readonly EventRow[],
): void {
  const cited = new CitedSeqs();
  for (const event of events) cited.cite(event);
  const unfinished = elided.filter((seq) => !cited.has(seq));
  for (const { first, last } of coalesce(unfinished, RESTORE_GAP_ROWS)) {
    const wanted = new Set(unfinished.slice(first, last + 1));
    for (const row of read(unfinished[first] as number, unfinished[last] as number)) {
      if (!wanted.delete(row.seq)) continue;
      events[row.seq] = decodeCheckedRow(context, row);
    }
    const [missing] = wanted;
    if (missing !== undefined) {
      // Impossible inside the load's transaction, unless the database is damaged.
      throw corruptRow(
        context.file,
        missing,
        `session '${context.id}' has no row for seq ${missing} any more`,
      );
    }
  }
}

/** Throws unless the row matches its checksum (a body left out counts by its `data_crc`). */
function checkRow(context: RowContext, row: EventRow): void {
  const { data, data_crc: dataCrc } = row;
  compareChecksum(context, row.seq, row.type, row.crc, (type) =>
    data !== null
      ? rowChecksum(
          context.key,
          row.seq,
          type,
          row.time,
          data,
          row.source_event_seqs,
          row.surface_op,
        )
      : dataCrc === null || dataCrc === undefined
        ? undefined
        : eventChecksum(
            context.key,
            row.seq,
            type,
            row.time,
            dataCrc,
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
  if (row.data === null) throw corruptRow(file, seq, `the data of session '${id}' is missing`);
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
