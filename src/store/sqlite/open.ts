/**
 * The factory of the SQLite store, {@link openSqliteStore}, and its options. Opening the
 * database file is `database.ts`; what the store's parts share once it is open is `context.ts`.
 */
import type { LockClock } from '../contract/lock-clock.js';
import { SqliteStore } from './store.js';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * `'full'` (default): a resolved append survives power loss. `'normal'`: it survives a crash
   * of the process, but the last transactions may roll back after a power loss.
   */
  readonly synchronous?: 'full' | 'normal';
  /**
   * Open for reading only (default `false`): nothing is created, and the database and its
   * `-wal` are never written, checkpointed or deleted, so a loss found in them stays visible.
   * A missing database is a `StorageError`, and every write is refused with
   * `InvalidStoreError`. SQLite still creates or updates the `-shm` wal-index (and an empty
   * `-wal` when none existed): it cannot read a WAL database without one, and neither holds data.
   */
  readonly readOnly?: boolean;
  /**
   * How long one attempt of a write waits inside SQLite for another connection's transaction,
   * in ms (default 5000). The wait blocks the thread (the driver is synchronous): lower it for a
   * process that must stay responsive; `busyRetryMs` bounds the whole wait.
   */
  readonly busyTimeoutMs?: number;
  /**
   * How long a write keeps retrying, in total, while other connections hold the database, in ms
   * (default 30000): `SQLITE_BUSY` or `SQLITE_LOCKED` on `BEGIN IMMEDIATE` or on commit is
   * retried with jittered backoff (each attempt atomic: nothing is ever written twice). Past the
   * bound the write rejects with `StoreBusyError` (retryable; nothing written, nothing poisoned).
   */
  readonly busyRetryMs?: number;
  /**
   * Called at named points of a write, for crash tests: `'append:before-commit'` (inside the
   * transaction), `'append:before-ledger'` (committed, not yet in the ledger),
   * `'append:after-commit'` (before the append resolves), `'create:before-ledger'`,
   * `'pair:before-commit'` (a new ledger's identity written, the database not yet paired with it)
   * and `'lock:after-acquire'`. A throw from the hook fails the operation like a storage error.
   */
  readonly failpoint?: (name: string) => void;
  /** How often a held lock's row is refreshed, ms (default 5000). */
  readonly lockHeartbeatMs?: number;
  /**
   * A lock whose owner runs on another host is stale, and taken over, once its row was not
   * refreshed for this long, ms (default 30000; at least twice `lockHeartbeatMs`).
   */
  readonly lockStaleMs?: number;
  /**
   * The clock of locks and heartbeats; the machine's by default — inject one to test stale locks
   * without waiting.
   */
  readonly lockClock?: LockClock;
}

/**
 * Opens (creating if needed) the SQLite database at `file`. A missing parent directory is
 * created with mode 0700 and a new database file with mode 0600.
 *
 * @throws FormatVersionError for a palimpsest database of another schema version;
 *   InvalidStoreError for a file that is not a palimpsest database or a missing driver;
 *   InvalidArgumentError for bad options; StorageError when the file cannot be opened. A refused
 *   file is not modified.
 */
export function openSqliteStore(
  file: string,
  options: SqliteStoreOptions = {},
): Promise<SqliteStore> {
  return SqliteStore.open(file, options);
}
