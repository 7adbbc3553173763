/**
 * The SQLite store: statements, one transaction per append (which checks the expected seq
 * before writing) and per load, the cache of event type codes, and the writer locks.
 */

import { validateHeader } from '../../core/header.js';
import type { JsonValue, SessionEvent, SessionHeader } from '../../core/index.js';
import { InvalidArgumentError } from '../../core/index.js';

import {
  AlreadyExistsError,
  ConflictError,
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  LeaseLostError,
  LockedError,
  type LockHolderState,
  type LockOwner,
  NotFoundError,
} from '../contract/errors.js';
import { follow, Wakeups } from '../contract/follow.js';
import { LoadedSession } from '../contract/loaded-session.js';
import {
  currentOwner,
  forgetToken,
  judgeHolder,
  type LockTiming,
  parseOwnerJson,
  resolveLockTiming,
} from '../contract/lock-owner.js';
import type {
  AppendOptions,
  DamagedSession,
  ListOptions,
  LoadOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  SessionSummary,
  TornTail,
  UnlockOptions,
  UnlockReport,
  WatchOptions,
} from '../contract/session-store.js';
import {
  asStorageError,
  assertOpen,
  checkBatch,
  checkListOptions,
  checkSessionId,
  checkTornTail,
  encodeCursor,
  retryWhileBusy,
  STATS_EVENT_TYPES,
  statsOf,
} from '../contract/store-rules.js';
import type { RunRow } from '../sql/chunk-runs.js';
import { planRuns } from './chunk-run-writer.js';
import { Ledger, type LedgerEntry } from './ledger.js';
import { checkAgainstLedger, missingFromDatabase, vanishedSessions } from './ledger-checks.js';
import {
  closeQuietly,
  driverCall,
  driverCode,
  isBusy,
  openDatabase,
  type SqliteStoreOptions,
  schemaDamage,
} from './open.js';
import {
  decodeHeaderRow,
  decodeRowsFrom,
  decodeSessionRows,
  type EventRow,
  type RowContext,
  rowChecksum,
  type SessionRow,
  sessionChecksum,
} from './rows.js';
import type { SqliteDatabase, SqliteSettings, SqliteTransaction } from './schema.js';
import { prepareStatements, type Statements } from './statements.js';

/** The integer key and the next seq of a session, read inside a transaction. */
interface SessionPosition {
  readonly key: number;
  readonly next_seq: number;
}

/** A lock this store holds: its owner, the row's current text, its heartbeat. */
interface HeldRow {
  readonly owner: LockOwner;
  stored: string;
  timer: ReturnType<typeof setInterval> | undefined;
}

/** A lock row as read and judged. */
interface FoundLock {
  readonly owner: LockOwner;
  readonly refreshedAt: number;
  /** Set when the lock must be respected. */
  readonly holder: LockHolderState | undefined;
  locked(): LockedError;
}

/** How long a heartbeat waits for another writer's transaction before skipping its beat, ms. */
const HEARTBEAT_BUSY_MS = 100;

