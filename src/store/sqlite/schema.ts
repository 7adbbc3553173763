/**
 * The SQLite schema of palimpsest: the DDL, the identity checks run before anything is written,
 * the one migration (from the previous schema version, see {@link MIGRATION_DDL}), the
 * connection pragmas, and the subset of the better-sqlite3 API the store uses.
 *
 * The driver types are declared here, structurally, so that palimpsest's public types never
 * depend on better-sqlite3 (the driver is an optional peer dependency, loaded on demand).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import {
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  StorageError,
} from '../contract/errors.js';

/**
 * Version of the table layout, kept in `PRAGMA user_version`. Version 1 kept the text session id
 * and the text event type in every event row, on 4 KiB pages; version 2 is the compact layout
 * below; version 3 adds a checksum to every session and event row and never reuses a session key
 * (the ledger beside the database names sessions by key); version 4 keeps the chunks a message has
 * finished as compressed runs in `chunk_runs` (see `chunk-runs.ts`); version 5 pairs the
 * database with its ledger (`ledger_pairing`, `sessions.vouched`; see `pairing.ts`).
 *
 * A database of version {@link PREVIOUS_SCHEMA_VERSION} is read as it is by a read-only open and
 * migrated by the first writable one; any other version is refused on open and left untouched.
 */
export const SCHEMA_VERSION = 5;

/** The one older version a store opens: read as it is, migrated when opened for writing. */
export const PREVIOUS_SCHEMA_VERSION = 4;

/** A schema version this code reads. */
export type ReadableSchema = typeof SCHEMA_VERSION | typeof PREVIOUS_SCHEMA_VERSION;

/** Marks a database as palimpsest's, in `PRAGMA application_id` (ASCII `Pali`). */
export const APPLICATION_ID = 0x50616c69;

/** The subset of better-sqlite3's `Statement` the store uses. */
export interface SqliteStatement {
  run(...params: readonly unknown[]): { readonly changes: number };
  get(...params: readonly unknown[]): unknown;
  all(...params: readonly unknown[]): unknown[];
  iterate(...params: readonly unknown[]): IterableIterator<unknown>;
  /** Rows as arrays of column values, in select order, from now on (this statement only). */
  raw(toggle: boolean): SqliteStatement;
}

/** A function wrapped in a transaction, as better-sqlite3's `Database#transaction` returns it. */
export interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R;
  /** Runs the function inside `BEGIN IMMEDIATE` ... `COMMIT`. */
  immediate(...args: A): R;
}

/** The subset of better-sqlite3's `Database` the store uses. */
export interface SqliteDatabase {
  readonly open: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options: { readonly simple: true }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  function(
    name: string,
    options: { readonly deterministic: boolean },
    fn: (value: unknown) => unknown,
  ): unknown;
  close(): unknown;
}

/** Options of better-sqlite3's `Database` constructor that the store passes. */
export interface SqliteOpenOptions {
  readonly readonly?: boolean;
  readonly fileMustExist?: boolean;
  readonly timeout?: number;
}

/** better-sqlite3's `Database` class. */
export type SqliteDriver = new (file: string, options?: SqliteOpenOptions) => SqliteDatabase;

const DRIVER_MODULE = 'better-sqlite3';
let driver: Promise<SqliteDriver> | undefined;

/**
 * Loads better-sqlite3 on first use; an application that never opens a `sqlite:` store never
 * loads it. `specifier` exists for tests.
 *
 * @throws InvalidStoreError when the driver is not installed or does not load.
 */
export function loadDriver(specifier = DRIVER_MODULE): Promise<SqliteDriver> {
  if (specifier !== DRIVER_MODULE) return importDriver(specifier);
  driver ??= importDriver(specifier).catch((error: unknown) => {
    driver = undefined;
    throw error;
  });
  return driver;
}

async function importDriver(specifier: string): Promise<SqliteDriver> {
  let module: unknown;
  try {
    module = await import(specifier);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new InvalidStoreError(
        'DRIVER_NOT_INSTALLED',
        'install better-sqlite3@12 to use sqlite: stores',
        {
          cause: error,
        },
      );
    }
    throw new InvalidStoreError(
      'DRIVER_LOAD_FAILED',
      'better-sqlite3 is installed but failed to load',
      {
        cause: error,
      },
    );
  }
  const ctor = (module as { default?: unknown }).default;
  if (typeof ctor !== 'function') {
    throw new InvalidStoreError(
      'DRIVER_LOAD_FAILED',
      'better-sqlite3 did not export its Database class',
    );
  }
  return ctor as SqliteDriver;
}

