/**
 * The PostgreSQL store: the `SessionStore` contract for a fleet of workers sharing one database.
 *
 * - Optimistic concurrency: an append locks the session's row (`SELECT ... FOR UPDATE`), checks
 *   `expectedSeq` against `next_seq`, inserts its rows (`(session, seq)` is the primary key) and
 *   advances `next_seq`, all in one transaction: two racing workers get one winner and one
 *   `ConflictError`, never a gap or a duplicate.
 * - One writer per session across hosts, by lease (`leases.ts`): a lease row naming its owner, a
 *   token unique to each acquisition, and an expiry the holder's heartbeat keeps pushing back. An
 *   append checks, inside its transaction and under a share lock of the lease row, that the
 *   lease is still its own: a writer whose lease was taken over is fenced off (`LeaseLostError`).
 * - Connection loss: an append that loses its connection retries within `retryMs`; a retry first
 *   reads what the session holds, so a batch the server committed before the client heard is
 *   recognised (the same rows at the same seqs) and applied exactly once.
 * - Every committed append notifies `palimpsest_<schema>` with the session and its new length,
 *   for `watch`.
 *
 * The class is the contract's face: the reads are in `reads.ts`, the writes in `writes.ts`, the
 * leases in `leases.ts`, and what they share in `context.ts`.
 */
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import type { LoadedSession } from '../contract/loaded-session.js';
import type { LockClock } from '../contract/lock-clock.js';
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
import { asStorageError } from '../contract/store-rules.js';
import type { SearchIndex, SearchIndexedStore } from '../search/search-index.js';
import { PgContext, type PostgresSettings } from './context.js';
import type { PgPool } from './driver.js';
import { Leases } from './leases.js';
import { listSessions, loadSession, summarizeSession, watchSession } from './reads.js';
import { PgSearchIndex } from './search-index.js';
import {
  appendEvents,
  createSession,
  deleteSession,
  discardTornTail,
  replaceLog,
} from './writes.js';

/** A store of sessions in one PostgreSQL schema. Open it with `openPostgresStore`. */
export class PostgresStore implements SessionStore, SearchIndexedStore {
  readonly location: string;
  readonly settings: PostgresSettings;
  /** The channel every committed append notifies, with `<id length>:<id> <next seq>`. */
  readonly channel: string;
  readonly #ctx: PgContext;
  readonly #ownsPool: boolean;
  readonly #leases: Leases;
  #search: PgSearchIndex | undefined;

  /**
   * Use `openPostgresStore`: it creates or checks the schema first.
   *
   * @param lockClock times the leases (stamps, judges and renews them) in place of the server's
   *   clock; see `leases.ts`.
   */
  constructor(
    pool: PgPool,
    ownsPool: boolean,
    location: string,
    settings: PostgresSettings,
    lockClock?: LockClock,
  ) {
    this.#ctx = new PgContext(pool, location, settings);
    this.#ownsPool = ownsPool;
    this.location = location;
    this.settings = settings;
    this.channel = this.#ctx.channel;
    this.#leases = new Leases(this.#ctx, lockClock);
  }

  create(header: SessionHeader): Promise<void> {
    return createSession(this.#ctx, header);
  }

  append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    return appendEvents(this.#ctx, this.#leases, id, events, options);
  }

  load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    return loadSession(this.#ctx, id, options);
  }

  /**
   * Follows a session through LISTEN/NOTIFY on {@link PostgresStore.channel}, with a catch-up
   * read after every notification, reconnect and poll (see `listener.ts`), so no event is missed
   * or repeated across reconnects.
   */
  watch(id: string, options: WatchOptions = {}): AsyncIterable<SessionEvent> {
    return watchSession(this.#ctx, id, options);
  }

  list(options: ListOptions = {}): Promise<SessionPage> {
    return listSessions(this.#ctx, options);
  }

  delete(id: string): Promise<void> {
    return deleteSession(this.#ctx, this.#leases, id);
  }

  lock(id: string): Promise<SessionLock> {
    return this.#leases.lock(id);
  }

  /**
   * Removes a session's lease on an operator's request (`palimpsest unlock`): a lapsed one (not
   * renewed for `leaseMs`, or its owner gone from this host) at once, one in force only with
   * `force`.
   */
  unlock(id: string, options: UnlockOptions = {}): Promise<UnlockReport> {
    return this.#leases.unlock(id, options);
  }

  /**
   * The session's stats from its row, the last event's time and the events of the types the
   * stats need (selected by type on the server: no other row's data is sent).
   */
  summarize(id: string): Promise<SessionStats> {
    return summarizeSession(this.#ctx, id);
  }

  /**
   * Checks the arguments and the lease, and drops nothing: each batch is one transaction, so a
   * database never has a torn tail.
   */
  discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    return discardTornTail(this.#ctx, this.#leases, id, tail, lock);
  }

  replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void> {
    return replaceLog(this.#ctx, this.#leases, id, events, options, lock);
  }

  /**
   * The full-text index in this store's schema (a `tsvector` per message with a GIN index, see
   * `search-index.ts`), its tables made by the first call (additive: the schema version does not
   * move); `undefined` for a read-only store, which cannot keep it current (a search then scans).
   */
  async searchIndex(): Promise<SearchIndex | undefined> {
    this.#ctx.assertOpen();
    if (this.settings.readOnly) return undefined;
    this.#search ??= new PgSearchIndex(this.#ctx);
    await this.#search.ready();
    return this.#search;
  }

  /** Stops the heartbeats, releases the leases this store holds, and ends its own pool. */
  async close(): Promise<void> {
    if (this.#ctx.closed) return;
    this.#ctx.close();
    let failure: unknown;
    try {
      await this.#leases.releaseAll();
    } catch (error) {
      // A lease left behind expires within its bound.
      failure = error;
    }
    if (this.#ownsPool) {
      try {
        await this.#ctx.pool.end();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw asStorageError('close', this.location, failure);
  }
}
