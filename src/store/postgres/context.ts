/**
 * What a PostgreSQL store's reads, writes and leases share: its pool, where it is, its settings,
 * the quoted schema its statements name and the channel its appends notify, and the three ways
 * a statement runs (retried over lost connections, in a transaction, in a read-only snapshot).
 */
import { InvalidStoreError, StoreUnavailableError } from '../contract/errors.js';
import { asStorageError, assertOpen } from '../contract/store-rules.js';
import { isConnectionFailure, type PgPool, type PgPoolClient, type PgQueryable } from './driver.js';
import { quoted } from './schema.js';

/** The settings a store was opened with, resolved. */
export interface PostgresSettings {
  readonly schema: string;
  readonly readOnly: boolean;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly retryMs: number;
}

/** First pause before a retry after a lost connection; doubled up to the cap. */
const RETRY_FIRST_MS = 50;
const RETRY_CAP_MS = 1000;

/** The shared state of one store, and the way its statements run. */
export class PgContext {
  readonly pool: PgPool;
  readonly location: string;
  readonly settings: PostgresSettings;
  /** The schema, quoted for statements. */
  readonly s: string;
  /** The channel every committed append notifies, with `<id length>:<id> <next seq>`. */
  readonly channel: string;
  #closed = false;

  constructor(pool: PgPool, location: string, settings: PostgresSettings) {
    this.pool = pool;
    this.location = location;
    this.settings = settings;
    this.s = quoted(settings.schema);
    this.channel = `palimpsest_${settings.schema}`;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Marks the store closed: every operation from now on is refused. */
  close(): void {
    this.#closed = true;
  }

  assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }

  assertWritable(): void {
    this.assertOpen();
    if (this.settings.readOnly) {
      throw new InvalidStoreError(
        'READ_ONLY',
        `${this.location} was opened read-only; writes are refused`,
      );
    }
  }

  /** Where rows of session `id` come from, for messages. */
  site(id: string): { readonly location: string; readonly id: string } {
    return { location: this.location, id };
  }

  /**
   * Runs `work` on a pooled client, again on a fresh one (with `retry` set) while the connection
   * is lost, until `retryMs` has passed: then `StoreUnavailableError`. Other failures pass
   * through as typed errors.
   */
  async retrying<T>(
    action: string,
    work: (client: PgPoolClient, retry: boolean) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + this.settings.retryMs;
    let pause = RETRY_FIRST_MS;
    let started = false;
    for (let attempt = 0; ; attempt++) {
      this.assertOpen();
      let client: PgPoolClient | undefined;
      try {
        client = await this.pool.connect();
        // A connection that drops between two queries is reported as an event of the client
        // (which would be an uncaught error with no listener); the next query rejects anyway.
        client.on('error', ignore);
        started = true;
        const result = await work(client, attempt > 0);
        client.removeListener('error', ignore);
        client.release();
        return result;
      } catch (error) {
        const lost = isConnectionFailure(error);
        client?.removeListener('error', ignore);
        client?.release(lost ? toError(error) : undefined);
        if (!lost) throw asStorageError(action, this.location, error);
        if (Date.now() + pause > deadline) {
          throw new StoreUnavailableError(action, this.location, started ? 'unknown' : 'none', {
            cause: error,
          });
        }
        await sleep(pause);
        pause = Math.min(pause * 2, RETRY_CAP_MS);
      }
    }
  }
}

/**
 * Runs `work` in a transaction on `client`, rolled back when it throws. With `idleLimitMs`, the
 * server ends the connection if the client leaves the transaction idle that long: a writer
 * frozen inside it (a stopped process, a stalled host) would otherwise hold its row locks, and
 * every worker that waits on them, for as long as it stays frozen. Writers pass their lease
 * length: a writer idle that long has lost its lease anyway.
 */
export async function transaction<T>(
  client: PgQueryable,
  work: () => Promise<T>,
  idleLimitMs?: number,
): Promise<T> {
  if (idleLimitMs === undefined) return inTransaction(client, 'BEGIN', work);
  return inTransaction(client, 'BEGIN', async () => {
    // SET cannot take a parameter; the value is an integer the store resolved itself.
    await client.query(
      `SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, Math.round(idleLimitMs))}`,
    );
    return work();
  });
}

/** Runs `work` in a read-only snapshot: every read sees the same committed state. */
export function snapshot<T>(client: PgQueryable, work: () => Promise<T>): Promise<T> {
  return inTransaction(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', work);
}

/** The payload of an append's notification: the id (length-prefixed, ids may hold spaces) and its new length. */
export function notification(id: string, next: number): string {
  return `${id.length}:${id} ${next}`;
}

/** Runs `work` between `begin` and `COMMIT` on `client`, rolled back when it throws. */
async function inTransaction<T>(
  client: PgQueryable,
  begin: string,
  work: () => Promise<T>,
): Promise<T> {
  await client.query(begin);
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

function ignore(): void {}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
