/**
 * Leases: one writer per session across hosts.
 *
 * A lease is a row of `leases`: the owner record (pid, host, start time, boot id, a random token
 * unique to this acquisition), when it was last refreshed and when it expires. The holder's
 * heartbeat pushes the expiry back every `heartbeatMs`; a lease not renewed for `leaseMs` is free
 * for the next worker to take, and so is one whose owner is provably gone from this host (the
 * shared rule of `lock-owner.ts`, as for the file and SQLite locks). Why a row rather than an
 * advisory lock: an advisory lock belongs to one connection, which a pool recycles and a
 * transaction-mode pooler (PgBouncer) does not keep, and it gives no fencing token; a row survives
 * reconnects, carries its token into every append's transaction, and says who holds it and until
 * when.
 *
 * Fencing: an append by a holder reads the lease row under a share lock inside its transaction
 * and proceeds only if the token is still its own, so a takeover (which updates that row) is
 * serialised with it: the old holder's append either commits before the takeover, and the new
 * holder's load sees it, or finds the new token and is refused (`LeaseLostError`).
 *
 * Time: a lease is stamped and judged in the server's clock (`now()`), the one clock every
 * worker of a fleet shares, so that the hosts' clocks do not matter. A store given a
 * {@link LockClock} stamps and judges its leases by that clock instead (the time is sent with
 * each statement), and schedules its heartbeats with it: a test then lets a lease lapse, or a
 * heartbeat renew it, by moving the clock. Every store of one database must then use that clock:
 * a lease is only comparable with a time in the frame it was stamped in.
 */
import { hostname } from 'node:os';
import {
  InvalidStoreError,
  LeaseLostError,
  LockedError,
  type LockHolderState,
  type LockOwner,
} from '../contract/errors.js';
import { type LockClock, systemLockClock } from '../contract/lock-clock.js';
import {
  currentOwner,
  forgetToken,
  isOwnerAlive,
  judgeHolder,
  parseOwnerJson,
} from '../contract/lock-owner.js';
import type { SessionLock, UnlockOptions, UnlockReport } from '../contract/session-store.js';
import { checkSessionId, shortId } from '../contract/store-rules.js';
import { type PgContext, transaction } from './context.js';
import type { PgQueryable } from './driver.js';

interface LeaseRow {
  readonly owner: string;
  readonly token: string;
  /** `expires_at` later than the time the lease is judged at. */
  readonly live: boolean;
  /** `refreshed_at` as epoch ms. */
  readonly refreshed: string;
}

/** A lease row judged: who holds it, and why it must be respected (absent: it need not be). */
interface Judged {
  readonly owner: LockOwner;
  readonly refreshedAt: number;
  readonly holder: LockHolderState | undefined;
}

/** A lease this store holds. */
interface Held {
  readonly owner: LockOwner;
  /** Stops the heartbeat. */
  readonly stop: () => void;
  /** Set once a heartbeat found the lease taken over. */
  lost: boolean;
}

/** The owner reported for a lease row whose owner record cannot be read. */
const UNKNOWN_OWNER: LockOwner = { pid: 0, host: 'unknown', since: 0, token: '' };

/**
 * The time a lease is stamped and judged at, in SQL, from the statement's parameter `$n`: the
 * lock clock's time in epoch ms, or `NULL` for the server's `now()`.
 */
function at(n: number): string {
  return `coalesce(to_timestamp($${n}::float8 / 1000), now())`;
}

/** The leases of one store: taking, renewing, checking and releasing them. */
export class Leases {
  readonly #ctx: PgContext;
  readonly #s: string;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #clock: LockClock;
  /** Whether leases are stamped and judged by the lock clock rather than the server's. */
  readonly #clocked: boolean;
  readonly #held = new Map<string, Held>();

  /** With `clock`, leases are stamped, judged and renewed by it; else by the server's clock. */
  constructor(ctx: PgContext, clock: LockClock | undefined) {
    this.#ctx = ctx;
    this.#s = ctx.s;
    this.#leaseMs = ctx.settings.leaseMs;
    this.#heartbeatMs = ctx.settings.heartbeatMs;
    this.#clock = clock ?? systemLockClock;
    this.#clocked = clock !== undefined;
  }

