/**
 * The checksums both SQL backends keep in their session and event rows (SQLite since schema 3,
 * PostgreSQL since schema 4), and their checks. Neither server checks what a value holds: a
 * flipped byte, or an `UPDATE` run by hand, is read back as a different value. A row that no
 * longer matches its checksum is a `CorruptLogError` naming the session, never a different
 * session. (Chunk runs carry checksums of their own: `chunk-runs.ts`.)
 *
 * A CRC-32 is no seal against someone who means to forge a row (it can be recomputed); it finds
 * damage and careless edits.
 */
import type { SessionHeader } from '../../core/index.js';
import { crc32Text } from '../contract/crc32.js';
import { CorruptLogError } from '../contract/errors.js';
import { decodeStoredHeader } from '../contract/store-rules.js';
import type { RunContext } from './chunk-run-rows.js';

/**
 * The checksum of an event row: the CRC-32 of its `data` text (UTF-8, as stored), continued over
 * a line of its other fields, `\n<session key> <seq> <type name> <time> <source_event_seqs or
 * -> <surface_op or ->`. It covers the session key, so a row that strays into another session is
 * caught, and the type's name (not SQLite's code for it), so damage to SQLite's `event_types` is
 * too. Integers may be given as the decimal text a driver reads them as (PostgreSQL's int8): the
 * line is the same.
 */
export function rowChecksum(
  key: number | string,
  seq: number | string,
  type: string,
  time: number | string,
  data: string,
  sources: string | null,
  surfaceOp: string | null,
): number {
  // Two calls rather than one text: the line after a large `data` would make V8 copy it whole.
  return crc32Text(
    `\n${key} ${seq} ${type} ${time} ${sources ?? '-'} ${surfaceOp ?? '-'}`,
    crc32Text(data),
  );
}

/** The checksum of a session row: the CRC-32 of `<id>\n<created_at>\n<header>`. */
export function sessionChecksum(id: string, createdAt: number | string, header: string): number {
  return crc32Text(`${id}\n${createdAt}\n${header}`);
}

/** The columns of an event row its checksum covers besides the type, as a driver reads them. */
export interface ChecksummedEventRow {
  readonly seq: number | string;
  readonly time: number | string;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
  readonly crc: number | string;
}

/**
 * Throws unless an event row (of type `type`) matches its checksum.
 *
 * @throws CorruptLogError naming the session and the row's seq.
 */
export function checkEventRow(context: RunContext, type: string, row: ChecksummedEventRow): void {
  const crc = rowChecksum(
    context.key,
    row.seq,
    type,
    row.time,
    row.data,
    row.source_event_seqs,
    row.surface_op,
  );
  if (crc !== Number(row.crc)) {
    throw new CorruptLogError({
      file: context.file,
      row: Number(row.seq),
      reason: `the event row of session '${context.id}' does not match its checksum`,
    });
  }
}

/** The columns of a session row its header and checksum are read from. */
export interface HeaderRow {
  readonly id: string;
  readonly header: string;
  readonly created_at: number | string;
  readonly crc: number | string;
}

/**
 * Parses and checks a stored header (the rule every backend shares), its `created_at` and the
 * row's checksum.
 *
 * @throws CorruptLogError naming the session; FormatVersionError for a header of another format.
 */
export function decodeHeaderRow(file: string, row: HeaderRow): SessionHeader {
  const subject = `the header of session '${row.id}'`;
  let value: unknown;
  try {
    value = JSON.parse(row.header);
  } catch (error) {
    throw new CorruptLogError({ file, reason: `${subject} is not valid JSON` }, { cause: error });
  }
  const header = decodeStoredHeader(value, { where: { file }, expectedId: row.id, subject });
  if (header.createdAt !== Number(row.created_at)) {
    throw new CorruptLogError({
      file,
      reason: `session '${header.id}' has created_at ${row.created_at} but its header says ${header.createdAt}`,
    });
  }
  // Last: what a checksum adds is the damage that still reads as a valid header.
  if (sessionChecksum(row.id, row.created_at, row.header) !== Number(row.crc)) {
    throw new CorruptLogError({
      file,
      reason: `the row of session '${row.id}' does not match its checksum (its id, created_at or header is damaged)`,
    });
  }
  return header;
}
