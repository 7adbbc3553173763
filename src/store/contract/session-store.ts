/**
 * The `SessionStore` contract every backend implements (and `test/conformance/` checks).
 */

import type { SessionEvent, SessionHeader, UsageTotals } from '../../core/index.js';
import type {
  CorruptLogError,
  FormatVersionError,
  LedgerError,
  LockOwner,
  UnsafeFileError,
} from './errors.js';
import type { LoadedSession } from './loaded-session.js';

/**
 * The unacknowledged remains of a batch a crash interrupted. Only a store that writes a batch in
 * more than one step can leave one: a file store (a crash between the first byte and the commit
 * marker). A database commits each batch in one transaction and never reports a torn tail.
 */
export interface TornTail {
  /**
   * The events committed before the tail: the seq its batch began at, which is the `events.length`
   * of the load that reported it and the next seq once the tail is dropped. The same meaning in
   * every backend.
   */
  readonly committedSeq: number;
  /** Why the tail is considered torn. */
  readonly reason: string;
  /**
   * Where the tail lies, in a store that keeps a session as bytes (a file): the committed log
   * ends at byte `offset`, and the `size` bytes after it would be dropped.
   */
  readonly bytes?: TornBytes;
}

/** The byte span of a {@link TornTail} in a file. */
export interface TornBytes {
  readonly offset: number;
  readonly size: number;
}

/** One entry of {@link SessionStore.list}, read from headers or an index, never from whole logs. */
export interface SessionSummary {
  readonly header: SessionHeader;
  /** Last write, epoch ms, when the store knows it. */
  readonly updatedAt?: number;
  /** Events stored, when the store knows it without reading the log. */
  readonly eventCount?: number;
  /** Bytes on disk, when the store knows it. */
  readonly sizeBytes?: number;
}

/**
 * What {@link SessionStore.summarize} reads of one session without loading its events: the
 * counts a listing shows. Integrity is not checked beyond what reading these takes (`load` and
 * `verify` check every event).
 */
export interface SessionStats {
  readonly header: SessionHeader;
  /** Committed events (a torn final batch is not counted). */
  readonly eventCount: number;
  /** The `time` of the last committed event; absent when there is none. */
  readonly lastEventTime?: number;
  /** The `turn` of the last `turn/start`, 0 when there is none (as `lastTurnNumber`). */
  readonly lastTurn: number;
  /** Reported usage, as `sessionUsage(session).total` counts it (`usageTotals`). */
  readonly usage: UsageTotals;
  /** The same per model (`provider:model`; `compaction` for summarizers the log does not name). */
  readonly usageByModel: Readonly<Record<string, UsageTotals>>;
}

/** Options of {@link SessionStore.list}. */
export interface ListOptions {
  /** Most sessions per page (default 100). */
  readonly limit?: number;
  /** `nextCursor` of the previous page (with the same filters). */
  readonly cursor?: string;
  /** Only sessions created after this time (`createdAt >` it, epoch ms). */
  readonly createdAfter?: number;
  /** Only sessions created before this time (`createdAt <` it, epoch ms). */
  readonly createdBefore?: number;
  /** Only sessions forked (or salvaged) from this one: `header.parentSession` equal to it. */
  readonly parentSession?: string;
  /** Only sessions whose id starts with this text (case-sensitive, no wildcards). */
  readonly idPrefix?: string;
}

/**
 * A session `list` found but cannot summarize: its header is damaged or of another format
 * version, or (SQLite) the database lost it or some of its acknowledged events. A load of it
 * fails with the same error.
 */
export interface DamagedSession {
  /** The session's id, when the store can tell it (a file named by a hashed id cannot). */
  readonly id?: string;
  /** Why it cannot be read: what a load of it rejects with. */
  readonly error: CorruptLogError | FormatVersionError | UnsafeFileError | LedgerError;
}

