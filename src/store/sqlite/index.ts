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
  elidedChunkData,
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
  LoadOptions,
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
  setPageSize,
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
  readonly key: number;
  readonly id: string;
  readonly header: string;
  readonly created_at: number;
  readonly next_seq: number;
  readonly updated_at: number;
}

interface EventRow {
  readonly seq: number;
  /** The code of the type in `event_types`. */
  readonly type: number;
  readonly time: number;
  /** NULL only where a load eliding chunk bodies left it out (see `data_bytes`). */
  readonly data: string | null;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
  /** With elision, the byte length of the data that was left out. */
  readonly data_bytes?: number | null;
}

/** The integer key and the next seq of a session, read inside a transaction. */
interface SessionPosition {
  readonly key: number;
  readonly next_seq: number;
}

interface Statements {
  readonly insertSession: SqliteStatement;
  readonly nextSeq: SqliteStatement;
  readonly typeCode: SqliteStatement;
  readonly insertType: SqliteStatement;
  readonly types: SqliteStatement;
  readonly insertEvent: SqliteStatement;
  readonly advance: SqliteStatement;
  readonly session: SqliteStatement;
  readonly events: SqliteStatement;
  readonly eventsEliding: SqliteStatement;
  readonly eventData: SqliteStatement;
  readonly firstPage: SqliteStatement;
  readonly pageAfter: SqliteStatement;
  readonly lockRow: SqliteStatement;
  readonly putLock: SqliteStatement;
  readonly dropLock: SqliteStatement;
  readonly deleteEvents: SqliteStatement;
  readonly deleteSession: SqliteStatement;
  readonly deleteLock: SqliteStatement;
}

