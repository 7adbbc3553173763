/**
 * The SQLite store's face: a {@link SessionStore} over one database file. The class delegates by
 * role: the reads are `reads.ts`, the writes `writes.ts`, the locks `lock.ts`, and what they share
 * `context.ts`. The factory is `openSqliteStore` in `open.ts`.
 */

import type { SessionEvent, SessionHeader } from '../../core/index.js';
import type { LoadedSession } from '../contract/loaded-session.js';
import type {
  AppendOptions,
  ListOptions,
  LoadOptions,
  ReplaceLogOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  TornTail,
  UnlockOptions,
  UnlockReport,
  WatchOptions,
} from '../contract/session-store.js';
import type { SearchIndex, SearchIndexedStore } from '../search/search-index.js';
import { openContext, type SqliteContext } from './context.js';
import { SqliteLocks } from './lock.js';
import type { SqliteStoreOptions } from './open.js';
import { SqliteReads } from './reads.js';
import type { SqliteSettings } from './schema.js';
import { Fts5SearchIndex } from './search-index.js';
import { SqliteWrites } from './writes.js';

/** A {@link SessionStore} in one SQLite file. Open it with `openSqliteStore`. */
export class SqliteStore implements SessionStore, SearchIndexedStore {
  /** `sqlite:` and the absolute path of the database file. */
  readonly location: string;
  /** The pragmas of the connection, read back after setting them. */
  readonly settings: SqliteSettings;
  readonly #context: SqliteContext;
  readonly #locks: SqliteLocks;
  readonly #reads: SqliteReads;
  readonly #writes: SqliteWrites;
  #search: Fts5SearchIndex | undefined;

  private constructor(context: SqliteContext) {
    this.#context = context;
    this.location = context.location;
    this.settings = context.settings;
    this.#locks = new SqliteLocks(context);
    this.#reads = new SqliteReads(context);
    this.#writes = new SqliteWrites(context, this.#locks);
  }

  /** Same as `openSqliteStore`. */
  static open(file: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    return openContext(file, options, (context) => new SqliteStore(context));
  }

  create(header: SessionHeader): Promise<void> {
    return this.#writes.create(header);
  }

  append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    return this.#writes.append(id, events, options);
  }

  load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    return this.#reads.load(id, options);
  }

  /** The session's stats from its row and two indexed reads (`reads.ts`). */
  summarize(id: string): Promise<SessionStats> {
    return this.#reads.summarize(id);
  }

  /** Follows a session's commits, this store's and other connections' (`reads.ts`). */
  watch(id: string, options: WatchOptions = {}): AsyncIterable<SessionEvent> {
    return this.#reads.watch(id, options);
  }

  list(options: ListOptions = {}): Promise<SessionPage> {
    return this.#reads.list(options);
  }

  delete(id: string): Promise<void> {
    return this.#writes.delete(id);
  }

  lock(id: string): Promise<SessionLock> {
    return this.#locks.lock(id);
  }

  /** Removes a session's lock row: a stale one at once, a live one only with `force`. */
  unlock(id: string, options: UnlockOptions = {}): Promise<UnlockReport> {
    return this.#locks.unlock(id, options);
  }

  /** Checks the arguments and the lock; a SQLite database never has a torn tail to drop. */
  discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    return this.#writes.discardTornTail(id, tail, lock);
  }

  replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void> {
    return this.#writes.replaceLog(id, events, options, lock);
  }

  /**
   * The FTS5 search index in this database, its tables made by the first call (a migration that
   * adds, so no schema version moves); `undefined` on a read-only connection, which cannot keep
   * it current (a search then scans).
   */
  async searchIndex(): Promise<SearchIndex | undefined> {
    this.#context.assertOpen();
    if (this.#context.readOnly) return undefined;
    this.#search ??= new Fts5SearchIndex(this.#context.db, 'store');
    return this.#search;
  }

  /** Releases the locks this store holds and closes the connection. Idempotent. */
  async close(): Promise<void> {
    const context = this.#context;
    if (context.closed) return;
    context.markClosed();
    const released = this.#locks.releaseAll();
    await context.settleLedger();
    const closed = context.closeConnection();
    const failure = released ?? closed;
    if (failure !== undefined) throw context.storageError('close', failure);
  }
}
