/**
 * palimpsest/sqlite — sessions in one SQLite file, through better-sqlite3 12.x (an optional peer
 * dependency, loaded when a store is opened).
 *
 * Every append is one `BEGIN IMMEDIATE` transaction that checks the expected seq before writing,
 * so a resolved append is whole and, with the default `synchronous: 'full'` in WAL mode, survives
 * power loss. A database written by another schema version is refused and left untouched.
 *
 * @packageDocumentation
 */
import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  PalimpsestError,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
  validateHeader,
} from '../../core/index.js';
import type {
  AppendOptions,
  ListOptions,
  LoadedSession,
  SessionLock,
  SessionPage,
  SessionStore,
  SessionSummary,
  TornTail,
} from '../contract.js';
import {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  LockedError,
  type LockOwner,
  NotFoundError,
  StorageError,
} from '../errors.js';
import { currentOwner, isOwnerAlive, parseOwner } from '../lock-owner.js';
import { checkBatch, checkSessionId, decodeCursor, encodeCursor } from '../store-rules.js';
import {
  checkTables,
  classify,
  configure,
  createSchema,
  loadDriver,
  readFileIdentity,
  readIdentity,
  type SqliteDatabase,
  type SqliteDriver,
  type SqliteSettings,
  type SqliteStatement,
  type SqliteTransaction,
} from './schema.js';

export { APPLICATION_ID, SCHEMA_VERSION, type SqliteSettings } from './schema.js';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * `'full'` (default): a resolved append survives power loss. `'normal'`: it survives a crash
   * of the process, but the last transactions may roll back after a power loss.
   */
  readonly synchronous?: 'full' | 'normal';
  /** How long a write waits for another connection's transaction, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
  /**
   * Called at named points of a write, for crash tests: `'append:before-commit'` (inside the
   * transaction), `'append:after-commit'` (before the append resolves) and
   * `'lock:after-acquire'`. A throw from the hook fails the operation like a storage error.
   */
  readonly failpoint?: (name: string) => void;
}

/**
 * Opens (creating if needed) the SQLite database at `file`. A missing parent directory is
 * created with mode 0700 and a new database file with mode 0600.
 *
 * @throws FormatVersionError for a palimpsest database of another schema version;
 *   InvalidStoreError for a file that is not a palimpsest database, bad options or a missing
 *   driver; StorageError when the file cannot be opened. A refused file is not modified.
 */
export function openSqliteStore(
  file: string,
  options: SqliteStoreOptions = {},
): Promise<SqliteStore> {
  return SqliteStore.open(file, options);
}

interface SessionRow {
  readonly id: string;
  readonly header: string;
  readonly created_at: number;
  readonly next_seq: number;
  readonly updated_at: number;
}

interface EventRow {
  readonly seq: number;
  readonly type: string;
  readonly time: number;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
}

interface Statements {
  readonly insertSession: SqliteStatement;
  readonly nextSeq: SqliteStatement;
  readonly insertEvent: SqliteStatement;
  readonly advance: SqliteStatement;
  readonly session: SqliteStatement;
  readonly events: SqliteStatement;
  readonly firstPage: SqliteStatement;
  readonly pageAfter: SqliteStatement;
  readonly lockRow: SqliteStatement;
  readonly putLock: SqliteStatement;
  readonly dropLock: SqliteStatement;
  readonly deleteEvents: SqliteStatement;
  readonly deleteSession: SqliteStatement;
  readonly deleteLock: SqliteStatement;
}

/** SQL function ordering ids by UTF-16 code units, as JavaScript (and `list` cursors) do. */
const ID_ORDER = 'palimpsest_id_order';
const DEFAULT_PAGE = 100;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const noFailpoint = (): void => {};

/** A {@link SessionStore} in one SQLite file. Open it with {@link openSqliteStore}. */
export class SqliteStore implements SessionStore {
  /** `sqlite:` and the absolute path of the database file. */
  readonly location: string;
  /** The pragmas of the connection, read back after setting them. */
  readonly settings: SqliteSettings;
  readonly #file: string;
  readonly #db: SqliteDatabase;
  readonly #sql: Statements;
  readonly #failpoint: (name: string) => void;
  readonly #append: SqliteTransaction<[string, readonly SessionEvent[], number], void>;
  readonly #load: SqliteTransaction<[string], LoadedSession>;
  /** Locks this store took and still holds: session id → stored owner JSON. */
  readonly #held = new Map<string, string>();
  #closed = false;