/**
 * The page size of a new database. SQLite fixes it when the first page is written (and for
 * good once the database is in WAL mode), so it is set on the connection before the schema
 * transaction; see {@link SCHEMA_DDL} for why 8 KiB.
 */
export const PAGE_SIZE = 8192;

/**
 * The core event types, given fixed codes in `event_types` when a database is created; other
 * types get the next free code the first time they are appended. `assistant/chunk` gets 0
 * because it is by far the most frequent row of a streamed log, and SQLite stores the integers
 * 0 and 1 in the record header alone (no payload byte). A type added to the core vocabulary is
 * added at the end (a test ties this list to it): the table, not this list, maps a database's
 * codes, so a database created before holds the type under the code its first append gave it.
 */
export const SEEDED_TYPES = [
  'assistant/chunk',
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'request/header',
  'user/message',
  'context/message',
  'assistant/message',
  'tool/call',
  'tool/result',
  'compaction/start',
  'compaction/end',
  // Added later, so last: a code never moves. A database seeded before it gives the type the
  // next free code on first use, as it does any application type.
  'request/retry',
  // Steering, follow-ups and context overflow: appended after request/retry, for the same
  // reason. No SCHEMA_VERSION bump: the codes of a database live in its own table.
  'request/overflow',
  'queue/steer',
  'queue/follow-up',
  // Governance (redaction and the hash chain's checkpoints), last for the same reason.
  'log/redaction',
  'log/checkpoint',
] as const;

/** The ledger a database is paired with (at most one row; `pairing.ts`). */
const PAIRING_DDL = `CREATE TABLE ledger_pairing (
  slot INTEGER PRIMARY KEY CHECK (slot = 0),
  ledger_id TEXT NOT NULL,
  paired_at INTEGER NOT NULL
) STRICT;`;

/**
 * Sessions, their events and writer locks. `sessions.header` is the full header JSON;
 * `next_seq` is the number of events, `created_at` orders `list`. In `events`, `session_id` is
 * the session's integer `sessions.key`, `type` the code of the event type in `event_types`, and
 * `data`, `source_event_seqs` and `surface_op` are JSON text, the last two NULL when the event
 * has no such field. The view `session_events` shows the events with the text session id and
 * the type name, for reading with the sqlite3 shell:
 *
 *   SELECT seq, type, data FROM session_events WHERE session_id = 'demo-1' ORDER BY seq;
 *
 * The layout is chosen by file size, measured on the workload of `npm run bench:store` (figure
 * 5b: one 5,000-turn session, 1.02M events, 236 MiB as JSONL; the same rows inserted one turn
 * per transaction into each layout; sizes as a ratio to the JSONL bytes). Schema 1 stored the
 * text session id and the type name in every row, on 4 KiB pages: 1.08x.
 *
 * - The session id as an integer key: the text id was repeated in every row and in every entry
 *   of the primary-key index; key 1 takes no payload byte at all. 0.98x.
 * - The type as a code: the name took ~15 bytes per row, 6% of the events' JSON. With the key,
 *   0.93x. This is the change that costs readability, hence the `session_events` view.
 * - 8 KiB pages: appending a row that does not fit in the last leaf starts a new leaf and leaves
 *   the rest of the old one empty. At 4 KiB the 2.3 KB tool results and the in-page parts of the
 *   spilled 9 KB messages left 12 MiB of such gaps; at 8 KiB the tool results fit and the
 *   messages spill whole overflow pages. With the key and the codes: 0.89x. 16 KiB measured
 *   1.05x (the messages stay in the leaf and leave 9 KB gaps), 64 KiB 0.94x.
 * - WITHOUT ROWID would drop the separate primary-key index (7% of the file), but its rows live
 *   in an index b-tree, which spills any row above about a quarter of a page to an overflow page
 *   of its own (mostly empty for a 2.3 KB tool result) and splits pages instead of appending to
 *   them: 0.98x at 4 KiB, 1.04x at 8 KiB, 1.06x at 16 KiB. At 64 KiB it measured 0.89x, no
 *   better than the rowid table at 8 KiB, while every commit would write whole 64 KiB pages to
 *   the WAL (a streaming live session commits every 50 ms). So `events` keeps its rowid.
 *
 * Version 3 adds `crc`, a CRC-32 per row (see `rows.ts`), because SQLite checks its pages'
 * structure but not their content: a flipped byte inside a value is read back as a different
 * value. About 5 bytes per row.
 *
 * Version 4 adds `chunk_runs`: when an `assistant/message` is appended, each run of consecutive
 * chunks it cites leaves `events` for one row there, holding their times and sizes as varints and
 * their data compressed (`chunk-runs.ts` gives the layout). A turn's 200 chunk rows became one
 * row a few kilobytes long; `session_events` shows the rows of `events` only, so a finished
 * message's chunks are read with palimpsest (`palimpsest show`, `export`), not the sqlite3 shell.
 *
 * Version 5 pairs the database with its ledger (`pairing.ts`): `ledger_pairing` holds the
 * identity of the ledger the database was paired with, and `sessions.vouched` how many events of
 * the session the ledger durably recorded when its row was last written (-1: none yet). Both
 * change nothing on the write path but one integer in a row each append rewrites anyway.
 *
 * Insert speed barely moved between these layouts; `bench/store.ts` compares the store with raw
 * inserts into this same DDL. `seq` and `time` stay plain integers and `data` plain JSON text,
 * as in the JSONL log.
 */
