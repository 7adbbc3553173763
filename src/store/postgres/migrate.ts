/**
 * The upgrade of a PostgreSQL store from schema 3 to schema 4: the row checksums added and
 * computed, `envelope_crc` recomputed in its new form. It runs inside the transaction of the
 * first open that may write (under the advisory lock that serialises opens), so it is all or
 * nothing: a failure rolls back and leaves the store at schema 3.
 *
 * Schema 3 kept no checksum in session and event rows, so there is nothing to check them against:
 * their checksums are computed from what they hold now, which is what a load of them returned
 * before the upgrade (a row whose JSON does not parse still fails its load). Chunk runs had
 * checksums, and a run must never have its damage blessed: a run that does not match schema 3's
 * `crc` and `envelope_crc` gets an `envelope_crc` that matches nothing, and keeps failing every
 * load. Writers of schema 3 still running when it commits fail their next insert (the new
 * columns are NOT NULL): stop them before the first writer of this version opens the store.
 */
import {
  envelopeChecksum,
  envelopeChecksumFrom,
  runChecksum,
  runDigest,
} from '../sql/chunk-runs.js';
import { rowChecksum, sessionChecksum } from '../sql/row-checksums.js';
import type { PgQueryable } from './driver.js';
import { type EventRow, type PgRunRow, toRunRow } from './rows.js';
import { lengthChecksum, type SessionRow } from './session-rows.js';

/** Rows read and updated at a time: a page's texts are held in memory at once. */
const ROW_PAGE = 5000;
/** Runs read and updated at a time (a run holds a message's chunks). */
const RUN_PAGE = 500;

type SessionRow3 = Pick<
  SessionRow,
  'key' | 'id' | 'created_at' | 'header' | 'next_seq' | 'updated_at'
>;
type EventRow3 = Omit<EventRow, 'crc'> & { readonly session_key: string };
type RunRow3 = PgRunRow & { readonly session_key: string; readonly data: Buffer };

/**
 * Upgrades the store of schema `s` (quoted) from version 3 to 4, in the caller's transaction.
 */
export async function migrateFrom3(client: PgQueryable, s: string): Promise<void> {
  await client.query(
    `ALTER TABLE ${s}.sessions ADD COLUMN crc bigint, ADD COLUMN length_crc bigint;
     ALTER TABLE ${s}.events ADD COLUMN crc bigint`,
  );
  await setChecksums<SessionRow3>(client, s, {
    table: 'sessions',
    keys: ['key'],
    columns: 'id, created_at, header, next_seq, updated_at',
    page: ROW_PAGE,
    set: {
      crc: (row) => sessionChecksum(row.id, row.created_at, row.header),
      length_crc: (row) => lengthChecksum(row.id, row.next_seq, row.updated_at),
    },
  });
  await setChecksums<EventRow3>(client, s, {
    table: 'events',
    keys: ['session_key', 'seq'],
    columns: 'type, time, data, source_event_seqs, surface_op',
    page: ROW_PAGE,
    set: {
      crc: (row) =>
        rowChecksum(
          row.session_key,
          row.seq,
          row.type,
          row.time,
          row.data,
          row.source_event_seqs,
          row.surface_op,
        ),
    },
  });
  await setChecksums<RunRow3>(client, s, {
    table: 'chunk_runs',
    keys: ['session_key', 'first_seq'],
    columns: 'count, time, times, sizes, data, crc, envelope_crc',
    page: RUN_PAGE,
    set: { envelope_crc: envelopeOf },
  });
  await client.query(
    `ALTER TABLE ${s}.sessions ALTER COLUMN crc SET NOT NULL, ALTER COLUMN length_crc SET NOT NULL;
     ALTER TABLE ${s}.events ALTER COLUMN crc SET NOT NULL;
     UPDATE ${s}.meta SET value = '4' WHERE key = 'schema_version'`,
  );
}

/** Which checksum columns of a table an upgrade sets, and from what. */
interface ChecksumColumns<R> {
  readonly table: string;
  /** The columns of the primary key, in its order (int8 each). */
  readonly keys: readonly (keyof R & string)[];
  /** The other columns the checksums are computed from. */
  readonly columns: string;
  readonly page: number;
  /** Each checksum column set, and its value for a row. */
  readonly set: Readonly<Record<string, (row: R) => number>>;
}

/**
 * Sets checksum columns of every row of a table: pages of rows read in key order (no key is
 * below -1), each page updated in one statement from arrays.
 */
async function setChecksums<R extends object>(
  client: PgQueryable,
  s: string,
  spec: ChecksumColumns<R>,
): Promise<void> {
  const keys = spec.keys.join(', ');
  const sets = Object.keys(spec.set);
  const names = [...spec.keys, ...sets];
  const select = `SELECT ${keys}, ${spec.columns} FROM ${s}.${spec.table}
    WHERE (${keys}) > (${spec.keys.map((_, i) => `$${i + 1}`).join(', ')})
    ORDER BY ${keys} LIMIT ${spec.page}`;
  const update = `UPDATE ${s}.${spec.table} AS t SET ${sets.map((c) => `${c} = v.${c}`).join(', ')}
    FROM unnest(${names.map((_, i) => `$${i + 1}::bigint[]`).join(', ')}) AS v(${names.join(', ')})
    WHERE ${spec.keys.map((k) => `t.${k} = v.${k}`).join(' AND ')}`;
  const keyOf = (row: R): unknown[] => spec.keys.map((k) => row[k]);
  for (let after: unknown[] = spec.keys.map(() => '-1'); ; ) {
    const { rows } = await client.query<R>(select, after);
    if (rows.length === 0) return;
    await client.query(update, [
      ...spec.keys.map((k) => rows.map((row) => row[k])),
      ...sets.map((column) => rows.map(spec.set[column] as (row: R) => number)),
    ]);
    after = keyOf(rows.at(-1) as R);
  }
}

/** A run's `envelope_crc` of schema 4; for a run schema 3's checksums refuse, one that fails. */
function envelopeOf(row: RunRow3): number {
  const key = Number(row.session_key);
  const run = toRunRow(row);
  const crc = envelopeChecksum(key, run, runDigest(run.data));
  const intact =
    runChecksum(key, run) === run.crc && envelopeChecksumFrom(key, run, 0) === run.envelope_crc;
  // A CRC-32 is 32 bits: flipping its lowest one gives a value no check of this run can match.
  return intact ? crc : (crc ^ 1) >>> 0;
}