/**
 * A page of sessions, newest first (by `createdAt`, then id), those the filters of
 * {@link ListOptions} admit. Damaged sessions are never left out silently (nor by a filter,
 * which cannot read their headers): each is reported in `damaged` of exactly one page (the page its row falls in,
 * or the first page when the store cannot place it), and a caller that walks every page sees
 * every one of them.
 */
export interface SessionPage {
  readonly sessions: readonly SessionSummary[];
  /** Sessions found but unreadable; absent when there are none on this page. */
  readonly damaged?: readonly DamagedSession[];
  /** Present when more sessions follow. */
  readonly nextCursor?: string;
}

/** Options of {@link SessionStore.load}. */
export interface LoadOptions {
  /**
   * Return finished `assistant/chunk` events (those that a later `assistant/message` of the log
   * cites in its `sourceEventSeqs`) as stubs, without reading or parsing their bodies: the
   * chunk's `seq`, `time`, `type` and `sourceEventSeqs`, with the frozen marker
   * `{elided: {bytes}}` of `elidedChunkData` as its `data`. Chunks no message cites (the stream of
   * a turn still open) come back in full, and a store may return any chunk in full. Stubs are
   * accepted only as a session's seed (see `docs/format.md`, "Elided chunks"). Default `false`.
   * What is read is checked; a store may leave the bodies unread (PostgreSQL reads no run data
   * here), and damage confined to them is then found by the next full load, not by this one.
   */
  readonly elideFinishedChunks?: boolean;
  /**
   * Read a damaged log's intact prefix instead of rejecting: damage after the header that a plain
   * load reports as a `CorruptLogError` ends `events` there and is returned in `damage`. Damage
   * that leaves nothing to read (a damaged header, a session the database lost) still rejects.
   * Chunks are returned in full. Default `false`.
   */
  readonly salvage?: boolean;
}

/** Options of {@link SessionStore.watch}. */
export interface WatchOptions {
  /** The first seq to yield (default 0: the whole log, then what follows). */
  readonly fromSeq?: number;
  /** Ends the watch: the iteration finishes (no error) once it aborts. */
  readonly signal?: AbortSignal;
}

/** Options of {@link SessionStore.append}. */
export interface AppendOptions {
  /** The seq the caller believes is next in the store; the batch's first event must carry it. */
  readonly expectedSeq: number;
}

/** A held single-writer lock. */
export interface SessionLock {
  readonly sessionId: string;
  readonly owner: LockOwner;
  /** Releases the lock; idempotent. */
  release(): Promise<void>;
}

/** Options of {@link SessionStore.replaceLog}. */
export interface ReplaceLogOptions {
  /** How many events the stored log holds now: a log that changed since is a `ConflictError`. */
  readonly expectedLength: number;
}

/** Options of {@link SessionStore.unlock}. */
export interface UnlockOptions {
  /**
   * Remove the lock even when its holder counts as live (its process runs on this host, or its
   * heartbeat is fresh). Dangerous: a holder that is in fact alive goes on writing, and two
   * writers on one session get conflicts at best. Default `false`.
   */
  readonly force?: boolean;
}

/** What {@link SessionStore.unlock} did. */
export type UnlockReport =
  /** The session was not locked; nothing changed. */
  | { readonly removed: false }
  | {
      readonly removed: true;
      /** The owner record of the lock removed. */
      readonly owner: LockOwner;
      /** When that lock was last refreshed, epoch ms. */
      readonly refreshedAt: number;
      /** Whether its holder still counted as live (only possible with `force`). */
      readonly wasLive: boolean;
    };

/**
 * Durable storage of sessions. One writer per session (see {@link SessionStore.lock}); many
 * readers. Every method rejects with a typed error (`NotFoundError`, `ConflictError`,
 * `LockedError`, `CorruptLogError`, `FormatVersionError`, `StorageError`, ...).
 */
export interface SessionStore {
  /** Where the sessions live, for messages (`jsonl:/abs/dir`, `sqlite:/abs/file.db`, ...). */
  readonly location: string;

  /**
   * Creates an empty session with this header, atomically; never overwrites an existing one
   * (`AlreadyExistsError`). Durable when it resolves.
   */
  create(header: SessionHeader): Promise<void>;

