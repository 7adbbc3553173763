/**
 * Leases: one writer per session across hosts.
 *
 * A lease is a row of `leases`: the owner record (pid, host, start time, boot id, a random token
 * unique to this acquisition), and an expiry in the server's clock. The holder's heartbeat pushes
 * the expiry back every `heartbeatMs`; a lease not renewed for `leaseMs` is free for the next
 * worker to take, and so is one whose owner is provably dead on this host (the same liveness rule
 * as the file and SQLite locks). Why a row rather than an advisory lock: an advisory lock belongs
 * to one connection, which a pool recycles and a transaction-mode pooler (PgBouncer) does not
 * keep, and it gives no fencing token; a row survives reconnects, carries its token into every
 * append's transaction, and says who holds it and until when.
 *
 * Fencing: an append by a holder reads the lease row under a share lock inside its transaction
 * and proceeds only if the token is still its own, so a takeover (which updates that row) is
 * serialised with it: the old holder's append either commits before the takeover, and the new
 * holder's load sees it, or finds the new token and is refused (`LeaseLostError`).
 */
import type { SessionLock } from '../contract.js';
import { InvalidStoreError, LeaseLostError, LockedError, type LockOwner } from '../errors.js';
import { liveOwnerOf, parseOwner } from '../lock-owner.js';
import type { PgPool, PgQueryable } from './driver.js';

/** What the leases need of the store's settings. */
export interface LeaseSettings {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
}

interface LeaseRow {
  readonly owner: string;
  readonly token: string;
  readonly live: boolean;
}

/** A lease this store holds. */
interface Held {
  readonly owner: LockOwner;
  readonly token: string;
  readonly timer: ReturnType<typeof setInterval>;
  /** Set once a heartbeat found the lease taken over. */
  lost: boolean;
}

/** The leases of one store: taking, renewing, checking and releasing them. */
export class Leases {
  readonly #pool: PgPool;
  readonly #s: string;
  readonly #settings: LeaseSettings;
  readonly #location: string;
  readonly #held = new Map<string, Held>();

  constructor(pool: PgPool, schema: string, settings: LeaseSettings, location: string) {
    this.#pool = pool;
    this.#s = schema;
    this.#settings = settings;
    this.#location = location;
  }

  /**
   * Takes the session's lease, or fails with `LockedError` naming the live holder. The session
   * need not exist yet.
   */
  async acquire(client: PgQueryable, id: string, owner: LockOwner): Promise<SessionLock> {
    const mine = this.#held.get(id);
    if (mine !== undefined) throw new LockedError(id, mine.owner);
    await client.query('BEGIN');
    try {
      const row = await this.#row(client, id, 'FOR UPDATE');
      // An earlier attempt of this very acquisition may have committed before its connection
      // was lost: the row then carries this owner's token.
      if (row?.token !== owner.token) {
        const holder = row === undefined ? undefined : liveHolderOf(row);
        if (holder !== undefined) throw new LockedError(id, holder);
        // A taker that found no row may race another: the loser's update meets a live row,
        // which the WHERE refuses, and no row comes back.
        const { rows } = await client.query<{ token: string }>(
          `INSERT INTO ${this.#s}.leases (session_id, owner, token, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
           ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
           WHERE ${this.#s}.leases.token = $5 OR ${this.#s}.leases.expires_at <= now()
           RETURNING token`,
          [id, JSON.stringify(owner), owner.token, this.#settings.leaseMs, row?.token ?? ''],
        );
        if (rows.length === 0) {
          const now = await this.#row(client, id, '');
          throw new LockedError(id, (now && parseOwner(safeJson(now.owner))) ?? owner);
        }
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
    const timer = setInterval(() => void this.#renew(id), this.#settings.heartbeatMs);
    timer.unref();
    this.#held.set(id, { owner, token: owner.token, timer, lost: false });
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
      if (row === undefined || row.token !== held.token) {
        held.lost = true;
        throw new LeaseLostError(id, row === undefined ? undefined : liveHolderOf(row));
      }
      return;
    }
    const holder = row === undefined ? undefined : liveHolderOf(row);
    if (holder !== undefined) throw new LockedError(id, holder);
  }

  /** The live holder of the session's lease, this store included, if any. */
  async liveHolder(client: PgQueryable, id: string): Promise<LockOwner | undefined> {
    const row = await this.#row(client, id, 'FOR SHARE');
    return row === undefined ? undefined : liveHolderOf(row);
  }

  /** For `discardTornTail`: the lease must be held through `owner`'s acquisition. */
  async checkHeld(client: PgQueryable, id: string, owner: LockOwner): Promise<void> {
    const row = await this.#row(client, id, '');
    if (
      row !== undefined &&
      row.token === owner.token &&
      this.#held.get(id)?.token === owner.token
    ) {
      return;
    }
    const holder = row === undefined ? undefined : liveHolderOf(row);
    if (holder !== undefined && holder.token !== owner.token) throw new LockedError(id, holder);
    throw new InvalidStoreError(`the lease of session '${id}' is no longer held; lock it again`);
  }

  /** Releases every lease this store holds (on close). */
  async releaseAll(): Promise<void> {
    let failure: unknown;
    for (const [id, held] of [...this.#held]) {
      try {
        await this.#release(id, held.token);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  async #release(id: string, token: string): Promise<void> {
    const held = this.#held.get(id);
    if (held === undefined || held.token !== token) return;
    clearInterval(held.timer);
    this.#held.delete(id);
    await this.#pool.query(`DELETE FROM ${this.#s}.leases WHERE session_id = $1 AND token = $2`, [
      id,
      token,
    ]);
  }

  /** One heartbeat: pushes the expiry back, or finds the lease gone. */
  async #renew(id: string): Promise<void> {
    const held = this.#held.get(id);
    if (held === undefined || held.lost) return;
    try {
      const { rowCount } = await this.#pool.query(
        `UPDATE ${this.#s}.leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE session_id = $1 AND token = $2`,
        [id, held.token, this.#settings.leaseMs],
      );
      if (rowCount === 0) held.lost = true;
    } catch {
      // A missed beat (the server restarting): the next one tries again; the bound is leaseMs.
    }
  }

  async #row(
    client: PgQueryable,
    id: string,
    lock: '' | 'FOR SHARE' | 'FOR UPDATE',
  ): Promise<LeaseRow | undefined> {
    const { rows } = await client.query<LeaseRow>(
      `SELECT owner, token, expires_at > now() AS live FROM ${this.#s}.leases WHERE session_id = $1 ${lock}`,
      [id],
    );
    return rows[0];
  }

  /** Where the leases live, for messages. */
  get location(): string {
    return this.#location;
  }
}

/** The owner of a lease row if the lease is in force: not expired, and its owner not provably dead. */
function liveHolderOf(row: LeaseRow): LockOwner | undefined {
  if (!row.live) return undefined;
  return liveOwnerOf(row.owner);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