/** The type whose finished events a load may elide. */
const CHUNK_TYPE = 'assistant/chunk';
/** Unfinished chunks at most this many rows apart are read back with one query. */
const RESTORE_GAP_ROWS = 256;
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
  readonly #append: SqliteTransaction<
    [string, readonly SessionEvent[], number],
    ReadonlyMap<string, number>
  >;
  readonly #load: SqliteTransaction<[string, boolean], LoadedSession>;
  /**
   * Event type codes of `event_types`, both ways. Rows of that table are never changed or
   * deleted, so an entry read from a committed row stays true; entries are added only after the
   * transaction that read or inserted them has committed (a rolled-back code may be given to
   * another type by the next writer).
   */
  readonly #typeCodes = new Map<string, number>();
  readonly #typeNames = new Map<number, string>();
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
    const summary = 'SELECT key, id, header, created_at, next_seq, updated_at FROM sessions';
    const order = `ORDER BY created_at DESC, ${ID_ORDER}(id) ASC LIMIT @limit`;
    this.#sql = {
      insertSession: db.prepare(
        'INSERT INTO sessions (id, created_at, header, next_seq, updated_at) VALUES (?, ?, ?, 0, ?)',
      ),
      nextSeq: db.prepare('SELECT key, next_seq FROM sessions WHERE id = ?'),
      typeCode: db.prepare('SELECT code FROM event_types WHERE type = ?'),
      insertType: db.prepare('INSERT INTO event_types (type) VALUES (?) RETURNING code'),
      types: db.prepare('SELECT code, type FROM event_types'),
      insertEvent: db.prepare(
        'INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      advance: db.prepare('UPDATE sessions SET next_seq = ?, updated_at = ? WHERE key = ?'),
      session: db.prepare(`${summary} WHERE id = ?`),
      events: db.prepare(
        'SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq',
      ),
      // The data of a chunk without sources is left out (SQLite then never reads its bytes) and
      // only its length is read, from the record header (octet_length does not load the value).
      eventsEliding: db.prepare(
        `SELECT seq, type, time,
           CASE WHEN type = @chunk AND source_event_seqs IS NULL THEN NULL ELSE data END AS data,
           CASE WHEN type = @chunk AND source_event_seqs IS NULL THEN octet_length(data) END AS data_bytes,
           source_event_seqs, surface_op
         FROM events WHERE session_id = @key ORDER BY seq`,
      ),
      eventData: db.prepare(
        'SELECT seq, data FROM events WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq',
      ),
      firstPage: db.prepare(`${summary} ${order}`),
      pageAfter: db.prepare(
        `${summary} WHERE created_at < @createdAt OR (created_at = @createdAt AND ${ID_ORDER}(id) > ${ID_ORDER}(@id)) ${order}`,
      ),
      lockRow: db.prepare('SELECT owner FROM locks WHERE session_id = ?'),
      putLock: db.prepare('INSERT OR REPLACE INTO locks (session_id, owner) VALUES (?, ?)'),
      dropLock: db.prepare('DELETE FROM locks WHERE session_id = ? AND owner = ?'),
      deleteEvents: db.prepare('DELETE FROM events WHERE session_id = ?'),
      deleteSession: db.prepare('DELETE FROM sessions WHERE key = ?'),
      deleteLock: db.prepare('DELETE FROM locks WHERE session_id = ?'),
    };
    this.#append = db.transaction((id: string, events: readonly SessionEvent[], expected: number) =>
      this.#appendInTransaction(id, events, expected),
    );
    this.#load = db.transaction((id: string, elide: boolean) => this.#loadInTransaction(id, elide));
    this.#learnTypes();
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
      if (existing === 'pristine') driverCall(path, 'open', () => setPageSize(connection));
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
      if (driverCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
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
      const learned = this.#append.immediate(id, events, expected);
      for (const [type, code] of learned) this.#learnType(type, code);
      this.#failpoint('append:after-commit');
    } catch (error) {
      throw this.#storageError(`append to session '${id}'`, error);
    }
  }

  async load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    this.#assertOpen();
    checkSessionId(id);
    try {
      return this.#load(id, options.elideFinishedChunks === true);
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
          const position = this.#sql.nextSeq.get(id) as SessionPosition | undefined;
          if (position === undefined) throw new NotFoundError(id, this.location);
          const owner = this.#liveOwner(id);
          if (owner !== undefined) throw new LockedError(id, owner);
          this.#sql.deleteEvents.run(position.key);
          this.#sql.deleteSession.run(position.key);
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

  /**
   * Writes the batch; returns the type codes it read or assigned that are not cached yet, for
   * the caller to cache once the transaction has committed.
   */
  #appendInTransaction(
    id: string,
    events: readonly SessionEvent[],
    expected: number,
  ): ReadonlyMap<string, number> {
    const key = this.#checkNext(id, expected);
    const insert = this.#sql.insertEvent;
    const learned = new Map<string, number>();
    for (const event of events) {
      const data = JSON.stringify(event.data) as string | undefined;
      if (data === undefined) {
        throw new InvalidStoreError(
          `append to session '${id}': event ${event.seq} (${event.type}) has no JSON data`,
        );
      }
      const type =
        this.#typeCodes.get(event.type) ??
        learned.get(event.type) ??
        this.#typeCodeInTransaction(event.type, learned);
      insert.run(
        key,
        event.seq,
        type,
        event.time,
        data,
        event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs),
        event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp),
      );
    }
    this.#sql.advance.run(expected + events.length, Date.now(), key);
    this.#failpoint('append:before-commit');
    return learned;
  }

  /** Returns the session's integer key after checking that `expected` is its next seq. */
  #checkNext(id: string, expected: number): number {
    const row = this.#sql.nextSeq.get(id) as SessionPosition | undefined;
    if (row === undefined) throw new NotFoundError(id, this.location);
    if (row.next_seq !== expected) throw new ConflictError(id, expected, row.next_seq);
    return row.key;
  }

  /** The code of a type not in the cache: another writer's, or a new one (inside the append). */
  #typeCodeInTransaction(type: string, learned: Map<string, number>): number {
    const row = (this.#sql.typeCode.get(type) ?? this.#sql.insertType.get(type)) as {
      code: number;
    };
    learned.set(type, row.code);
    return row.code;
  }

  #learnType(type: string, code: number): void {
    this.#typeCodes.set(type, code);
    this.#typeNames.set(code, type);
  }

  /** Caches every committed type code (at open, and when a load meets a code it lacks). */
  #learnTypes(): void {
    for (const row of this.#sql.types.all() as { code: number; type: string }[]) {
      this.#learnType(row.type, row.code);
    }
  }

  #loadInTransaction(id: string, elide: boolean): LoadedSession {
    const row = this.#sql.session.get(id) as SessionRow | undefined;
    if (row === undefined) throw new NotFoundError(id, this.location);
    const header = this.#header(row);
    const chunk = this.#typeCodes.get(CHUNK_TYPE);
    const rows = (
      elide && chunk !== undefined
        ? this.#sql.eventsEliding.all({ key: row.key, chunk })
        : this.#sql.events.all(row.key)
    ) as EventRow[];
    const events: SessionEvent[] = [];
    /** Indexes into `rows` of the chunks whose data was left out. */
    const elided: number[] = [];
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
      if (eventRow.data === null) {
        elided.push(expected);
        events.push({
          seq: expected,
          time: eventRow.time,
          type: CHUNK_TYPE,
          data: elidedChunkData(eventRow.data_bytes ?? 0),
        });
      } else {
        events.push(this.#event(id, eventRow));
      }
    }
    if (events.length < row.next_seq) {
      throw this.#corrupt(
        events.length,
        `session '${id}' records ${row.next_seq} events but the rows end at seq ${events.length}`,
      );
    }
    if (elided.length > 0) this.#restoreUnfinished(id, row.key, rows, events, elided);
    return { header, events };
  }

  /**
   * Reads in full, in the same transaction, the chunks left out that no `assistant/message` of
   * the session cites: a stub stands only for a finished chunk.
   */
  #restoreUnfinished(
    id: string,
    key: number,
    rows: readonly EventRow[],
    events: SessionEvent[],
    elided: readonly number[],
  ): void {
    const cited = new Uint8Array(events.length);
    for (const event of events) {
      if (event.type !== 'assistant/message' || event.sourceEventSeqs === undefined) continue;
      for (const source of event.sourceEventSeqs) {
        // Unvalidated still: a session refuses a message citing anything but earlier events.
        if (typeof source === 'number' && source >= 0 && source < event.seq) cited[source] = 1;
      }
    }
    const unfinished = elided.filter((seq) => cited[seq] !== 1);
    // Nearby chunks are read with one range query (the rows between them are read and dropped),
    // so even a log whose messages cite nothing costs a few queries, not one per chunk.
    let next = 0;
    while (next < unfinished.length) {
      const first = unfinished[next] as number;
      let last = next;
      while (
        last + 1 < unfinished.length &&
        (unfinished[last + 1] as number) - (unfinished[last] as number) <= RESTORE_GAP_ROWS
      ) {
        last++;
      }
      const wanted = new Set(unfinished.slice(next, last + 1));
      const stored = this.#sql.eventData.all(key, first, unfinished[last]) as {
        seq: number;
        data: string;
      }[];
      for (const { seq, data } of stored) {
        if (!wanted.delete(seq)) continue;
        events[seq] = this.#event(id, { ...(rows[seq] as EventRow), data });
      }
      const [missing] = wanted;
      if (missing !== undefined) {
        // Impossible inside the load's transaction, unless the database is damaged.
        throw this.#corrupt(missing, `session '${id}' has no row for seq ${missing} any more`);
      }
      next = last + 1;
    }
  }

  #event(id: string, row: EventRow): SessionEvent {
    const { seq } = row;
    const type = this.#typeName(id, row);
    if (row.data === null) throw this.#corrupt(seq, `the data of session '${id}' is missing`);
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
      type,
      data,
      ...(surfaceOp === undefined ? {} : { surfaceOp: surfaceOp as SessionEvent['surfaceOp'] }),
      ...(sources === undefined ? {} : { sourceEventSeqs: sources as number[] }),
    } as SessionEvent;
  }

  /** The name of a row's type code; a code this store has not seen is read from the table. */
  #typeName(id: string, row: EventRow): string {
    let type = this.#typeNames.get(row.type);
    if (type === undefined) {
      // Inside the load transaction: the types table is read in the same snapshot as the rows.
      this.#learnTypes();
      type = this.#typeNames.get(row.type);
    }
    if (type === undefined) {
      throw this.#corrupt(row.seq, `session '${id}' has an event of unknown type code ${row.type}`);
    }
    return type;
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
