/**
 * The writer locks of a SQLite store: a row of `locks` per locked session holding its owner
 * record, refreshed by a heartbeat; the judgement of a row another writer left (the shared rule
 * of `lock-owner.ts`, timed by the store's `LockClock`); and fencing, which refuses the appends
 * of a writer that lost its lock.
 */

import {
  LeaseLostError,
  LockedError,
  type LockHolderState,
  type LockOwner,
} from '../contract/errors.js';
import {
  currentOwner,
  forgetToken,
  isOwnerAlive,
  judgeHolder,
  parseOwnerJson,
} from '../contract/lock-owner.js';
import type { SessionLock, UnlockOptions, UnlockReport } from '../contract/session-store.js';
import { checkSessionId } from '../contract/store-rules.js';
import type { SqliteContext } from './context.js';
import type { SqliteDatabase } from './schema.js';

/** A lock this store holds: its owner, the row's current text, how to stop its heartbeat. */
interface HeldRow {
  readonly owner: LockOwner;
  stored: string;
  stopHeartbeat: (() => void) | undefined;
}

/** A lock row as read and judged. */
export interface FoundLock {
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

/** The locks one store takes, holds, judges and releases. */
export class SqliteLocks {
  readonly #context: SqliteContext;
  /** Locks this store took and still holds, by session id. */
  readonly #held = new Map<string, HeldRow>();
  /** Sessions whose lock this store held until another writer took it over (fenced off). */
  readonly #lost = new Set<string>();

  constructor(context: SqliteContext) {
    this.#context = context;
  }