  /**
   * Takes the session's lease for a new owner record, or fails with `LockedError` naming the
   * live holder. The session need not exist yet.
   */
  async lock(id: string): Promise<SessionLock> {
    this.#ctx.assertWritable();
    checkSessionId(id);
    // One owner record for every attempt, so that a retry after a lost connection recognises
    // its own committed attempt.
    const owner = currentOwner(this.#heartbeatMs, this.#clock.now());
    try {
      return await this.#ctx.retrying(`lock session '${shortId(id)}'`, (client) =>
        this.#acquire(client, id, owner),
      );
    } catch (error) {
      forgetToken(owner.token);
      throw error;
    }
  }

  /**
   * Removes a session's lease on an operator's request: a lapsed one at once, one in force only
   * with `force` (else `LockedError` naming the holder and when it last renewed the lease).
   */
  async unlock(id: string, options: UnlockOptions): Promise<UnlockReport> {
    this.#ctx.assertWritable();
    checkSessionId(id);
    return this.#ctx.retrying(`unlock session '${shortId(id)}'`, (client) =>
      transaction(client, () => this.#unlock(client, id, options), this.#leaseMs),
    );
  }

  async #acquire(client: PgQueryable, id: string, owner: LockOwner): Promise<SessionLock> {
    const mine = this.#held.get(id);
    if (mine !== undefined) throw new LockedError(id, mine.owner);
    await transaction(
      client,
      async () => {
        const row = await this.#row(client, id, 'FOR UPDATE');
        // An earlier attempt of this very acquisition may have committed before its connection
        // was lost: the row then carries this owner's token.
        if (row?.token !== owner.token) {
          const found = row === undefined ? undefined : this.#judge(row);
          if (found?.holder !== undefined) throw new LockedError(id, found.owner, found.holder);
          // A taker that found no row may race another: the loser's update meets a live row,
          // which the WHERE refuses, and no row comes back.
          const { rows } = await client.query<{ token: string }>(
            `INSERT INTO ${this.#s}.leases (session_id, owner, token, refreshed_at, expires_at) VALUES ($1, $2, $3, ${at(6)}, ${at(6)} + $4 * interval '1 millisecond')
           ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token, refreshed_at = EXCLUDED.refreshed_at, expires_at = EXCLUDED.expires_at
           WHERE ${this.#s}.leases.token = $5 OR ${this.#s}.leases.expires_at <= ${at(6)}
           RETURNING token`,
            [id, JSON.stringify(owner), owner.token, this.#leaseMs, row?.token ?? '', this.#time()],
          );
          if (rows.length === 0) {
            const now = await this.#row(client, id, '');
            const judged = now === undefined ? undefined : this.#judge(now);
            throw new LockedError(id, judged?.owner ?? UNKNOWN_OWNER, judged?.holder);
          }
        }
      },
      this.#leaseMs,
    );
    const stop = this.#clock.every(this.#heartbeatMs, () => void this.#renew(id));
    this.#held.set(id, { owner, stop, lost: false });
    return {
      sessionId: id,
      owner,
      release: () => this.#release(id, owner.token),
    };
  }

  /**
   * Inside an append's transaction: the lease must be this store's if it holds one
   * (`LeaseLostError` once taken over), and no live writer's but its own otherwise
   * (`LockedError`).
   */
  async checkWriter(client: PgQueryable, id: string): Promise<void> {
    const row = await this.#row(client, id, 'FOR SHARE');
    const held = this.#held.get(id);
    if (held !== undefined) {
      if (row === undefined || row.token !== held.owner.token) {
        held.lost = true;
        throw new LeaseLostError(id, row === undefined ? undefined : this.#judge(row).owner);
      }
      return;
    }
    this.#refuseLive(id, row);
  }

  /** Refuses (`LockedError`) while a lease of the session is in force, this store's included. */
  async refuseHeld(client: PgQueryable, id: string): Promise<void> {
    this.#refuseLive(id, await this.#row(client, id, 'FOR SHARE'));
  }

  /** For `discardTornTail`: the lease must be held through `owner`'s acquisition. */
  async checkHeld(client: PgQueryable, id: string, owner: LockOwner): Promise<void> {
    const row = await this.#row(client, id, '');
    if (
      row !== undefined &&
      row.token === owner.token &&
      this.#held.get(id)?.owner.token === owner.token
    ) {
      return;
    }
    const found = row === undefined ? undefined : this.#judge(row);
    if (found?.holder !== undefined && found.owner.token !== owner.token) {
      throw new LockedError(id, found.owner, found.holder);
    }
    throw new InvalidStoreError(
      'LOCK_NOT_HELD',
      `the lease of session '${id}' is no longer held; lock it again`,
    );
  }

  async #unlock(client: PgQueryable, id: string, options: UnlockOptions): Promise<UnlockReport> {
    const row = await this.#row(client, id, 'FOR UPDATE');
    if (row === undefined) return { removed: false };
    const found = this.#judge(row);
    if (found.holder !== undefined && options.force !== true) {
      throw new LockedError(id, found.owner, found.holder);
    }
    await client.query(`DELETE FROM ${this.#s}.leases WHERE session_id = $1 AND token = $2`, [
      id,
      row.token,
    ]);
    return {
      removed: true,
      owner: found.owner,
      refreshedAt: found.refreshedAt,
      wasLive: found.holder !== undefined,
    };
  }