/** The heartbeat time a stored lock row carries, if any. */
function refreshedAtOf(json: string): number | undefined {
  try {
    const value = (JSON.parse(json) as { refreshedAt?: unknown } | null)?.refreshedAt;
    return typeof value === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The owner reported for a lock row that holds no owner record. */
function unknownOwner(): LockOwner {
  return { pid: 0, host: 'unknown', since: 0, token: '' };
}

/** Runs `call` with the connection's busy timeout set to `ms`, then restores it. */
function withBusyTimeout<T>(db: SqliteDatabase, ms: number, call: () => T): T {
  const previous = Number(db.pragma('busy_timeout', { simple: true }));
  db.pragma(`busy_timeout = ${ms}`, { simple: true });
  try {
    return call();
  } finally {
    db.pragma(`busy_timeout = ${previous}`, { simple: true });
  }
}

/** How often a watch polls `PRAGMA data_version` for commits of other connections, ms. */
const WATCH_POLL_MS = 50;
/** Rows a watch reads at a time. */
const WATCH_PAGE = 10_000;

/** Where a salvaging load leaves its result, for when the transaction's end fails after it. */
interface SalvageSlot {
  result?: LoadedSession;
}

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
    { readonly key: number; readonly learned: ReadonlyMap<string, number> }
  >;
  /** Which sessions exist and how long each is, kept apart from the database (`ledger.ts`). */
  readonly #ledger: Ledger | undefined;
  readonly #readOnly: boolean;
  readonly #load: SqliteTransaction<[string, boolean, SalvageSlot | undefined], LoadedSession>;
  readonly #summarize: SqliteTransaction<[string], SessionStats>;
  /**
   * Event type codes of `event_types`, both ways. Rows of that table are never changed or
   * deleted, so an entry read from a committed row stays true; entries are added only after the
   * transaction that read or inserted them has committed (a rolled-back code may be given to
   * another type by the next writer).
   */
  readonly #typeCodes = new Map<string, number>();
  readonly #typeNames = new Map<number, string>();
  /** Locks this store took and still holds, by session id. */
  readonly #held = new Map<string, HeldRow>();
  /** Sessions whose lock this store held until another writer took it over (fenced off). */
  readonly #lost = new Set<string>();
  /** Wakes this store's watchers when it commits (its own commits leave data_version as it is). */
  readonly #committed = new Wakeups();
  readonly #timing: LockTiming;
  /** Total bound on a write's retries while other connections hold the database, ms. */
  readonly #busyRetryMs: number;
  #closed = false;
  /** Removes the private copy a read-only open in an unwritable directory reads, if any. */
  #cleanup: (() => void) | undefined;

  private constructor(
    file: string,
    db: SqliteDatabase,
    settings: SqliteSettings,
    failpoint: (name: string) => void,
    readOnly: boolean,
    timing: LockTiming,
    busyRetryMs: number,
  ) {
    this.#file = file;
    this.#timing = timing;
    this.#busyRetryMs = busyRetryMs;
    this.#readOnly = readOnly;
    this.location = `sqlite:${file}`;
    this.#db = db;
    this.settings = settings;
    this.#failpoint = failpoint;
    this.#sql = prepareStatements(db);
    this.#append = db.transaction((id: string, events: readonly SessionEvent[], expected: number) =>
      this.#appendInTransaction(id, events, expected),
    );
    this.#load = db.transaction((id: string, elide: boolean, salvage?: SalvageSlot) =>
      this.#loadInTransaction(id, elide, salvage),
    );
    this.#summarize = db.transaction((id: string) => this.#summarizeInTransaction(id));
    this.#learnTypes();
    this.#ledger = Ledger.open(file, !readOnly);
    if (!readOnly && this.#ledger?.isEmpty() === true) this.#recordBaseline();
  }

  /** Same as {@link openSqliteStore}. */
  static async open(file: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const timing = resolveLockTiming(options);
    const opened = await openDatabase(file, options);
    const { path, db, settings, readOnly, busyRetryMs } = opened;
    const failpoint = options.failpoint ?? noFailpoint;
    try {
      const store = driverCall(
        path,
        'open',
        () => new SqliteStore(path, db, settings, failpoint, readOnly, timing, busyRetryMs),
      );
      store.#cleanup = opened.cleanup;
      return store;
    } catch (error) {
      closeQuietly(db);
      opened.cleanup?.();
      throw schemaDamage(path, error);
    }
  }

  async create(header: SessionHeader): Promise<void> {
    this.#assertWritable();
    checkSessionId(header.id);
    const valid = validateHeader(header);
    const now = Date.now();
    const text = JSON.stringify(valid);
    try {
      const { key } = (await this.#retry(`create session '${valid.id}'`, () =>
        this.#sql.insertSession.get(
          valid.id,
          valid.createdAt,
          text,
          now,
          sessionChecksum(valid.id, valid.createdAt, text),
        ),
      )) as { key: number };
      this.#ledger?.created(key, valid.id);
    } catch (error) {
      if (driverCode(error) === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new AlreadyExistsError(valid.id, this.location);
      }
      throw this.#storageError(`create session '${valid.id}'`, error);
    }
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    this.#assertWritable();
    checkSessionId(id);
    checkBatch(id, events, options);
    const expected = options.expectedSeq;
    try {
      if (events.length === 0) {
        this.#checkNext(id, expected);
        return;
      }
      const { key, learned } = await this.#retry(`append to session '${id}'`, () =>
        this.#append.immediate(id, events, expected),
      );
      for (const [type, code] of learned) this.#learnType(type, code);
      this.#committed.notify();
      this.#ledger?.committed(key, expected + events.length);
      this.#failpoint('append:after-commit');
    } catch (error) {
      throw this.#storageError(`append to session '${id}'`, error);
    }
  }

  async load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    this.#assertOpen();
    checkSessionId(id);
    try {
      if (options.salvage === true) return this.#salvage(id);
      return await this.#retry(`load session '${id}'`, () =>
        this.#load(id, options.elideFinishedChunks === true, undefined),
      );
    } catch (error) {
      throw this.#loadError(`load session '${id}'`, error);
    }
  }

  /**
   * The session's stats from its row and two indexed reads: the last event's time, and the data
   * of the events of the types the stats need, selected by type code (no other row's data is
   * read or decoded). Checked against the ledger as a load is.
   */
  async summarize(id: string): Promise<SessionStats> {
    this.#assertOpen();
    checkSessionId(id);
    try {
      return await this.#retry(`summarize session '${id}'`, () => this.#summarize(id));
    } catch (error) {
      throw this.#loadError(`summarize session '${id}'`, error);
    }
  }

  /**
   * Follows a session: reads the rows after the last one yielded (each checked against its
   * checksum), whenever this store commits or `PRAGMA data_version` says another connection did;
   * the version is polled every {@link WATCH_POLL_MS}.
   */
  watch(id: string, options: WatchOptions = {}): AsyncIterable<SessionEvent> {
    return follow(
      async () => {
        this.#assertOpen();
        checkSessionId(id);
        const key = this.#keyOf(id);
        const version = (): unknown => this.#db.pragma('data_version', { simple: true });
        const context: RowContext = { file: this.#file, id, key, typeName: this.#typeNameOf };
        return {
          read: async (from) => {
            this.#assertOpen();
            if (this.#keyOf(id) !== key) throw new NotFoundError(id, this.location);
            try {
              return this.#page(context, from);
            } catch (error) {
              throw this.#loadError(`watch session '${id}'`, error);
            }
          },
          changed: async (signal) => {
            const seen = version();
            while (!signal.aborted) {
              if (await this.#committed.wait(signal, WATCH_POLL_MS)) return;
              if (this.#closed || version() !== seen) return;
            }
          },
          close: async () => {},
        };
      },
      this.location,
      options,
    );
  }

  /** The key of a session's row; `NotFoundError` when there is none. */
  #keyOf(id: string): number {
    const row = this.#sql.nextSeq.get(id) as SessionPosition | undefined;
    if (row === undefined) throw new NotFoundError(id, this.location);
    return row.key;
  }

  async list(options: ListOptions = {}): Promise<SessionPage> {
    this.#assertOpen();
    const request = checkListOptions(options);
    const limit = request.limit;
    const after = request.after?.header;
    const before = this.#ledger?.snapshot();
    let rows: SessionRow[];
    let keys: ReadonlySet<number>;
    try {
      ({ rows, keys } = await this.#retry(
        'list sessions',
        this.#db.transaction(() => ({
          rows: (after === undefined
            ? this.#sql.page(request.filter, false).all({ ...request.filter, limit: limit + 1 })
            : this.#sql
                .page(request.filter, true)
                .all({ ...request.filter, ...after, limit: limit + 1 })) as SessionRow[],
          keys: new Set(
            after === undefined
              ? (this.#sql.keys.all() as { key: number }[]).map((row) => row.key)
              : [],
          ),
        })),
      ));
    } catch (error) {
      throw this.#loadError('list sessions', error);
    }
    const sessions: SessionSummary[] = [];
    const damaged: DamagedSession[] = [];
    if (after === undefined && before !== undefined) {
      for (const found of vanishedSessions(this.#file, before, keys)) {
        if (!this.#deletedNow(found.key)) damaged.push(found.damaged);
      }
    }
    for (const row of rows.slice(0, limit)) {
      try {
        const header = decodeHeaderRow(this.#file, row);
        const short = checkAgainstLedger(this.#file, row, before?.get(row.key));
        if (short !== undefined && !this.#deletedNow(row.key)) throw short;
        sessions.push({ header, updatedAt: row.updated_at, eventCount: row.next_seq });
      } catch (error) {
        if (!CorruptLogError.isInstance(error) && !FormatVersionError.isInstance(error))
          throw error;
        damaged.push({ id: row.id, error });
      }
    }
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    const page = damaged.length === 0 ? { sessions } : { sessions, damaged };
    return last === undefined
      ? page
      : {
          ...page,
          nextCursor: encodeCursor({ header: { createdAt: last.created_at, id: last.id } }),
        };
  }

  async delete(id: string): Promise<void> {
    this.#assertWritable();
    checkSessionId(id);
    let known: SessionPosition | undefined;
    try {
      known = this.#sql.nextSeq.get(id) as SessionPosition | undefined;
      if (known !== undefined) this.#ledger?.deleting(known.key);
      const remove = this.#db.transaction(() => {
        const position = this.#sql.nextSeq.get(id) as SessionPosition | undefined;
        if (position === undefined) throw new NotFoundError(id, this.location);
        const found = this.#lockOf(id);
        if (found?.holder !== undefined) throw found.locked();
        this.#sql.deleteEvents.run(position.key);
        this.#sql.deleteRuns.run(position.key);
        this.#sql.deleteSession.run(position.key);
        this.#sql.deleteLock.run(id);
      });
      await this.#retry(`delete session '${id}'`, () => remove.immediate());
    } catch (error) {
      this.#revive(id, known);
      throw this.#storageError(`delete session '${id}'`, error);
    }
  }

  async lock(id: string): Promise<SessionLock> {
    this.#assertWritable();
    checkSessionId(id);
    const owner = currentOwner(this.#timing.heartbeatMs);
    const held: HeldRow = { owner, stored: JSON.stringify(owner), timer: undefined };
    try {
      const take = this.#db.transaction(() => {
        const found = this.#lockOf(id);
        if (found?.holder !== undefined) throw found.locked();
        this.#sql.putLock.run(id, held.stored);
      });
      await this.#retry(`lock session '${id}'`, () => take.immediate());
    } catch (error) {
      forgetToken(owner.token);
      throw this.#storageError(`lock session '${id}'`, error);
    }
    this.#held.set(id, held);
    this.#lost.delete(id);
    try {
      this.#failpoint('lock:after-acquire');
    } catch (error) {
      this.#forget(id, held);
      try {
        this.#sql.dropLock.run(id, held.stored);
      } catch {
        // Left behind, the row is recovered once this process is gone.
      }
      throw this.#storageError(`lock session '${id}'`, error);
    }
    this.#startHeartbeat(id, held);
    return {
      sessionId: id,
      owner,
      release: async () => {
        if (this.#closed || this.#held.get(id) !== held) return;
        // Forgotten first: if the delete fails, the row is an orphan of this process, which
        // a later lock() here takes over (and another process once this one is gone).
        this.#forget(id, held);
        const action = `release the lock of session '${id}'`;
        try {
          await this.#retry(action, () => this.#sql.dropLock.run(id, held.stored));
        } catch (error) {
          throw this.#storageError(action, error);
        }
      },
    };
  }

  /**
   * Removes a session's lock row: a stale one at once, a live one (its process runs on this
   * host, or its heartbeat is fresh) only with `force`.
   */
  async unlock(id: string, options: UnlockOptions = {}): Promise<UnlockReport> {
    this.#assertWritable();
    checkSessionId(id);
    try {
      const remove = this.#db.transaction((): UnlockReport => {
        const row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
        if (row === undefined) return { removed: false };
        const found = this.#lockOf(id);
        if (found?.holder !== undefined && options.force !== true) throw found.locked();
        this.#sql.dropLock.run(id, row.owner);
        return {
          removed: true,
          owner: found?.owner ?? unknownOwner(),
          refreshedAt: found?.refreshedAt ?? 0,
          wasLive: found?.holder !== undefined,
        };
      });
      return await this.#retry(`unlock session '${id}'`, () => remove.immediate());
    } catch (error) {
      throw this.#storageError(`unlock session '${id}'`, error);
    }
  }

  /**
   * Checks the arguments and the lock, and drops nothing: each batch is one transaction, which
   * SQLite rolls back when a crash interrupts it, so a database never has a torn tail.
   */
  async discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    this.#assertWritable();
    checkSessionId(id);
    checkTornTail(id, tail, lock);
    let row: { owner: string } | undefined;
    try {
      row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
    } catch (error) {
      throw this.#storageError(`discard the torn tail of session '${id}'`, error);
    }
    if (row !== undefined && parseOwnerJson(row.owner)?.token === lock.owner.token) return;
    const found = this.#lockOf(id);
    if (found?.holder !== undefined) throw found.locked();
    throw new InvalidStoreError(
      'LOCK_NOT_HELD',
      `the lock of session '${id}' is no longer held; lock it again`,
    );
  }

  /** Releases the locks this store holds and closes the connection. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let failure: unknown;
    for (const [id, held] of [...this.#held]) {
      this.#forget(id, held);
      try {
        this.#sql.dropLock.run(id, held.stored);
      } catch (error) {
        // A lock left behind is recovered by the next writer once this process is gone.
        failure ??= error;
      }
    }
    try {
      this.#ledger?.close();
    } catch (error) {
      failure ??= error;
    }
    try {
      this.#db.close();
    } catch (error) {
      failure ??= error;
    }
    this.#cleanup?.();
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
  ): { readonly key: number; readonly learned: ReadonlyMap<string, number> } {
    const key = this.#checkNext(id, expected);
    this.#checkWriter(id);
    const insert = this.#sql.insertEvent;
    const learned = new Map<string, number>();
    const context: RowContext = { file: this.#file, id, key, typeName: this.#typeNameOf };
    const runs = planRuns(this.#sql, context, events, expected);
    for (const event of events) {
      if (runs.joins(event.seq)) continue;
      const data = JSON.stringify(event.data) as string | undefined;
      if (data === undefined) {
        throw new InvalidArgumentError(
          `append to session '${id}': event ${event.seq} (${event.type}) has no JSON data`,
        );
      }
      const type =
        this.#typeCodes.get(event.type) ??
        learned.get(event.type) ??
        this.#typeCodeInTransaction(event.type, learned);
      const sources =
        event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs);
      const surfaceOp = event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp);
      const crc = rowChecksum(key, event.seq, event.type, event.time, data, sources, surfaceOp);
      insert.run(key, event.seq, type, event.time, data, sources, surfaceOp, crc);
    }
    runs.write();
    this.#sql.advance.run(expected + events.length, Date.now(), key);
    this.#failpoint('append:before-commit');
    return { key, learned };
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

  /**
   * A salvaging load. Once SQLite has reported a damaged page, the read transaction's COMMIT
   * reports it again (the transaction is over all the same), so a result that already holds that
   * damage is taken from the slot instead of being lost to the second report.
   */
  #salvage(id: string): LoadedSession {
    const slot: SalvageSlot = {};
    try {
      return this.#load(id, false, slot);
    } catch (error) {
      if (slot.result?.damage !== undefined && driverCode(error)?.startsWith('SQLITE_CORRUPT'))
        return slot.result;
      throw error;
    }
  }

  #loadInTransaction(id: string, elide: boolean, salvage: SalvageSlot | undefined): LoadedSession {
    // Read before the first query starts the transaction's snapshot (see ledger-checks.ts).
    const before = this.#ledger?.snapshot();
    const row = this.#sessionRow(id, before);
    const header = decodeHeaderRow(this.#file, row);
    const context: RowContext = {
      file: this.#file,
      id,
      key: row.key,
      typeName: this.#typeNameOf,
    };
    if (salvage !== undefined) {
      salvage.result = this.#salvageRows(context, header, row, before?.get(row.key));
      return salvage.result;
    }
    // The runs first (a few thousand rows for a million events): while an iterator is open the
    // connection runs no other statement. The events are iterated, not `.all()`: each row object
    // dies young.
    const runs = this.#sql.runs.all(row.key) as RunRow[];
    const { log } = decodeSessionRows(
      context,
      this.#sql.events.iterate(row.key) as IterableIterator<EventRow>,
      runs,
      row.next_seq,
      { elide },
    );
    this.#checkLength(row, before);
    return LoadedSession.fromLog(header, log);
  }

  /** A watcher's page: the events from `from` on, in one read transaction. */
  #page(context: RowContext, from: number): SessionEvent[] {
    return this.#db.transaction(() => {
      const rows = this.#sql.eventsFrom.all(context.key, from, WATCH_PAGE) as EventRow[];
      // A full page ends at its last row; the runs past it belong to the next page.
      const upto =
        rows.length === WATCH_PAGE ? (rows.at(-1) as EventRow).seq : Number.MAX_SAFE_INTEGER;
      const runs = this.#sql.runsFrom.all(context.key, from, upto) as RunRow[];
      return decodeRowsFrom(context, rows, runs, from);
    })();
  }

  /**
   * The session's row, inside a read transaction; a session the ledger (`before`, read before
   * the transaction's first query) knows but the database lost is a `CorruptLogError`.
   */
  #sessionRow(id: string, before: ReadonlyMap<number, LedgerEntry> | undefined): SessionRow {
    const row = this.#sql.session.get(id) as SessionRow | undefined;
    if (row !== undefined) return row;
    const missing = missingFromDatabase(this.#file, id, before);
    if (missing !== undefined && !this.#deletedNow(missing.key)) throw missing.error;
    throw new NotFoundError(id, this.location);
  }

  /** Throws when the session is shorter than the ledger records. */
  #checkLength(row: SessionRow, before: ReadonlyMap<number, LedgerEntry> | undefined): void {
    const short = checkAgainstLedger(this.#file, row, before?.get(row.key));
    if (short !== undefined && !this.#deletedNow(row.key)) throw short;
  }

  #summarizeInTransaction(id: string): SessionStats {
    const before = this.#ledger?.snapshot();
    const row = this.#sessionRow(id, before);
    const header = decodeHeaderRow(this.#file, row);
    this.#checkLength(row, before);
    const last = this.#sql.lastTime.get(row.key) as { time: number } | undefined;
    const codes = [...STATS_EVENT_TYPES].map((type) => this.#typeCodes.get(type) ?? -1);
    const picked = (
      this.#sql.eventsOfTypes.all(row.key, ...codes) as {
        seq: number;
        type: number;
        data: string;
      }[]
    ).map((event) => {
      try {
        return {
          type: this.#typeNameOf(event.type) ?? '',
          data: JSON.parse(event.data) as JsonValue,
        };
      } catch (error) {
        throw new CorruptLogError(
          { file: this.#file, row: event.seq, reason: 'event data is not valid JSON' },
          { cause: error },
        );
      }
    });
    return statsOf(header, row.next_seq, last?.time, picked);
  }

  /**
   * A salvaging load's rows: read one at a time, so that the rows before a page SQLite finds
   * damaged are still returned, and checked as a plain load checks them, up to the first damage.
   */
  #salvageRows(
    context: RowContext,
    header: SessionHeader,
    row: SessionRow,
    recorded: LedgerEntry | undefined,
  ): LoadedSession {
    const rows: EventRow[] = [];
    let runs: RunRow[] = [];
    let unreadable: CorruptLogError | undefined;
    try {
      runs = this.#sql.runs.all(row.key) as RunRow[];
      for (const event of this.#sql.events.iterate(row.key)) rows.push(event as EventRow);
    } catch (error) {
      const failure = this.#loadError(`load session '${context.id}'`, error);
      if (!CorruptLogError.isInstance(failure)) throw failure;
      unreadable = failure;
    }
    const decoded = decodeSessionRows(
      context,
      rows,
      runs,
      unreadable ? (rows.at(-1)?.seq ?? -1) + 1 : row.next_seq,
      { salvage: true },
    );
    const short = this.#deletedNow(row.key)
      ? undefined
      : checkAgainstLedger(this.#file, row, recorded);
    const damage = decoded.damage ?? unreadable ?? short;
    return LoadedSession.fromLog(header, decoded.log, damage === undefined ? {} : { damage });
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

  /**
   * The session's lock row as judged by the shared rule (`lock-owner.ts`): `holder` is set when
   * it must be respected; a row whose owner is gone, whose heartbeat is stale, or that is not an
   * owner record at all, has none.
   */
  #lockOf(id: string): FoundLock | undefined {
    const row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
    if (row === undefined) return undefined;
    const owner = parseOwnerJson(row.owner);
    if (owner === undefined) return undefined;
    const refreshedAt = refreshedAtOf(row.owner) ?? owner.since;
    const holder = judgeHolder(owner, refreshedAt, this.#timing.staleMs);
    return { owner, refreshedAt, holder, locked: () => new LockedError(id, owner, holder) };
  }

  /**
   * Refreshes the lock row every `heartbeatMs` with the time in its `refreshedAt` field, so that
   * openers on other hosts can tell a live holder from a dead one. The update names the row's
   * exact text: a row another writer replaced is never touched, and the lock counts as lost.
   * A refresh that finds the database busy waits briefly and skips the beat (the stale bound
   * allows several); the timer is `unref()`ed and stopped on release and close.
   */
  #startHeartbeat(id: string, held: HeldRow): void {
    const timer = setInterval(() => {
      if (this.#closed || this.#held.get(id) !== held) {
        clearInterval(timer);
        return;
      }
      const next = JSON.stringify({ ...held.owner, refreshedAt: Date.now() });
      try {
        const changed = withBusyTimeout(this.#db, HEARTBEAT_BUSY_MS, () =>
          this.#sql.refreshLock.run(next, id, held.stored),
        );
        if (changed.changes === 1) held.stored = next;
        else this.#fence(id, held);
      } catch {
        // Busy or failing: skipped; the next beat tries again.
      }
    }, this.#timing.heartbeatMs);
    timer.unref();
    held.timer = timer;
  }

  /**
   * Fencing, inside an append's transaction: a session this store holds must still be locked by
   * its own acquisition (another writer may have judged it stale, or an operator forced it), and
   * one it does not hold must not be held by a live writer. Either refusal rolls the append back.
   */
  #checkWriter(id: string): void {
    const held = this.#held.get(id);
    const row = this.#sql.lockRow.get(id) as { owner: string } | undefined;
    if (held !== undefined) {
      if (row?.owner === held.stored) return;
      const owner = row === undefined ? undefined : parseOwnerJson(row.owner);
      if (owner?.token === held.owner.token) return;
      this.#fence(id, held);
    }
    if (this.#lost.has(id)) {
      throw new LeaseLostError(id, row === undefined ? undefined : parseOwnerJson(row.owner));
    }
    const found = row === undefined ? undefined : this.#lockOf(id);
    if (found?.holder !== undefined) throw found.locked();
  }

  /** Forgets a lock another writer took over; this store's appends to it fail from now on. */
  #fence(id: string, held: HeldRow): void {
    this.#forget(id, held);
    this.#lost.add(id);
  }

  /** Stops tracking a lock this store took: its heartbeat, and its token as held. */
  #forget(id: string, held: HeldRow): void {
    if (held.timer !== undefined) clearInterval(held.timer);
    if (this.#held.get(id) === held) this.#held.delete(id);
    forgetToken(held.owner.token);
  }

  /** A read's failure: SQLite's report of a damaged database is a `CorruptLogError`. */
  #loadError(action: string, error: unknown): Error {
    const code = driverCode(error);
    if (code?.startsWith('SQLITE_CORRUPT') === true) {
      return new CorruptLogError(
        { file: this.#file, reason: `SQLite reports the database damaged (${code})` },
        { cause: error },
      );
    }
    return this.#storageError(action, error);
  }

  /**
   * Records every session as it is now in a ledger that holds nothing yet (a new database, or
   * one whose ledger was removed): from here on, loads and lists are checked against it.
   */
  #recordBaseline(): void {
    const ledger = this.#ledger;
    if (ledger === undefined) return;
    for (const row of this.#sql.firstPage.all({ limit: -1 }) as SessionRow[]) {
      ledger.created(row.key, row.id);
      ledger.committed(row.key, row.next_seq);
    }
  }

  #deletedNow(key: number): boolean {
    return this.#ledger?.deletedNow(key) === true;
  }

  /** Writes the length of a session whose delete failed, so the ledger knows it still exists. */
  #revive(id: string, known: SessionPosition | undefined): void {
    if (known === undefined) return;
    try {
      const now = this.#sql.nextSeq.get(id) as SessionPosition | undefined;
      this.#ledger?.committed(known.key, now?.next_seq ?? known.next_seq);
    } catch {
      // The delete's own failure is the one to report; the ledger then reads as deleted and
      // checks the session no more.
    }
  }

  /**
   * Runs one atomic database call, retrying it while other connections hold the database (each
   * attempt waits up to the busy timeout inside SQLite), up to the store's bound; then a
   * `StoreBusyError`, retryable: nothing was written.
   */
  #retry<T>(action: string, attempt: () => T): Promise<T> {
    return retryWhileBusy(
      { isBusy, retryMs: this.#busyRetryMs, location: this.location, action },
      attempt,
    );
  }

  /** Passes palimpsest's own errors through and wraps anything else (driver, hook) in one. */
  #storageError(action: string, error: unknown): Error {
    return asStorageError(action, this.location, error);
  }

  #assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.#readOnly) {
      throw new InvalidStoreError(
        'READ_ONLY',
        `${this.location} was opened read-only; writes are refused`,
      );
    }
  }
}
