/**
 * Opening a PostgreSQL store: its options checked and resolved, its pool made (or yours used),
 * and its schema created or checked, waiting out a server that is starting within `retryMs`.
 */
import { InvalidArgumentError } from '../../core/index.js';
import { StoreUnavailableError } from '../contract/errors.js';
import type { LockClock } from '../contract/lock-clock.js';
import { asStorageError } from '../contract/store-rules.js';
import { isConnectionFailure, loadPgDriver, type PgPool } from './driver.js';
import { checkSchemaName, DEFAULT_SCHEMA, describeLocation, ensureSchema } from './schema.js';
import { PostgresStore } from './store.js';

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** A pool of your own (`new pg.Pool(...)`); the store uses it and leaves it open on close. */
  readonly pool?: PgPool;
  /** Or a connection string (`postgres://user@host:5432/db`): the store makes its own pool. */
  readonly connectionString?: string;
  /** The schema (namespace) the store's tables live in (default `palimpsest`), created on first use. */
  readonly schema?: string;
  /** Open for reading only: no schema is created or upgraded, and every write is refused. */
  readonly readOnly?: boolean;
  /**
   * Whether a schema that does not exist yet is created (default `true`). With `false` (and with
   * `readOnly`) a missing store is a `StoreNotFoundError` and nothing is created.
   */
  readonly create?: boolean;
  /** How long a lease lasts without a heartbeat, in ms (default 15,000). */
  readonly leaseMs?: number;
  /** How often a holder renews its lease, in ms (default a third of `leaseMs`). */
  readonly heartbeatMs?: number;
  /** How long an operation retries after losing its connection, in ms (default 10,000). */
  readonly retryMs?: number;
  /** Connections of the pool the store makes (default 10). */
  readonly maxConnections?: number;
  /**
   * The clock leases are timed by: it stamps and judges them and schedules their heartbeats.
   * By default a lease is stamped and judged in the database server's clock (the one clock a
   * fleet shares) and renewed by the machine's timers. Give one (a test's manual clock) to every
   * store of a database, or to none: a lease is only comparable with a time of its own clock.
   */
  readonly lockClock?: LockClock;
}

const DEFAULT_LEASE_MS = 15_000;
const DEFAULT_RETRY_MS = 10_000;

/**
 * Opens the store in `schema` of the database, creating the schema on first use (in one
 * transaction, serialised between processes) and checking its version otherwise. A store of
 * schema version 3 is upgraded in place (checksums computed for its rows) by the first open that
 * may write; a read-only open refuses it.
 *
 * @example
 * ```ts
 * import { openPostgresStore } from 'palimpsest/postgres';
 *
 * async function main(url: string) {
 *   const store = await openPostgresStore({ connectionString: url, schema: 'agents' });
 *   const page = await store.list({ limit: 10 });
 *   await store.close();
 *   return page.sessions.length;
 * }
 * ```
 *
 * @throws FormatVersionError for a schema of another version (or of version 3, read-only);
 *   InvalidArgumentError for bad
 *   options; InvalidStoreError for a schema holding foreign tables, or a missing driver;
 *   StorageError or StoreUnavailableError when the server cannot be used. A refused schema is
 *   not modified.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const leaseMs = positive('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS);
  const heartbeatMs = positive(
    'heartbeatMs',
    options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)),
  );
  if (heartbeatMs >= leaseMs) {
    throw new InvalidArgumentError(
      `postgres heartbeatMs (${heartbeatMs}) must be shorter than leaseMs (${leaseMs})`,
    );
  }
  const retryMs = count('retryMs', options.retryMs ?? DEFAULT_RETRY_MS);
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new InvalidArgumentError(
      `openPostgresStore takes either a pool or a connectionString, found ${options.pool === undefined ? 'neither' : 'both'}`,
    );
  }
  const location = describeLocation(options.connectionString, schema);
  let pool = options.pool;
  const ownsPool = pool === undefined;
  if (pool === undefined) {
    const { Pool } = await loadPgDriver();
    pool = new Pool({
      connectionString: options.connectionString as string,
      max: positive('maxConnections', options.maxConnections ?? 10),
    });
    // An idle client the server drops is reported here; the next query gets a fresh one.
    pool.on('error', () => {});
  }
  const readOnly = options.readOnly === true;
  const access = readOnly ? 'read' : options.create === false ? 'write' : 'create';
  const deadline = Date.now() + retryMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    try {
      await ensureSchema(pool, schema, location, access);
      break;
    } catch (error) {
      // A server that is starting or restarting is waited for, within the retry bound.
      if (isConnectionFailure(error) && Date.now() + pause <= deadline) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        continue;
      }
      if (ownsPool) await pool.end().catch(() => {});
      if (isConnectionFailure(error)) {
        throw new StoreUnavailableError('open the store', location, 'none', { cause: error });
      }
      throw asStorageError('open the store', location, error);
    }
  }
  return new PostgresStore(
    pool,
    ownsPool,
    location,
    {
      schema,
      readOnly,
      leaseMs,
      heartbeatMs,
      retryMs,
    },
    options.lockClock,
  );
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(
      `postgres option ${name} must be a positive integer, found ${String(value)}`,
    );
  }
  return value;
}

function count(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(
      `postgres option ${name} must be a non-negative integer, found ${String(value)}`,
    );
  }
  return value;
}