  /** Releases every lease this store holds (on close). */
  async releaseAll(): Promise<void> {
    let failure: unknown;
    for (const [id, held] of [...this.#held]) {
      try {
        await this.#release(id, held.owner.token);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  async #release(id: string, token: string): Promise<void> {
    const held = this.#held.get(id);
    if (held === undefined || held.owner.token !== token) return;
    held.stop();
    this.#held.delete(id);
    try {
      await this.#ctx.pool.query(
        `DELETE FROM ${this.#s}.leases WHERE session_id = $1 AND token = $2`,
        [id, token],
      );
    } finally {
      // Not held any more, released or not: a row left behind lapses within leaseMs.
      forgetToken(token);
    }
  }

  /** One heartbeat: pushes the expiry back, or finds the lease gone. */
  async #renew(id: string): Promise<void> {
    const held = this.#held.get(id);
    if (held === undefined || held.lost) return;
    try {
      const { rowCount } = await this.#ctx.pool.query(
        `UPDATE ${this.#s}.leases SET refreshed_at = ${at(4)}, expires_at = ${at(4)} + $3 * interval '1 millisecond' WHERE session_id = $1 AND token = $2`,
        [id, held.owner.token, this.#leaseMs, this.#time()],
      );
      if (rowCount === 0) held.lost = true;
    } catch {
      // A missed beat (the server restarting): the next one tries again; the bound is leaseMs.
    }
  }

  #refuseLive(id: string, row: LeaseRow | undefined): void {
    const found = row === undefined ? undefined : this.#judge(row);
    if (found?.holder !== undefined) throw new LockedError(id, found.owner, found.holder);
  }

  /**
   * Whether a lease is in force: not expired at the time it is judged at and, for an owner on this
   * host, held by a running process (the shared rule, which sees a dead or orphaned owner at
   * once). An owner record that cannot be read leaves the lease to its expiry.
   */
  #judge(row: LeaseRow): Judged {
    const refreshedAt = Number(row.refreshed);
    const owner = parseOwnerJson(row.owner);
    if (owner === undefined) {
      return {
        owner: UNKNOWN_OWNER,
        refreshedAt,
        holder: row.live ? { basis: 'fresh', refreshedAt, staleMs: this.#leaseMs } : undefined,
      };
    }
    if (!row.live) return { owner, refreshedAt, holder: undefined };
    if (owner.host === hostname()) {
      // The process check alone decides on this host; the expiry has not come yet.
      const now = this.#clock.now();
      const holder = judgeHolder(owner, now, this.#leaseMs, isOwnerAlive, now);
      return { owner, refreshedAt, holder };
    }
    return { owner, refreshedAt, holder: { basis: 'fresh', refreshedAt, staleMs: this.#leaseMs } };
  }

  /** The time parameter of {@link at}: the lock clock's now, or `null` for the server's. */
  #time(): number | null {
    return this.#clocked ? this.#clock.now() : null;
  }

  async #row(
    client: PgQueryable,
    id: string,
    lock: '' | 'FOR SHARE' | 'FOR UPDATE',
  ): Promise<LeaseRow | undefined> {
    const { rows } = await client.query<LeaseRow>(
      `SELECT owner, token, expires_at > ${at(2)} AS live, (extract(epoch FROM refreshed_at) * 1000)::bigint AS refreshed FROM ${this.#s}.leases WHERE session_id = $1 ${lock}`,
      [id, this.#time()],
    );
    return rows[0];
  }
}