  /**
   * Appends a batch whose first event has seq `expectedSeq` and whose seqs are contiguous.
   * Resolves only once the whole batch is durable. A wrong `expectedSeq` rejects with a
   * `ConflictError` (expected and actual seq) and writes nothing: never a duplicate or a gap.
   * An empty batch is a no-op.
   */
  append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void>;

  /**
   * Reads a session without modifying anything. A torn final batch is reported in `tornTail`
   * and left out of `events`; damage anywhere else is a `CorruptLogError`. With
   * `elideFinishedChunks`, finished chunks come back as stubs (see {@link LoadOptions}).
   */
  load(id: string, options?: LoadOptions): Promise<LoadedSession>;

  /** Sessions newest first, paginated. */
  list(options?: ListOptions): Promise<SessionPage>;

  /**
   * Reads a session's {@link SessionStats} without materialising its events: only the events
   * the stats need (`turn/start`, `assistant/message`, `compaction/end`) are decoded, found by a
   * cheap type check (a file store) or selected by type (a database). `NotFoundError`,
   * `CorruptLogError` and `FormatVersionError` as `load`.
   */
  summarize(id: string): Promise<SessionStats>;

  /** Removes a session (`NotFoundError` if absent, `LockedError` while a writer holds it). */
  delete(id: string): Promise<void>;

  /**
   * Takes the session's single-writer lock. A lock whose owner died (`kill -9`) is recovered,
   * and so is one held from another host that was not refreshed within the store's stale bound
   * (a holder refreshes its lock on a heartbeat until it releases it); a live owner gives
   * `LockedError`. The session need not exist yet.
   */
  lock(id: string): Promise<SessionLock>;

  /**
   * Removes a session's lock on an operator's request (`palimpsest unlock`): a stale one (its
   * owner is gone from this host, or its heartbeat is older than the store's bound) at once; a
   * live one only with `force`, else `LockedError` naming the holder and when it last refreshed
   * the lock. Stale locks are also taken over by the next `lock()`; this is for inspection and
   * for the holder that must be dislodged.
   */
  unlock(id: string, options?: UnlockOptions): Promise<UnlockReport>;

  /**
   * Drops the torn tail `load` reported, if the log still ends with it; a log that changed since
   * (or a tail spanning nothing) is left alone. Requires the session's lock: a lock of another
   * session is an `InvalidArgumentError`, one no longer held an `InvalidStoreError` or, when
   * another writer holds the session now, a `LockedError`. A store that never reports a torn
   * tail (a database) checks the same and drops nothing.
   */
  discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void>;

  /**
   * Replaces a session's whole log with `events` (seqs from 0, contiguous) in one atomic step,
   * under its lock: afterwards the store holds exactly `events`, a crash leaves either the old
   * log or the new one, and the old log's bytes are gone from what the store owns (each
   * backend's notes in `docs/governance.md` say what that covers). The stored log must hold
   * `expectedLength` events (else `ConflictError`, nothing written) and no torn tail, and is never
   * shortened (fewer `events` is an `InvalidArgumentError`). This is how
   * a redaction erases: the caller keeps every envelope, replaces data only, and appends the
   * `log/redaction` that says why. A lock of another session is an `InvalidArgumentError`; one
   * no longer held an `InvalidStoreError` or, when another writer holds the session, a
   * `LockedError`.
   */
  replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void>;

  /**
   * Follows a session: yields its committed events from `fromSeq` on, in order and each exactly
   * once, those stored first and then each batch as it commits (by any writer, in any process),
   * until `signal` aborts or the consumer stops. Only acknowledged events are yielded, never a
   * batch still being written. Rejects with `NotFoundError` for a session that does not exist
   * (or is deleted while watched) and `CorruptLogError` for damage, like `load`.
   */
  watch(id: string, options?: WatchOptions): AsyncIterable<SessionEvent>;

  /** Releases resources (file handles, connections). Later calls reject with `ClosedError`. */
  close(): Promise<void>;
}
