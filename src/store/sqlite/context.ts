/**
 * What a SQLite store's reads, writes and locks share: the connection and its statements, where
 * the database is and how it was opened, the cache of event type codes, the ledger and what it
 * says of deleted sessions, and how a call is retried and its failure reported.
 */

import { CorruptLogError, InvalidStoreError } from '../contract/errors.js';
import { Wakeups } from '../contract/follow.js';
import { type LockTiming, resolveLockTiming } from '../contract/lock-owner.js';
import { asStorageError, assertOpen, retryWhileBusy } from '../contract/store-rules.js';
import { type OpenedDatabase, openDatabase } from './database.js';
import { closeQuietly, driverCall, driverCode, isBusy, schemaDamage } from './driver-errors.js';
import type { Ledger } from './ledger.js';
import type { SqliteStoreOptions } from './open.js';
import { type Paired, pairLedger } from './pairing.js';
import type { RowContext } from './rows.js';
import type { SqliteDatabase, SqliteSettings } from './schema.js';
import { prepareStatements, type Statements } from './statements.js';

/** The integer key, the next seq and the vouched length of a session. */
export interface SessionPosition {
  readonly key: number;
  readonly next_seq: number;
  /** How many events the ledger held on disk when the row was last written (-1: none). */
  readonly vouched: number;
}

const noFailpoint = (): void => {};

/**
 * Opens the database and builds on it what `build` makes of the context (the store), closing the
 * connection again when that fails.
 *
 * @throws as `openSqliteStore`.
 */
export async function openContext<T>(
  file: string,
  options: SqliteStoreOptions,
  build: (context: SqliteContext) => T,
): Promise<T> {
  const timing = resolveLockTiming(options);
  const opened = await openDatabase(file, options);
  const failpoint = options.failpoint ?? noFailpoint;
  let paired: Paired | undefined;
  try {
    paired = await pairLedger(opened, failpoint);
    const ready = paired;
    return driverCall(opened.path, 'open', () =>
      build(new SqliteContext(opened, ready, failpoint, timing)),
    );
  } catch (error) {
    paired?.ledger?.close();
    closeQuietly(opened.db);
    opened.cleanup?.();
    throw schemaDamage(opened.path, error);
  }
}

/** The shared state of one open SQLite store. */
export class SqliteContext {
  /** The absolute path of the database file. */
  readonly file: string;
  /** `sqlite:` and the absolute path of the database file. */
  readonly location: string;
  /** The pragmas of the connection, read back after setting them. */
  readonly settings: SqliteSettings;
  readonly db: SqliteDatabase;
  readonly sql: Statements;
  readonly failpoint: (name: string) => void;
  readonly readOnly: boolean;
  readonly timing: LockTiming;
  /** Which sessions exist and how long each is, kept apart from the database (`ledger.ts`). */
  readonly ledger: Ledger | undefined;
  /** Wakes this store's watchers when it commits (its own commits leave data_version as it is). */
  readonly committed = new Wakeups();
  /** Total bound on a write's retries while other connections hold the database, ms. */
  readonly #busyRetryMs: number;
  /** Removes the private copy a read-only open in an unwritable directory reads, if any. */
  readonly #cleanup: (() => void) | undefined;
  /**
   * Event type codes of `event_types`, both ways. Rows of that table are never changed or
   * deleted, so an entry read from a committed row stays true; entries are added only after the
   * transaction that read or inserted them has committed (a rolled-back code may be given to
   * another type by the next writer).
   */
  readonly #typeCodes = new Map<string, number>();
  readonly #typeNames = new Map<number, string>();
  #closed = false;

  constructor(
    opened: OpenedDatabase,
    paired: Paired,
    failpoint: (name: string) => void,
    timing: LockTiming,
  ) {
    this.file = opened.path;
    this.location = `sqlite:${opened.path}`;
    this.settings = opened.settings;
    this.db = opened.db;
    this.readOnly = opened.readOnly;
    this.#busyRetryMs = opened.busyRetryMs;
    this.#cleanup = opened.cleanup;
    this.failpoint = failpoint;
    this.timing = timing;
    this.ledger = paired.ledger;
    this.sql = prepareStatements(this.db, paired.version);
    this.learnTypes();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Marks the store closed: every operation from now on is refused. */
  markClosed(): void {
    this.#closed = true;
  }

  /** Waits for the ledger's background fsync (its file must stay open until it is done). */
  async settleLedger(): Promise<void> {
    await this.ledger?.settled();
  }

  /** Closes the ledger and the connection; returns the first failure, if any. */
  closeConnection(): unknown {
    let failure: unknown;
    try {
      this.ledger?.close();
    } catch (error) {
      failure ??= error;
    }
    try {
      this.db.close();
    } catch (error) {
      failure ??= error;
    }
    this.#cleanup?.();
    return failure;
  }

  /** The key and next seq of a session's row, if there is one. */
  position(id: string): SessionPosition | undefined {
    return this.sql.nextSeq.get(id) as SessionPosition | undefined;
  }

  /** What decoding the rows of session `id` (key `key`) needs. */
  rowContext(id: string, key: number): RowContext {
    return { file: this.file, id, key, typeName: this.typeNameOf };
  }

  /** The cached code of an event type, if this store has seen it committed. */
  typeCode(type: string): number | undefined {
    return this.#typeCodes.get(type);
  }

  learnType(type: string, code: number): void {
    this.#typeCodes.set(type, code);
    this.#typeNames.set(code, type);
  }

  /** Caches every committed type code (at open, and when a load meets a code it lacks). */
  learnTypes(): void {
    for (const row of this.sql.types.all() as { code: number; type: string }[]) {
      this.learnType(row.type, row.code);
    }
  }

  /**
   * The name of a type code; a code this store has not seen is read from the table (inside the
   * load transaction: in the same snapshot as the rows).
   */
  readonly typeNameOf = (code: number): string | undefined => {
    const type = this.#typeNames.get(code);
    if (type !== undefined) return type;
    this.learnTypes();
    return this.#typeNames.get(code);
  };

  /** Whether the ledger says this store is deleting, or has deleted, the session of `key`. */
  deletedNow(key: number): boolean {
    return this.ledger?.deletedNow(key) === true;
  }

  /**
   * Runs one atomic database call, retrying it while other connections hold the database (each
   * attempt waits up to the busy timeout inside SQLite), up to the store's bound; then a
   * `StoreBusyError`, retryable: nothing was written.
   */
  retry<T>(action: string, attempt: () => T): Promise<T> {
    return retryWhileBusy(
      { isBusy, retryMs: this.#busyRetryMs, location: this.location, action },
      attempt,
    );
  }

  /** Passes palimpsest's own errors through and wraps anything else (driver, hook) in one. */
  storageError(action: string, error: unknown): Error {
    return asStorageError(action, this.location, error);
  }

  /** A read's failure: SQLite's report of a damaged database is a `CorruptLogError`. */
  loadError(action: string, error: unknown): Error {
    const code = driverCode(error);
    if (code?.startsWith('SQLITE_CORRUPT') === true) {
      return new CorruptLogError(
        { file: this.file, reason: `SQLite reports the database damaged (${code})` },
        { cause: error },
      );
    }
    return this.storageError(action, error);
  }

  assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }

  assertWritable(): void {
    this.assertOpen();
    if (this.readOnly) {
      throw new InvalidStoreError(
        'READ_ONLY',
        `${this.location} was opened read-only; writes are refused`,
      );
    }
  }
}