export const SCHEMA_DDL = `
CREATE TABLE sessions (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  header TEXT NOT NULL,
  next_seq INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  crc INTEGER NOT NULL,
  vouched INTEGER NOT NULL DEFAULT -1
) STRICT;
CREATE INDEX sessions_by_created ON sessions (created_at DESC, id);
CREATE TABLE event_types (
  code INTEGER PRIMARY KEY,
  type TEXT NOT NULL UNIQUE
) STRICT;
INSERT INTO event_types (code, type) VALUES
  ${SEEDED_TYPES.map((type, code) => `(${code}, '${type}')`).join(',\n  ')};
CREATE TABLE events (
  session_id INTEGER NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  type INTEGER NOT NULL REFERENCES event_types (code),
  time INTEGER NOT NULL,
  data TEXT NOT NULL,
  source_event_seqs TEXT,
  surface_op TEXT,
  crc INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq)
) STRICT;
CREATE INDEX events_surface ON events (session_id, seq) WHERE surface_op IS NOT NULL;
CREATE TABLE chunk_runs (
  session_id INTEGER NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
  first_seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  time INTEGER NOT NULL,
  times BLOB NOT NULL,
  sizes BLOB NOT NULL,
  data BLOB NOT NULL,
  crc INTEGER NOT NULL,
  PRIMARY KEY (session_id, first_seq)
) STRICT;
CREATE VIEW session_events AS
SELECT sessions.id AS session_id, events.seq, event_types.type, events.time, events.data,
  events.source_event_seqs, events.surface_op
FROM events
JOIN sessions ON sessions.key = events.session_id
JOIN event_types ON event_types.code = events.type;
CREATE TABLE locks (
  session_id TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL
) STRICT;
${PAIRING_DDL}
PRAGMA application_id = ${APPLICATION_ID};
PRAGMA user_version = ${SCHEMA_VERSION};
`;

/**
 * Turns a database of {@link PREVIOUS_SCHEMA_VERSION} into one of {@link SCHEMA_VERSION}, inside
 * the caller's write transaction: the same columns, in the same order, as a new database has.
 * The pairing row and the sessions' `vouched` are the caller's to fill (`pairing.ts`).
 */
export const MIGRATION_DDL = `
ALTER TABLE sessions ADD COLUMN vouched INTEGER NOT NULL DEFAULT -1;
${PAIRING_DDL}
PRAGMA user_version = ${SCHEMA_VERSION};
`;

