/**
 * The rows of `sessions` in the PostgreSQL store, and their checks. Each row carries two
 * checksums: `crc` over what never changes (the id, `created_at` and the header, as SQLite's
 * session rows have it), and `length_crc` over what each append changes (`next_seq` and
 * `updated_at`, with the id), rewritten by the append that moves them and checked before it
 * does, so that a damaged length is never given a fresh checksum. `id_order` and
 * `parent_session` repeat the id and the header for the indexes: they are checked against them.
 */
import type { SessionHeader } from '../../core/index.js';
import { crc32Text } from '../contract/crc32.js';
import { CorruptLogError } from '../contract/errors.js';
import { decodeHeaderRow } from '../sql/row-checksums.js';

/** A row of `sessions` as a read selects it ({@link SESSION_COLUMNS}; int8 as text). */
export interface SessionRow {
  readonly key: string;
  readonly id: string;
  readonly id_order: Buffer;
  readonly header: string;
  readonly created_at: string;
  readonly parent_session: string | null;
  readonly next_seq: string;
  readonly updated_at: string;
  readonly crc: string;
  readonly length_crc: string;
}

/** The columns of `sessions` a read selects, in the order of {@link SessionRow}. */
export const SESSION_COLUMNS =
  'key, id, id_order, header, created_at, parent_session, next_seq, updated_at, crc, length_crc';

/** What an append reads of a session's row: its key and its length. */
export interface PositionRow {
  readonly key: string;
  readonly id: string;
  readonly next_seq: string;
  readonly updated_at: string;
  readonly length_crc: string;
}

/** The columns of {@link PositionRow}. */
export const POSITION_COLUMNS = 'key, id, next_seq, updated_at, length_crc';

/** The key `list` sorts ids by: UTF-16BE code units, as JavaScript compares strings. */
export function idOrder(id: string): Buffer {
  return Buffer.from(id, 'utf16le').swap16();
}

/**
 * The checksum of a session's length, `length_crc`: the CRC-32 of `<id>\n<next_seq>
 * <updated_at>`. The id ties it to its row, so lengths swapped between sessions are caught.
 */
export function lengthChecksum(
  id: string,
  nextSeq: number | string,
  updatedAt: number | string,
): number {
  return crc32Text(`${id}\n${nextSeq} ${updatedAt}`);
}

/**
 * The header of a session's row, the whole row checked: its header as every backend checks one,
 * both checksums, and the index columns against the id and the header.
 *
 * @throws CorruptLogError naming the session; FormatVersionError for a header of another format.
 */
export function decodeSessionRow(location: string, row: SessionRow): SessionHeader {
  const header = decodeHeaderRow(location, row);
  if ((header.parentSession ?? null) !== row.parent_session) {
    throw damagedRow(location, row.id, 'its parent_session differs from its header');
  }
  if (!idOrder(row.id).equals(row.id_order)) {
    throw damagedRow(location, row.id, 'its id_order is not the order of its id');
  }
  checkLength(location, row);
  return header;
}

/**
 * Throws unless a session's `next_seq` and `updated_at` match `length_crc`.
 *
 * @throws CorruptLogError naming the session.
 */
export function checkLength(location: string, row: PositionRow): void {
  if (lengthChecksum(row.id, row.next_seq, row.updated_at) !== Number(row.length_crc)) {
    throw damagedRow(
      location,
      row.id,
      `its length does not match its checksum (next_seq ${row.next_seq}, updated_at ${row.updated_at} or length_crc is damaged)`,
    );
  }
}

function damagedRow(location: string, id: string, problem: string): CorruptLogError {
  return new CorruptLogError({
    file: location,
    reason: `the row of session '${id}' is damaged: ${problem}`,
  });
}