  private constructor(
    file: string,
    db: SqliteDatabase,
    settings: SqliteSettings,
    failpoint: (name: string) => void,
  ) {
    this.#file = file;
    this.location = `sqlite:${file}`;
    this.#db = db;
    this.settings = settings;
    this.#failpoint = failpoint;
    db.function(ID_ORDER, { deterministic: true }, (id) =>
      Buffer.from(String(id), 'utf16le').swap16(),
    );
    const summary = 'SELECT id, header, created_at, next_seq, updated_at FROM sessions';
    const order = `ORDER BY created_at DESC, ${ID_ORDER}(id) ASC LIMIT @limit`;
    this.#sql = {
      insertSession: db.prepare(
        'INSERT INTO sessions (id, created_at, header, next_seq, updated_at) VALUES (?, ?, ?, 0, ?)',
      ),
      nextSeq: db.prepare('SELECT next_seq FROM sessions WHERE id = ?'),
      insertEvent: db.prepare(
        'INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      advance: db.prepare('UPDATE sessions SET next_seq = ?, updated_at = ? WHERE id = ?'),
      session: db.prepare(`${summary} WHERE id = ?`),
      events: db.prepare(
        'SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq',
      ),
      firstPage: db.prepare(`${summary} ${order}`),
      pageAfter: db.prepare(
        `${summary} WHERE created_at < @createdAt OR (created_at = @createdAt AND ${ID_ORDER}(id) > ${ID_ORDER}(@id)) ${order}`,
      ),
      lockRow: db.prepare('SELECT owner FROM locks WHERE session_id = ?'),
      putLock: db.prepare('INSERT OR REPLACE INTO locks (session_id, owner) VALUES (?, ?)'),
      dropLock: db.prepare('DELETE FROM locks WHERE session_id = ? AND owner = ?'),
      deleteEvents: db.prepare('DELETE FROM events WHERE session_id = ?'),
      deleteSession: db.prepare('DELETE FROM sessions WHERE id = ?'),
      deleteLock: db.prepare('DELETE FROM locks WHERE session_id = ?'),
    };
    this.#append = db.transaction((id: string, events: readonly SessionEvent[], expected: number) =>
      this.#appendInTransaction(id, events, expected),
    );
    this.#load = db.transaction((id: string) => this.#loadInTransaction(id));
  }

  /** Same as {@link openSqliteStore}. */
  static async open(file: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const synchronous = options.synchronous ?? 'full';
    if (synchronous !== 'full' && synchronous !== 'normal') {
      throw new InvalidStoreError(
        `sqlite option synchronous must be 'full' or 'normal', found ${String(synchronous)}`,
      );
    }
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2 ** 31 - 1) {
      throw new InvalidStoreError(
        `sqlite option busyTimeoutMs must be a non-negative integer, found ${String(busyTimeoutMs)}`,
      );
    }
    if (typeof file !== 'string' || file === '') {
      throw new InvalidStoreError('sqlite store needs a database file path');
    }
    const path = resolve(file);
    const Database = await loadDriver();
    const existing = prepareFile(Database, path);
    let db: SqliteDatabase | undefined;
    try {
      db = connect(Database, path, { fileMustExist: true, timeout: busyTimeoutMs });
      const connection = db;
      // Checked again on this connection, before any pragma writes: the file header may lag
      // behind an uncheckpointed WAL, and another process may have created the schema since.
      const check = connection.transaction(() => {
        if (classify(readIdentity(connection), path) === 'pristine') createSchema(connection);
        checkTables(connection, path);
      });
      driverCall(path, 'open', () => (existing === 'pristine' ? check.immediate() : check()));
      const settings = driverCall(path, 'open', () =>
        configure(connection, path, { synchronous, busyTimeoutMs }),
      );
      const failpoint = options.failpoint ?? noFailpoint;
      return driverCall(path, 'open', () => new SqliteStore(path, connection, settings, failpoint));
    } catch (error) {
      try {
        db?.close();
      } catch {
        // The open already failed; that error is the one to report.
      }
      throw error;
    }
  }

  async create(header: SessionHeader): Promise<void> {
    this.#assertOpen();
    checkSessionId(header.id);
    const valid = validateHeader(header);
    const now = Date.now();
    try {
      this.#sql.insertSession.run(valid.id, valid.createdAt, JSON.stringify(valid), now);
    } catch (error) {
      if (driverCode(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new AlreadyExistsError(valid.id, this.location);
      }
      throw this.#storageError(`create session '${valid.id}'`, error);
    }
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    this.#assertOpen();
    checkSessionId(id);
    checkBatch(id, events, options);
    const expected = options.expectedSeq;
    try {
      if (events.length === 0) {
        this.#checkNext(id, expected);
        return;
      }
      this.#append.immediate(id, events, expected);
      this.#failpoint('append:after-commit');
    } catch (error) {
      throw this.#storageError(`append to session '${id}'`, error);
    }
  }

  async load(id: string): Promise<LoadedSession> {
    this.#assertOpen();
    checkSessionId(id);
    try {
      return this.#load(id);
    } catch (error) {
      if (driverCode(error)?.startsWith('SQLITE_CORRUPT') === true) {
        throw new CorruptLogError(
          {
            file: this.#file,
            reason: `SQLite reports the database damaged (${driverCode(error)})`,
          },
          { cause: error },
        );
      }
      throw this.#storageError(`load session '${id}'`, error);
    }
  }

  async list(options: ListOptions = {}): Promise<SessionPage> {
    this.#assertOpen();
    const limit = options.limit ?? DEFAULT_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new InvalidStoreError(`list limit must be a positive integer, found ${String(limit)}`);
    }
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor).header;
    let rows: SessionRow[];
    try {
      rows = (
        after === undefined
          ? this.#sql.firstPage.all({ limit: limit + 1 })
          : this.#sql.pageAfter.all({ ...after, limit: limit + 1 })
      ) as SessionRow[];
    } catch (error) {
      throw this.#storageError('list sessions', error);
    }
    const sessions: SessionSummary[] = rows.slice(0, limit).map((row) => ({
      header: this.#header(row),
      updatedAt: row.updated_at,
      eventCount: row.next_seq,
    }));
    const last = sessions.at(-1);
    return rows.length > limit && last !== undefined
      ? { sessions, nextCursor: encodeCursor(last) }
      : { sessions };
  }

  async delete(id: string): Promise<void> {
    this.#assertOpen();
    checkSessionId(id);
    try {
      this.#db
        .transaction(() => {
          if (this.#sql.nextSeq.get(id) === undefined) {
            throw new NotFoundError(id, this.location);
          }
          const owner = this.#liveOwner(id);
          if (owner !== undefined) throw new LockedError(id, owner);
          this.#sql.deleteEvents.run(id);
          this.#sql.deleteSession.run(id);
          this.#sql.deleteLock.run(id);
        })
        .immediate();
    } catch (error) {
      throw this.#storageError(`delete session '${id}'`, error);
    }
  }

  async lock(id: string): Promise<SessionLock> {
    this.#assertOpen();
    checkSessionId(id);
    const owner = currentOwner();
    const stored = JSON.stringify(owner);
    try {
      this.#db
        .transaction(() => {
          const holder = this.#liveOwner(id);
          if (holder !== undefined) throw new LockedError(id, holder);
          this.#sql.putLock.run(id, stored);
        })
        .immediate();
    } catch (error) {
      throw this.#storageError(`lock session '${id}'`, error);
    }
    this.#held.set(id, stored);
    try {
      this.#failpoint('lock:after-acquire');
    } catch (error) {
      this.#held.delete(id);
      try {
        this.#sql.dropLock.run(id, stored);
      } catch {
        // Left behind, the row is recovered once this process is gone.
      }
      throw this.#storageError(`lock session '${id}'`, error);
    }
    return {
      sessionId: id,
      owner,
      release: async () => {
        if (this.#closed || this.#held.get(id) !== stored) return;
        try {
          this.#sql.dropLock.run(id, stored);
        } catch (error) {
          throw this.#storageError(`release the lock of session '${id}'`, error);
        }
        this.#held.delete(id);
      },
    };
  }

  async discardTornTail(_id: string, _tail: TornTail, _lock: SessionLock): Promise<void> {
    // Each batch is one transaction: SQLite rolls back an interrupted one, so no tail is torn.
    this.#assertOpen();
  }

  /** Releases the locks this store holds and closes the connection. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let failure: unknown;
    for (const [id, stored] of this.#held) {
      try {
        this.#sql.dropLock.run(id, stored);
      } catch (error) {
        // A lock left behind is recovered by the next writer once this process is gone.
        failure ??= error;
      }
    }
    this.#held.clear();
    try {
      this.#db.close();
    } catch (error) {
      failure ??= error;
    }
    if (failure !== undefined) throw this.#storageError('close', failure);
  }

  #appendInTransaction(id: string, events: readonly SessionEvent[], expected: number): void {
    this.#checkNext(id, expected);
    const insert = this.#sql.insertEvent;
    for (const event of events) {
      const data = JSON.stringify(event.data) as string | undefined;
      if (data === undefined) {
        throw new InvalidStoreError(
          `append to session '${id}': event ${event.seq} (${event.type}) has no JSON data`,
        );
      }
      insert.run(
        id,
        event.seq,
        event.type,
        event.time,
        data,
        event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs),
        event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp),
      );
    }
    this.#sql.advance.run(expected + events.length, Date.now(), id);
    this.#failpoint('append:before-commit');
  }

  #checkNext(id: string, expected: number): void {
    const row = this.#sql.nextSeq.get(id) as { next_seq: number } | undefined;
    if (row === undefined) throw new NotFoundError(id, this.location);
    if (row.next_seq !== expected) throw new ConflictError(id, expected, row.next_seq);
  }

  #loadInTransaction(id: string): LoadedSession {
    const row = this.#sql.session.get(id) as SessionRow | undefined;
    if (row === undefined) throw new NotFoundError(id, this.location);
    const header = this.#header(row);
    const rows = this.#sql.events.all(id) as EventRow[];
    const events: SessionEvent[] = [];
    for (const eventRow of rows) {
      const expected = events.length;
      if (eventRow.seq !== expected) {
        throw this.#corrupt(
          expected,
          eventRow.seq > expected
            ? `session '${id}' has no event with seq ${expected} (the next row has seq ${eventRow.seq})`
            : `session '${id}' has an event row with seq ${eventRow.seq} out of order`,
        );
      }
      if (expected >= row.next_seq) {
        throw this.#corrupt(
          expected,
          `session '${id}' has an event row beyond its recorded length of ${row.next_seq}`,
        );
      }
      events.push(this.#event(id, eventRow));
    }
    if (events.length < row.next_seq) {
      throw this.#corrupt(
        events.length,
        `session '${id}' records ${row.next_seq} events but the rows end at seq ${events.length}`,
      );
    }
    return { header, events };
  }

  #event(id: string, row: EventRow): SessionEvent {
    const { seq } = row;
    const data = this.#parse(row.data, seq, `the data of session '${id}'`);
    let surfaceOp: unknown;
    if (row.surface_op !== null) {
      surfaceOp = this.#parse(row.surface_op, seq, `the surface_op of session '${id}'`);
      if (typeof surfaceOp !== 'string' && (typeof surfaceOp !== 'object' || surfaceOp === null)) {
        throw this.#corrupt(seq, `the surface_op of session '${id}' is not a surface op`);
      }
    }
    let sources: unknown;
    if (row.source_event_seqs !== null) {
      sources = this.#parse(row.source_event_seqs, seq, `the source_event_seqs of session '${id}'`);
      if (!Array.isArray(sources)) {
        throw this.#corrupt(seq, `the source_event_seqs of session '${id}' is not an array`);
      }
    }
    return {
      seq,
      time: row.time,
      type: row.type,
      data,
      ...(surfaceOp === undefined ? {} : { surfaceOp: surfaceOp as SessionEvent['surfaceOp'] }),
      ...(sources === undefined ? {} : { sourceEventSeqs: sources as number[] }),
    } as SessionEvent;
  }

  #parse(text: string, seq: number, what: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new CorruptLogError(
        { file: this.#file, row: seq, reason: `${what} is not valid JSON` },
        { cause: error },
      );
    }
  }

  /** Parses and checks a stored header. */
  #header(row: SessionRow): SessionHeader {
    const id = row.id;
    let value: unknown;
    try {
      value = JSON.parse(row.header);
    } catch (error) {
      throw new CorruptLogError(
        { file: this.#file, reason: `the header of session '${id}' is not valid JSON` },
        { cause: error },
      );
    }
    const version = (value as { version?: unknown } | null)?.version;
    if (
      typeof version === 'number' &&
      Number.isInteger(version) &&
      version !== SESSION_FORMAT_VERSION
    ) {
      throw new FormatVersionError(this.#file, version, SESSION_FORMAT_VERSION);
    }
    let header: SessionHeader;
    try {
      header = validateHeader(value, id);
    } catch (error) {
      throw new CorruptLogError(
        {
          file: this.#file,
          reason: `the header of session '${id}' is not a session header (${
            error instanceof Error ? error.message : String(error)
          })`,
        },
        { cause: error },
      );
    }
    if (header.createdAt !== row.created_at) {
      throw new CorruptLogError({
        file: this.#file,
        reason: `session '${header.id}' has created_at ${row.created_at} but its header says ${header.createdAt}`,
      });
    }
    return header;
  }

  /** The owner of the session's lock row if it is alive; a dead or unreadable one is stale. */
  #liveOwner(id: string): LockOwner | undefined {
    const row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
    if (row === undefined) return undefined;
    let owner: LockOwner | undefined;
    try {
      owner = parseOwner(JSON.parse(row.owner));
    } catch {
      owner = undefined;
    }
    return owner !== undefined && isOwnerAlive(owner) ? owner : undefined;
  }

  #corrupt(row: number, reason: string): CorruptLogError {
    return new CorruptLogError({ file: this.#file, row, reason });
  }

  /** Passes palimpsest's own errors through and wraps anything else (driver, hook) in one. */
  #storageError(action: string, error: unknown): Error {
    if (error instanceof PalimpsestError) return error;
    return new StorageError(`${action} in ${this.location} failed`, { cause: error });
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClosedError(`store ${this.location}`);
  }
}