  async lock(id: string): Promise<SessionLock> {
    const context = this.#context;
    context.assertWritable();
    checkSessionId(id);
    const { sql } = context;
    const { heartbeatMs, clock } = context.timing;
    const owner = currentOwner(heartbeatMs, clock.now());
    const held: HeldRow = { owner, stored: JSON.stringify(owner), stopHeartbeat: undefined };
    try {
      const take = context.db.transaction(() => {
        const found = this.lockOf(id);
        if (found?.holder !== undefined) throw found.locked();
        sql.putLock.run(id, held.stored);
      });
      await context.retry(`lock session '${id}'`, () => take.immediate());
    } catch (error) {
      forgetToken(owner.token);
      throw context.storageError(`lock session '${id}'`, error);
    }
    this.#held.set(id, held);
    this.#lost.delete(id);
    try {
      context.failpoint('lock:after-acquire');
    } catch (error) {
      this.#forget(id, held);
      try {
        sql.dropLock.run(id, held.stored);
      } catch {
        // Left behind, the row is recovered once this process is gone.
      }
      throw context.storageError(`lock session '${id}'`, error);
    }
    this.#startHeartbeat(id, held);
    return {
      sessionId: id,
      owner,
      release: async () => {
        if (context.closed || this.#held.get(id) !== held) return;
        // Forgotten first: if the delete fails, the row is an orphan of this process, which
        // a later lock() here takes over (and another process once this one is gone).
        this.#forget(id, held);
        const action = `release the lock of session '${id}'`;
        try {
          await context.retry(action, () => sql.dropLock.run(id, held.stored));
        } catch (error) {
          throw context.storageError(action, error);
        }
      },
    };
  }

  /**
   * Removes a session's lock row: a stale one at once, a live one (its process runs on this
   * host, or its heartbeat is fresh) only with `force`.
   */
  async unlock(id: string, options: UnlockOptions): Promise<UnlockReport> {
    this.#context.assertWritable();
    checkSessionId(id);
    const { db, sql } = this.#context;
    try {
      const remove = db.transaction((): UnlockReport => {
        const row = sql.lockRow.get(id) as { owner: string } | undefined;
        if (row === undefined) return { removed: false };
        const found = this.lockOf(id);
        if (found?.holder !== undefined && options.force !== true) throw found.locked();
        sql.dropLock.run(id, row.owner);
        return {
          removed: true,
          owner: found?.owner ?? unknownOwner(),
          refreshedAt: found?.refreshedAt ?? 0,
          wasLive: found?.holder !== undefined,
        };
      });
      return await this.#context.retry(`unlock session '${id}'`, () => remove.immediate());
    } catch (error) {
      throw this.#context.storageError(`unlock session '${id}'`, error);
    }
  }

  /**
   * The session's lock row as judged by the shared rule (`lock-owner.ts`) at the clock's time:
   * `holder` is set when it must be respected; a row whose owner is gone, whose heartbeat is
   * stale, or that is not an owner record at all, has none.
   */
  lockOf(id: string): FoundLock | undefined {
    const row = this.#context.sql.lockRow.get(id) as { owner: string } | undefined;
    if (row === undefined) return undefined;
    const owner = parseOwnerJson(row.owner);
    if (owner === undefined) return undefined;
    const refreshedAt = refreshedAtOf(row.owner) ?? owner.since;
    const { staleMs, clock } = this.#context.timing;
    const holder = judgeHolder(owner, refreshedAt, staleMs, isOwnerAlive, clock.now());
    return { owner, refreshedAt, holder, locked: () => new LockedError(id, owner, holder) };
  }

  /**
   * Fencing, inside an append's transaction: a session this store holds must still be locked by
   * its own acquisition (another writer may have judged it stale, or an operator forced it), and
   * one it does not hold must not be held by a live writer. Either refusal rolls the append back.
   */
  checkWriter(id: string): void {
    const held = this.#held.get(id);
    const row = this.#context.sql.lockRow.get(id) as { owner: string } | undefined;
    if (held !== undefined) {
      if (row?.owner === held.stored) return;
      const owner = row === undefined ? undefined : parseOwnerJson(row.owner);
      if (owner?.token === held.owner.token) return;
      this.#fence(id, held);
    }
    if (this.#lost.has(id)) {
      throw new LeaseLostError(id, row === undefined ? undefined : parseOwnerJson(row.owner));
    }
    const found = row === undefined ? undefined : this.lockOf(id);
    if (found?.holder !== undefined) throw found.locked();
  }

  /**
   * Stops every heartbeat and deletes every lock row this store holds (at close); returns the
   * first failure. A lock left behind is recovered by the next writer once this process is gone.
   */
  releaseAll(): unknown {
    let failure: unknown;
    for (const [id, held] of [...this.#held]) {
      this.#forget(id, held);
      try {
        this.#context.sql.dropLock.run(id, held.stored);
      } catch (error) {
        failure ??= error;
      }
    }
    return failure;
  }

  /**
   * Refreshes the lock row every `heartbeatMs` of the store's clock with the clock's time in its
   * `refreshedAt` field, so that openers on other hosts can tell a live holder from a dead one.
   * The update names the row's exact text: a row another writer replaced is never touched, and
   * the lock counts as lost. A refresh that finds the database busy waits briefly and skips the
   * beat (the stale bound allows several); the heartbeat never keeps the process alive, and is
   * stopped on release and close.
   */
  #startHeartbeat(id: string, held: HeldRow): void {
    const context = this.#context;
    const { heartbeatMs, clock } = context.timing;
    const stop = clock.every(heartbeatMs, () => {
      if (context.closed || this.#held.get(id) !== held) {
        stop();
        return;
      }
      const next = JSON.stringify({ ...held.owner, refreshedAt: clock.now() });
      try {
        const changed = withBusyTimeout(context.db, HEARTBEAT_BUSY_MS, () =>
          context.sql.refreshLock.run(next, id, held.stored),
        );
        if (changed.changes === 1) held.stored = next;
        else this.#fence(id, held);
      } catch {
        // Busy or failing: skipped; the next beat tries again.
      }
    });
    held.stopHeartbeat = stop;
  }

  /** Forgets a lock another writer took over; this store's appends to it fail from now on. */
  #fence(id: string, held: HeldRow): void {
    this.#forget(id, held);
    this.#lost.add(id);
  }

  /** Stops tracking a lock this store took: its heartbeat, and its token as held. */
  #forget(id: string, held: HeldRow): void {
    held.stopHeartbeat?.();
    if (this.#held.get(id) === held) this.#held.delete(id);
    forgetToken(held.owner.token);
  }
}
