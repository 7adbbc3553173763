/**
 * The statements of the SQLite store, prepared once per connection, and the SQL functions they
 * call.
 */

import type { ListFilter } from '../contract/store-rules.js';
import {
  type ReadableSchema,
  SCHEMA_VERSION,
  type SqliteDatabase,
  type SqliteStatement,
} from './schema.js';

/** The statements, by use. */
export interface Statements {
  readonly insertSession: SqliteStatement;
  readonly nextSeq: SqliteStatement;
  readonly typeCode: SqliteStatement;
  readonly insertType: SqliteStatement;
  readonly types: SqliteStatement;
  readonly insertEvent: SqliteStatement;
  readonly advance: SqliteStatement;
  readonly session: SqliteStatement;
  readonly events: SqliteStatement;
  readonly eventsFrom: SqliteStatement;
  readonly insertRun: SqliteStatement;
  readonly runs: SqliteStatement;
  readonly runsFrom: SqliteStatement;
  readonly deleteRange: SqliteStatement;
  readonly deleteRuns: SqliteStatement;
  readonly eventRange: SqliteStatement;
  readonly lastTime: SqliteStatement;
  readonly eventsOfTypes: SqliteStatement;
  readonly keys: SqliteStatement;
  readonly firstPage: SqliteStatement;
  /** The statement of a `list` page with these filters (and after a cursor), prepared once. */
  /**
   * A page of the session list. `scan` reads the table without its indexes (`NOT INDEXED`),
   * for a list to go on when an index of the table is damaged.
   */
  page(filter: ListFilter, afterCursor: boolean, scan?: boolean): SqliteStatement;
  /** Every session key, read without the table's indexes. */
  readonly keysScanned: SqliteStatement;
  readonly lockRow: SqliteStatement;
  readonly putLock: SqliteStatement;
  readonly dropLock: SqliteStatement;
  readonly refreshLock: SqliteStatement;
  readonly deleteEvents: SqliteStatement;
  readonly deleteSession: SqliteStatement;
  readonly deleteLock: SqliteStatement;
}

/** SQL function ordering ids by UTF-16 code units, as JavaScript (and `list` cursors) do. */
const ID_ORDER = 'palimpsest_id_order';
/**
 * Registers the SQL functions and prepares every statement on `db`. A database of the previous
 * schema (read-only: a writable open migrates it first) has no `vouched` column; its sessions
 * read as vouched for nothing.
 */
export function prepareStatements(db: SqliteDatabase, version: ReadableSchema): Statements {
  db.function(ID_ORDER, { deterministic: true }, (id) =>
    Buffer.from(String(id), 'utf16le').swap16(),
  );
  const vouched = version === SCHEMA_VERSION ? 'vouched' : '-1 AS vouched';
  const summary = `SELECT key, id, header, created_at, next_seq, updated_at, crc, ${vouched} FROM sessions`;
  const order = `ORDER BY created_at DESC, ${ID_ORDER}(id) ASC LIMIT @limit`;
  const pages = new Map<string, SqliteStatement>();
  return {
    insertSession: db.prepare(
      'INSERT INTO sessions (id, created_at, header, next_seq, updated_at, crc) VALUES (?, ?, ?, 0, ?, ?) RETURNING key',
    ),
    nextSeq: db.prepare(`SELECT key, next_seq, ${vouched} FROM sessions WHERE id = ?`),
    typeCode: db.prepare('SELECT code FROM event_types WHERE type = ?'),
    insertType: db.prepare('INSERT INTO event_types (type) VALUES (?) RETURNING code'),
    types: db.prepare('SELECT code, type FROM event_types'),
    insertEvent: db.prepare(
      'INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    // The previous schema is only ever read (a writable open migrates it), but its statements
    // take the same parameters: there, the third, `vouched`, is left out.
    advance: db.prepare(
      version === SCHEMA_VERSION
        ? 'UPDATE sessions SET next_seq = ?, updated_at = ?, vouched = ? WHERE key = ?'
        : 'UPDATE sessions SET next_seq = ?, updated_at = ? WHERE ? IS NOT NULL AND key = ?',
    ),
    session: db.prepare(`${summary} WHERE id = ?`),
    events: db.prepare(
      'SELECT seq, type, time, data, source_event_seqs, surface_op, crc FROM events WHERE session_id = ? ORDER BY seq',
    ),
    eventsFrom: db.prepare(
      'SELECT seq, type, time, data, source_event_seqs, surface_op, crc FROM events WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
    ),
    insertRun: db.prepare(
      'INSERT INTO chunk_runs (session_id, first_seq, count, time, times, sizes, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    runs: db.prepare(
      'SELECT first_seq, count, time, times, sizes, data, crc FROM chunk_runs WHERE session_id = ? ORDER BY first_seq',
    ),
    // The runs a watcher's page needs: those reaching past `from`, up to the page's last row.
    runsFrom: db.prepare(
      'SELECT first_seq, count, time, times, sizes, data, crc FROM chunk_runs WHERE session_id = ? AND first_seq + count > ? AND first_seq < ? ORDER BY first_seq',
    ),
    deleteRange: db.prepare('DELETE FROM events WHERE session_id = ? AND seq BETWEEN ? AND ?'),
    deleteRuns: db.prepare('DELETE FROM chunk_runs WHERE session_id = ?'),
    eventRange: db.prepare(
      'SELECT seq, type, time, data, source_event_seqs, surface_op, crc FROM events WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq',
    ),
    lastTime: db.prepare('SELECT time FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1'),
    // The stats' event types (three codes): the scan reads each row's record header, and the
    // data only of the rows it selects.
    eventsOfTypes: db.prepare(
      'SELECT seq, type, data FROM events WHERE session_id = ? AND type IN (?, ?, ?) ORDER BY seq',
    ),
    keys: db.prepare('SELECT key FROM sessions'),
    keysScanned: db.prepare('SELECT key FROM sessions NOT INDEXED'),
    firstPage: db.prepare(`${summary} ${order}`),
    page: (filter, afterCursor, scan = false) => {
      const conditions = [
        afterCursor
          ? `(created_at < @createdAt OR (created_at = @createdAt AND ${ID_ORDER}(id) > ${ID_ORDER}(@id)))`
          : undefined,
        filter.createdAfter === undefined ? undefined : 'created_at > @createdAfter',
        filter.createdBefore === undefined ? undefined : 'created_at < @createdBefore',
        filter.parentSession === undefined
          ? undefined
          : "json_extract(header, '$.parentSession') = @parentSession",
        // substr, not LIKE: LIKE folds ASCII case and gives % and _ a meaning.
        filter.idPrefix === undefined ? undefined : 'substr(id, 1, length(@idPrefix)) = @idPrefix',
      ].filter((condition) => condition !== undefined);
      const from = scan ? `${summary} NOT INDEXED` : summary;
      const sql = `${from}${conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`} ${order}`;
      let statement = pages.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql);
        pages.set(sql, statement);
      }
      return statement;
    },
    lockRow: db.prepare('SELECT owner FROM locks WHERE session_id = ?'),
    putLock: db.prepare('INSERT OR REPLACE INTO locks (session_id, owner) VALUES (?, ?)'),
    dropLock: db.prepare('DELETE FROM locks WHERE session_id = ? AND owner = ?'),
    refreshLock: db.prepare('UPDATE locks SET owner = ? WHERE session_id = ? AND owner = ?'),
    deleteEvents: db.prepare('DELETE FROM events WHERE session_id = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE key = ?'),
    deleteLock: db.prepare('DELETE FROM locks WHERE session_id = ?'),
  };
}
