/**
 * The SQLite store: statements, one transaction per append (which checks the expected seq
 * before writing) and per load, the cache of event type codes, and the writer locks.
 */
import { type SessionEvent, type SessionHeader, validateHeader } from '../../core/index.js';
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
  ConflictError,
  CorruptLogError,
  InvalidStoreError,
  LockedError,
  type LockOwner,
  NotFoundError,
} from '../errors.js';
import { currentOwner, liveOwnerOf } from '../lock-owner.js';
import {
  asStorageError,
  assertOpen,
  checkBatch,
  checkListOptions,
  checkSessionId,
  checkTornTail,
  encodeCursor,
} from '../store-rules.js';
import {
  closeQuietly,
  driverCall,
  driverCode,
  openDatabase,
  type SqliteStoreOptions,
} from './open.js';
import {
  type DataRow,
  decodeEventRows,
  decodeHeaderRow,
  type EventRow,
  type RowContext,
  restoreUnfinished,
  type SessionRow,
} from './rows.js';
import type {
  SqliteDatabase,
  SqliteSettings,
  SqliteStatement,
  SqliteTransaction,
} from './schema.js';

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
/** SQL function ordering ids by UTF-16 code units, as JavaScript (and `list` cursors) do. */
const ID_ORDER = 'palimpsest_id_order';
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
    const { path, db, settings } = await openDatabase(file, options);
    const failpoint = options.failpoint ?? noFailpoint;
    try {
      return driverCall(path, 'open', () => new SqliteStore(path, db, settings, failpoint));
    } catch (error) {
      closeQuietly(db);
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
    const request = checkListOptions(options);
    const limit = request.limit;
    const after = request.after?.header;
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
      header: decodeHeaderRow(this.#file, row),
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

  /**
   * Checks the arguments and the lock, and drops nothing: each batch is one transaction, which
   * SQLite rolls back when a crash interrupts it, so a database never has a torn tail.
   */
  async discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    this.#assertOpen();
    checkSessionId(id);
    checkTornTail(id, tail, lock);
    let row: { owner: string } | undefined;
    try {
      row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
    } catch (error) {
      throw this.#storageError(`discard the torn tail of session '${id}'`, error);
    }
    if (row !== undefined && row.owner === JSON.stringify(lock.owner)) return;
    const holder = this.#liveOwner(id);
    if (holder !== undefined) throw new LockedError(id, holder);
    throw new InvalidStoreError(`the lock of session '${id}' is no longer held; lock it again`);
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
    const header = decodeHeaderRow(this.#file, row);
    const chunk = this.#typeCodes.get(CHUNK_TYPE);
    const rows = (
      elide && chunk !== undefined
        ? this.#sql.eventsEliding.all({ key: row.key, chunk })
        : this.#sql.events.all(row.key)
    ) as EventRow[];
    const context: RowContext = { file: this.#file, id, typeName: this.#typeNameOf };
    const { events, elided } = decodeEventRows(context, rows, row.next_seq);
    if (elided.length > 0) {
      restoreUnfinished(
        context,
        rows,
        events,
        elided,
        (first, last) => this.#sql.eventData.all(row.key, first, last) as DataRow[],
      );
    }
    return { header, events };
  }

  /**
   * The name of a type code; a code this store has not seen is read from the table (inside the
   * load transaction: in the same snapshot as the rows).
   */
  readonly #typeNameOf = (code: number): string | undefined => {
    const type = this.#typeNames.get(code);
    if (type !== undefined) return type;
    this.#learnTypes();
    return this.#typeNames.get(code);
  };

  /** The owner of the session's lock row if it is alive; a dead or unreadable one is stale. */
  #liveOwner(id: string): LockOwner | undefined {
    const row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
    return row === undefined ? undefined : liveOwnerOf(row.owner);
  }

  /** Passes palimpsest's own errors through and wraps anything else (driver, hook) in one. */
  #storageError(action: string, error: unknown): Error {
    return asStorageError(action, this.location, error);
  }

  #assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }
}