/**
 * Makes sure the directory exists (0700 when created) and the database file too (0600 when
 * created), then reads the file's identity without opening it with SQLite, so that a database
 * of another version or application is refused untouched.
 */
function prepareFile(Database: SqliteDriver, path: string): 'pristine' | 'current' {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StorageError(`cannot create the directory of ${path}`, { cause: error });
  }
  try {
    closeSync(openSync(path, 'wx', 0o600));
    return 'pristine';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new StorageError(`cannot create ${path}`, { cause: error });
    }
  }
  if (!statSync(path).isFile()) throw new InvalidStoreError(`${path} is not a regular file`);
  const identity = readFileIdentity(path);
  if (identity === undefined) return 'pristine';
  if (identity.objects !== undefined && identity.applicationId === 0 && !identity.wal) {
    // An unversioned database: name its tables in the refusal. A read-only connection to a
    // rollback-journal database creates no file (to a WAL one it would: the count must do).
    const objects = nameObjects(Database, path);
    if (objects !== undefined) return classify({ ...identity, objects }, path);
  }
  return classify(identity, path);
}

/** The first schema objects of a database, through a read-only connection, if it can tell. */
function nameObjects(Database: SqliteDriver, path: string): string | undefined {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return readIdentity(db).objects;
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

function connect(
  Database: SqliteDriver,
  path: string,
  options: { readonly?: boolean; fileMustExist: boolean; timeout?: number },
): SqliteDatabase {
  return driverCall(path, 'open', () => new Database(path, options));
}

/** Runs a driver call during open, mapping its failures to typed errors. */
function driverCall<T>(path: string, action: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (error instanceof PalimpsestError) throw error;
    const code = driverCode(error);
    if (code === 'SQLITE_NOTADB') {
      throw new InvalidStoreError(`${path} is not a SQLite database; it was not modified`, {
        cause: error,
      });
    }
    if (code === undefined && error instanceof Error && /bindings|dlopen/i.test(error.message)) {
      throw new InvalidStoreError(
        'better-sqlite3 is installed but its native addon did not load; rebuild it (npm rebuild better-sqlite3)',
        { cause: error },
      );
    }
    throw new StorageError(`cannot ${action} ${path}`, { cause: error });
  }
}

function driverCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