const PREVIOUS_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  sessions: ['key', 'id', 'created_at', 'header', 'next_seq', 'updated_at', 'crc'],
  event_types: ['code', 'type'],
  events: ['session_id', 'seq', 'type', 'time', 'data', 'source_event_seqs', 'surface_op', 'crc'],
  chunk_runs: ['session_id', 'first_seq', 'count', 'time', 'times', 'sizes', 'data', 'crc'],
  session_events: ['session_id', 'seq', 'type', 'time', 'data', 'source_event_seqs', 'surface_op'],
  locks: ['session_id', 'owner'],
};

const COLUMNS: Readonly<Record<string, readonly string[]>> = {
  ...PREVIOUS_COLUMNS,
  sessions: [...(PREVIOUS_COLUMNS.sessions ?? []), 'vouched'],
  ledger_pairing: ['slot', 'ledger_id', 'paired_at'],
};

/** What a database says about itself, read without writing anything. */
export interface DatabaseIdentity {
  readonly applicationId: number;
  readonly userVersion: number;
  /** The schema objects found, for messages (`table 'foo', index 'bar'`); absent when none. */
  readonly objects?: string;
  /** Read from the file header: whether the database is in WAL mode. */
  readonly wal?: boolean;
}

/** Reads the identity pragmas and the first few schema objects through a connection. */
export function readIdentity(db: SqliteDatabase): DatabaseIdentity {
  const objects = db
    .prepare("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' LIMIT 4")
    .all() as { type: string; name: string }[];
  return {
    applicationId: Number(db.pragma('application_id', { simple: true })),
    userVersion: Number(db.pragma('user_version', { simple: true })),
    ...(objects.length === 0
      ? {}
      : { objects: objects.map((row) => `${row.type} '${row.name.slice(0, 40)}'`).join(', ') }),
  };
}

const MAGIC = 'SQLite format 3\0';

/**
 * Reads the identity from the database file's header with plain file reads, so that a database
 * can be refused without SQLite touching it (even a read-only connection creates the `-wal` and
 * `-shm` files of a WAL database). `undefined` for an empty file. The header may lag behind a
 * WAL the file's writer has not checkpointed: the read-write connection checks again.
 *
 * @throws InvalidStoreError when the file is not a SQLite database.
 */
export function readFileIdentity(path: string): DatabaseIdentity | undefined {
  // The 100-byte database header, then the b-tree page header of page 1 (the schema table).
  const head = Buffer.alloc(108);
  let size: number;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    size = readSync(fd, head, 0, head.length, 0);
  } catch (error) {
    throw new StorageError(`cannot read ${path}`, { cause: error });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (size === 0) return undefined;
  if (size < head.length || head.toString('latin1', 0, 16) !== MAGIC) {
    throw new InvalidStoreError(
      'NOT_A_STORE',
      `${path} is not a SQLite database; it was not modified`,
    );
  }
  const pageType = head.readUInt8(100);
  const cells = head.readUInt16BE(103);
  const objects =
    pageType === 0x0d ? (cells === 0 ? undefined : `${cells} schema objects`) : 'schema objects';
  return {
    userVersion: head.readInt32BE(60),
    applicationId: head.readInt32BE(68),
    wal: head.readUInt8(18) === 2,
    ...(objects === undefined ? {} : { objects }),
  };
}

/**
 * `'pristine'` for an empty database (no schema, no identity), `'current'` for one of ours at
 * this schema version, `'previous'` for one at {@link PREVIOUS_SCHEMA_VERSION}. Anything else is
 * refused, naming what was found.
 *
 * @throws FormatVersionError for a palimpsest database of another schema version;
 *   InvalidStoreError for a database of another application.
 */
export function classify(
  identity: DatabaseIdentity,
  file: string,
): 'pristine' | 'current' | 'previous' {
  const { applicationId, userVersion, objects } = identity;
  if (applicationId === APPLICATION_ID) {
    if (userVersion === PREVIOUS_SCHEMA_VERSION) return 'previous';
    if (userVersion !== SCHEMA_VERSION) {
      throw new FormatVersionError(file, userVersion, SCHEMA_VERSION, 'schema version');
    }
    return 'current';
  }
  if (applicationId === 0 && userVersion === 0) {
    if (objects === undefined) return 'pristine';
    throw new InvalidStoreError(
      'NOT_A_STORE',
      `${file} is a SQLite database of another application (no application_id or user_version, but ${objects}); it was not modified`,
    );
  }
  throw new InvalidStoreError(
    'NOT_A_STORE',
    `${file} is a SQLite database of another application (application_id ${applicationId}, user_version ${userVersion}; palimpsest uses application_id ${APPLICATION_ID}); it was not modified`,
  );
}

