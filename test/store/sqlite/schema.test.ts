import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/core/index.js';
import {
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  StorageError,
} from '../../../src/store/contract/errors.js';
import {
  APPLICATION_ID,
  openSqliteStore,
  SCHEMA_VERSION,
} from '../../../src/store/sqlite/index.js';
import {
  loadDriver,
  PAGE_SIZE,
  PREVIOUS_SCHEMA_VERSION,
  SEEDED_TYPES,
} from '../../../src/store/sqlite/schema.js';
import {
  events,
  hashOf,
  header,
  listing,
  type RawDatabase,
  raw,
  rejection,
  useTempDir,
  withRaw,
} from './helpers.js';

const tempDir = useTempDir();

describe('a new database', () => {
  it('gets the schema version, the application id, WAL and synchronous=FULL', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await openSqliteStore(file);
    expect(store.location).toBe(`sqlite:${file}`);
    expect(store.settings).toEqual({
      journalMode: 'wal',
      synchronous: 2,
      foreignKeys: true,
      busyTimeoutMs: 5000,
    });
    await store.close();
    await withRaw(file, (db) => {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    });
  });

  it('uses synchronous=NORMAL and the busy timeout when asked', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await openSqliteStore(file, { synchronous: 'normal', busyTimeoutMs: 250 });
    expect(store.settings).toMatchObject({ synchronous: 1, busyTimeoutMs: 250 });
    await store.close();
  });

  it('has STRICT tables with the columns of the RFC, events keyed by the integer session key', async () => {
    const file = join(tempDir(), 'sessions.db');
    await (await openSqliteStore(file)).close();
    await withRaw(file, (db) => {
      const tables = db
        .prepare(
          "SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .all();
      expect(tables).toEqual([
        { name: 'chunk_runs', strict: 1 },
        { name: 'event_types', strict: 1 },
        { name: 'events', strict: 1 },
        { name: 'ledger_pairing', strict: 1 },
        { name: 'locks', strict: 1 },
        { name: 'session_events', strict: 0 },
        { name: 'sessions', strict: 1 },
      ]);
      const columns = db
        .prepare(
          'SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?) ORDER BY cid',
        )
        .all('events');
      expect(columns).toEqual([
        { name: 'session_id', type: 'INTEGER', not_null: 1, pk: 1 },
        { name: 'seq', type: 'INTEGER', not_null: 1, pk: 2 },
        { name: 'type', type: 'INTEGER', not_null: 1, pk: 0 },
        { name: 'time', type: 'INTEGER', not_null: 1, pk: 0 },
        { name: 'data', type: 'TEXT', not_null: 1, pk: 0 },
        { name: 'source_event_seqs', type: 'TEXT', not_null: 0, pk: 0 },
        { name: 'surface_op', type: 'TEXT', not_null: 0, pk: 0 },
        { name: 'crc', type: 'INTEGER', not_null: 1, pk: 0 },
      ]);
      const references = db
        .prepare(
          'SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"',
        )
        .all('events');
      expect(references).toEqual([
        { from: 'session_id', table: 'sessions', to: 'key', on_delete: 'CASCADE' },
        { from: 'type', table: 'event_types', to: 'code', on_delete: 'NO ACTION' },
      ]);
      expect(
        db
          .prepare(
            'SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?) ORDER BY cid',
          )
          .all('chunk_runs'),
      ).toEqual([
        { name: 'session_id', type: 'INTEGER', not_null: 1, pk: 1 },
        { name: 'first_seq', type: 'INTEGER', not_null: 1, pk: 2 },
        { name: 'count', type: 'INTEGER', not_null: 1, pk: 0 },
        { name: 'time', type: 'INTEGER', not_null: 1, pk: 0 },
        { name: 'times', type: 'BLOB', not_null: 1, pk: 0 },
        { name: 'sizes', type: 'BLOB', not_null: 1, pk: 0 },
        { name: 'data', type: 'BLOB', not_null: 1, pk: 0 },
        { name: 'crc', type: 'INTEGER', not_null: 1, pk: 0 },
      ]);
    });
  });

  it(`uses ${PAGE_SIZE}-byte pages`, async () => {
    const file = join(tempDir(), 'sessions.db');
    await (await openSqliteStore(file)).close();
    await withRaw(file, (db) => {
      expect(db.pragma('page_size', { simple: true })).toBe(PAGE_SIZE);
    });
  });

  it('gives the core event types fixed codes, assistant/chunk the code 0', async () => {
    const file = join(tempDir(), 'sessions.db');
    await (await openSqliteStore(file)).close();
    await withRaw(file, (db) => {
      const types = db.prepare('SELECT code, type FROM event_types ORDER BY code').all();
      expect(types).toHaveLength(SEEDED_TYPES.length);
      expect(types[0]).toEqual({ code: 0, type: 'assistant/chunk' });
      expect(types).toContainEqual({ code: 6, type: 'user/message' });
    });
  });

  it('shows the text session id and the type name in the session_events view', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await openSqliteStore(file);
    await store.create(header('first'));
    await store.create(header('second'));
    await store.append('second', events(0, 2), { expectedSeq: 0 });
    await store.close();
    await withRaw(file, (db) => {
      expect(db.prepare('SELECT session_id, seq, type FROM events ORDER BY seq').all()).toEqual([
        { session_id: 2, seq: 0, type: 6 },
        // The first type outside the vocabulary gets the first code after the seeded ones.
        { session_id: 2, seq: 1, type: SEEDED_TYPES.length },
      ]);
      expect(
        db
          .prepare(
            "SELECT session_id, seq, type, time, data, surface_op FROM session_events WHERE session_id = 'second' ORDER BY seq",
          )
          .all(),
      ).toEqual([
        {
          session_id: 'second',
          seq: 0,
          type: 'user/message',
          time: 1000,
          data: '{"id":"u0","role":"user","content":[{"type":"text","text":"hi 0"}]}',
          surface_op: '"append"',
        },
        {
          session_id: 'second',
          seq: 1,
          type: 'app/note',
          time: 1001,
          data: '{"n":1}',
          surface_op: null,
        },
      ]);
    });
  });

  it('is created with mode 0600 in a directory created with mode 0700, and so are its WAL files', async () => {
    const dir = join(tempDir(), 'nested', 'deeper');
    const file = join(dir, 'sessions.db');
    const store = await openSqliteStore(file);
    await store.create(header('s'));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of ['sessions.db', 'sessions.db-wal', 'sessions.db-shm']) {
      expect(statSync(join(dir, name)).mode & 0o777, name).toBe(0o600);
    }
    await store.close();
  });

  it('initializes an existing empty file', async () => {
    const file = join(tempDir(), 'empty.db');
    writeFileSync(file, '');
    const store = await openSqliteStore(file);
    await store.create(header('s'));
    await store.close();
    await withRaw(file, (db) => {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    });
  });

  it('keeps its sessions when reopened', async () => {
    const file = join(tempDir(), 'sessions.db');
    const first = await openSqliteStore(file);
    await first.create(header('s'));
    await first.append('s', events(0, 4), { expectedSeq: 0 });
    await first.close();
    const second = await openSqliteStore(file);
    expect((await second.load('s')).events).toEqual(events(0, 4));
    await second.close();
  });
});