/**
 * Checks that a database claiming to be ours has the tables and columns its version writes.
 *
 * @throws CorruptLogError naming the first table that differs: a database that says it is
 *   palimpsest's at this version and is not has been damaged.
 */
export function checkTables(
  db: SqliteDatabase,
  file: string,
  version: ReadableSchema = SCHEMA_VERSION,
): void {
  const columnsOf = db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid');
  const tables = version === SCHEMA_VERSION ? COLUMNS : PREVIOUS_COLUMNS;
  for (const [table, expected] of Object.entries(tables)) {
    const found = (columnsOf.all(table) as { name: string }[]).map((row) => row.name);
    if (found.join(',') !== expected.join(',')) {
      throw new CorruptLogError({
        file,
        reason: `the schema is damaged: the database claims palimpsest schema version ${version}, but table '${table}' has ${
          found.length === 0 ? 'no columns' : `columns (${found.join(', ')})`
        } instead of (${expected.join(', ')}); it was not modified`,
      });
    }
  }
}

/**
 * Sets the page size of a database that has no pages yet; a no-op on any other (call outside a
 * transaction: inside one, SQLite ignores it).
 */
export function setPageSize(db: SqliteDatabase): void {
  db.pragma(`page_size = ${PAGE_SIZE}`, { simple: true });
}

/** Creates the tables and sets the identity pragmas (call inside a write transaction). */
export function createSchema(db: SqliteDatabase): void {
  db.exec(SCHEMA_DDL);
}

/** How the connection is configured, as read back from SQLite after setting it. */
export interface SqliteSettings {
  /** Always `'wal'`. */
  readonly journalMode: string;
  /** `2` (FULL: a resolved append survives power loss) or `1` (NORMAL: survives a crash). */
  readonly synchronous: number;
  readonly foreignKeys: boolean;
  readonly busyTimeoutMs: number;
}

function readBack(db: SqliteDatabase): SqliteSettings {
  return {
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: Number(db.pragma('synchronous', { simple: true })),
    foreignKeys: Number(db.pragma('foreign_keys', { simple: true })) === 1,
    busyTimeoutMs: Number(db.pragma('busy_timeout', { simple: true })),
  };
}

/**
 * The pragmas of a read-only connection: only those that change the connection, none that
 * write to the file (`journal_mode = WAL` would, on a database not in WAL mode yet).
 */
export function readSettings(db: SqliteDatabase, busyTimeoutMs: number): SqliteSettings {
  db.pragma(`busy_timeout = ${busyTimeoutMs}`, { simple: true });
  db.pragma('trusted_schema = OFF', { simple: true });
  db.pragma('query_only = ON', { simple: true });
  return readBack(db);
}

/** Sets and reads back the pragmas every connection of the store needs. */
export function configure(
  db: SqliteDatabase,
  file: string,
  options: { readonly synchronous: 'full' | 'normal'; readonly busyTimeoutMs: number },
): SqliteSettings {
  db.pragma(`busy_timeout = ${options.busyTimeoutMs}`, { simple: true });
  db.pragma('trusted_schema = OFF', { simple: true });
  db.pragma('foreign_keys = ON', { simple: true });
  // Deleted rows are overwritten with zeros, not left in free space: a deleted session (and the
  // chunk rows a run takes in) leaves no byte in the database once its WAL is checkpointed.
  db.pragma('secure_delete = ON', { simple: true });
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`, {
    simple: true,
  });
  db.pragma('journal_mode = WAL', { simple: true });
  const settings = readBack(db);
  const journalMode = settings.journalMode;
  const wanted = options.synchronous === 'full' ? 2 : 1;
  if (journalMode !== 'wal' || settings.synchronous !== wanted || !settings.foreignKeys) {
    throw new InvalidStoreError(
      'SETTINGS_REFUSED',
      `${file}: SQLite did not accept the settings palimpsest needs (journal_mode wal, synchronous ${wanted}, foreign_keys true), found journal_mode ${journalMode}, synchronous ${settings.synchronous}, foreign_keys ${String(settings.foreignKeys)}`,
    );
  }
  return settings;
}