describe('the surface index', () => {
  it('exists as a partial index, and a resume query on surface_op IS NOT NULL uses it', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await openSqliteStore(file);
    await store.create(header('s'));
    await store.append('s', events(0, 30), { expectedSeq: 0 });
    await store.close();
    await withRaw(file, (db) => {
      const index = db
        .prepare("SELECT sql FROM sqlite_schema WHERE name = 'events_surface'")
        .get() as {
        sql: string;
      };
      expect(index.sql).toMatch(/ON events \(session_id, seq\) WHERE surface_op IS NOT NULL/);
      const { key } = db.prepare("SELECT key FROM sessions WHERE id = 's'").get() as {
        key: number;
      };
      const plan = db
        .prepare(
          'EXPLAIN QUERY PLAN SELECT seq, type, data, surface_op FROM events WHERE session_id = ? AND surface_op IS NOT NULL ORDER BY seq',
        )
        .all(key) as { detail: string }[];
      expect(plan.map((step) => step.detail)).toEqual([
        'SEARCH events USING INDEX events_surface (session_id=?)',
      ]);
      const surface = db
        .prepare(
          'SELECT seq FROM events WHERE session_id = ? AND surface_op IS NOT NULL ORDER BY seq',
        )
        .all(key) as { seq: number }[];
      expect(surface.map((row) => row.seq)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
    });
  });
});

describe('bump-and-reject: a database of another version or application', () => {
  /** Creates a rollback-journal database with the given identity and one table. */
  async function foreign(
    identity: { applicationId?: number; userVersion?: number },
    ddl = 'CREATE TABLE t (x)',
  ): Promise<string> {
    const file = join(tempDir(), 'other.db');
    await withRaw(file, (db) => {
      db.exec(ddl);
      if (identity.applicationId !== undefined) {
        db.pragma(`application_id = ${identity.applicationId}`);
      }
      if (identity.userVersion !== undefined) db.pragma(`user_version = ${identity.userVersion}`);
    });
    return file;
  }

  /** Opens `file`, expects a refusal, and checks the file and its directory are unchanged. */
  async function refusal(file: string): Promise<unknown> {
    const before = hashOf(file);
    const names = listing(join(file, '..'));
    const error = await rejection(openSqliteStore(file));
    expect(hashOf(file)).toBe(before);
    expect(listing(join(file, '..'))).toEqual(names);
    return error;
  }

  it('refuses a newer schema version, saying so, without modifying the file', async () => {
    const file = await foreign({ applicationId: APPLICATION_ID, userVersion: SCHEMA_VERSION + 1 });
    const error = await refusal(file);
    expect(error).toBeInstanceOf(FormatVersionError);
    expect(error).toMatchObject({
      direction: 'newer',
      found: SCHEMA_VERSION + 1,
      supported: SCHEMA_VERSION,
      file,
    });
    expect((error as Error).message).toMatch(
      new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer .* upgrade palimpsest`),
    );
  });

  it('refuses a schema version older than the previous one, without modifying it', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await openSqliteStore(file);
    await store.create(header('s'));
    await store.append('s', events(0, 3), { expectedSeq: 0 });
    await store.close();
    await withRaw(file, (db) => db.pragma(`user_version = ${PREVIOUS_SCHEMA_VERSION - 1}`));
    const error = await refusal(file);
    expect(error).toBeInstanceOf(FormatVersionError);
    expect(error).toMatchObject({ direction: 'older', found: PREVIOUS_SCHEMA_VERSION - 1 });
  });

  /** The DDL schema version 1 wrote, kept verbatim: the layout a schema-1 database has. */
  const SCHEMA_1_DDL = `
    CREATE TABLE sessions (
      id TEXT NOT NULL PRIMARY KEY,
      created_at INTEGER NOT NULL,
      header TEXT NOT NULL,
      next_seq INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX sessions_by_created ON sessions (created_at DESC, id);
    CREATE TABLE events (
      session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      time INTEGER NOT NULL,
      data TEXT NOT NULL,
      source_event_seqs TEXT,
      surface_op TEXT,
      PRIMARY KEY (session_id, seq)
    ) STRICT;
    CREATE INDEX events_surface ON events (session_id, seq) WHERE surface_op IS NOT NULL;
    CREATE TABLE locks (
      session_id TEXT NOT NULL PRIMARY KEY,
      owner TEXT NOT NULL
    ) STRICT;
    PRAGMA application_id = ${APPLICATION_ID};
    PRAGMA user_version = 1;
  `;

  /** Writes a schema-1 database as version 1 of the store did: schema, then WAL, one session. */
  function writeSchema1(db: RawDatabase): void {
    db.exec(SCHEMA_1_DDL);
    db.pragma('journal_mode = WAL');
    db.prepare(
      'INSERT INTO sessions VALUES (\'s\', 1700000000000, \'{"version":1,"id":"s","createdAt":1700000000000}\', 1, 1700000000000)',
    ).run();
    db.prepare(`INSERT INTO events VALUES ('s', 0, 'app/note', 1000, '{"n":0}', NULL, NULL)`).run();
  }

  it('refuses a schema-1 database as older, without modifying it', async () => {
    const file = join(tempDir(), 'sessions.db');
    await withRaw(file, writeSchema1);
    const error = await refusal(file);
    expect(error).toBeInstanceOf(FormatVersionError);
    expect(error).toMatchObject({ direction: 'older', found: 1, supported: SCHEMA_VERSION, file });
    expect((error as Error).message).toBe(
      `${file} was written with schema version 1; this log is older than any supported format (${SCHEMA_VERSION})`,
    );
  });

  it('refuses a schema-1 database whose WAL a live writer has not checkpointed, without modifying it', async () => {
    const file = join(tempDir(), 'sessions.db');
    const writer = await raw(file);
    try {
      writer.pragma('wal_autocheckpoint = 0');
      writeSchema1(writer);
      const wal = hashOf(`${file}-wal`);
      const error = await refusal(file);
      expect(error).toMatchObject({ code: 'FORMAT_VERSION', direction: 'older', found: 1 });
      expect(hashOf(`${file}-wal`)).toBe(wal);
      expect(writer.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 1 });
    } finally {
      writer.close();
    }
  });

  it('refuses a foreign application_id, naming it', async () => {
    const file = await foreign({ applicationId: 0x12345678, userVersion: SCHEMA_VERSION });
    const error = await refusal(file);
    expect(error).toBeInstanceOf(InvalidStoreError);
    expect((error as Error).message).toContain(`application_id ${0x12345678}`);
  });

  it('refuses an unversioned database that has tables, naming them', async () => {
    const file = await foreign({}, 'CREATE TABLE events (x); CREATE TABLE accounts (y)');
    const error = await refusal(file);
    expect(error).toBeInstanceOf(InvalidStoreError);
    expect((error as Error).message).toMatch(
      /table 'events'.*table 'accounts'|table 'accounts'.*table 'events'/,
    );
  });

  it('refuses an unversioned WAL database that has tables, counting them, and creates no WAL files', async () => {
    const file = await foreign(
      {},
      'PRAGMA journal_mode = WAL; CREATE TABLE a (x); CREATE TABLE b (y)',
    );
    const error = await refusal(file);
    expect(error).toBeInstanceOf(InvalidStoreError);
    expect((error as Error).message).toContain(
      'no application_id or user_version, but 2 schema objects',
    );
  });

  it('refuses a database with our identity whose tables differ, as damaged (no palimpsest writes one)', async () => {
    const file = await foreign(
      { applicationId: APPLICATION_ID, userVersion: SCHEMA_VERSION },
      'CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER, header TEXT, next_seq INTEGER)',
    );
    const error = await refusal(file);
    expect(error).toBeInstanceOf(CorruptLogError);
    expect((error as Error).message).toContain(
      "table 'sessions' has columns (id, created_at, header, next_seq)",
    );
  });

  it('refuses a file that is not a SQLite database', async () => {
    const file = join(tempDir(), 'notes.db');
    writeFileSync(file, 'these are not the pages you are looking for\n'.repeat(200));
    const error = await refusal(file);
    expect(error).toBeInstanceOf(InvalidStoreError);
    expect((error as Error).message).toContain('is not a SQLite database');
  });

  it('refuses a directory in place of the file', async () => {
    const file = join(tempDir(), 'dir.db');
    mkdirSync(file);
    expect(await rejection(openSqliteStore(file))).toBeInstanceOf(InvalidStoreError);
  });
});

describe('options and the driver', () => {
  it('refuses bad options before touching the disk', async () => {
    const file = join(tempDir(), 'never.db');
    for (const options of [
      { synchronous: 'off' as never },
      { busyTimeoutMs: -1 },
      { busyTimeoutMs: 1.5 },
    ]) {
      expect(await rejection(openSqliteStore(file, options))).toBeInstanceOf(InvalidArgumentError);
    }
    expect(await rejection(openSqliteStore(''))).toBeInstanceOf(InvalidArgumentError);
    expect(listing(join(file, '..'))).toEqual([]);
  });

  it('tells how to install the driver when it is missing', async () => {
    const error = await rejection(loadDriver('better-sqlite3-not-installed'));
    expect(error).toBeInstanceOf(InvalidStoreError);
    expect((error as Error).message).toBe('install better-sqlite3@12 to use sqlite: stores');
  });

  it('reports a parent path that cannot be a directory as a StorageError', async () => {
    const blocker = join(tempDir(), 'file');
    writeFileSync(blocker, '');
    const error = await rejection(openSqliteStore(join(blocker, 'sessions.db')));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).cause).toMatchObject({ code: expect.stringMatching(/^E/) });
  });
});
