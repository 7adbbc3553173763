/**
 * The slice of node-postgres (`pg` 8.x, an optional peer dependency loaded on first use) the
 * store uses, typed structurally so that palimpsest's declarations never name `pg`'s own types,
 * and the classification of its failures.
 */
import { InvalidStoreError } from '../contract/errors.js';

/** What a query resolves to. */
export interface PgResult<R> {
  readonly rows: R[];
  readonly rowCount: number | null;
}

/** A connection: a pooled client or a standalone one. */
export interface PgQueryable {
  query<R = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<PgResult<R>>;
}

/** A client checked out of a pool. */
export interface PgPoolClient extends PgQueryable {
  /** Returns the client to the pool; with an error, the pool discards it. */
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A notification delivered to a listening client. */
export interface PgNotification {
  readonly channel: string;
  readonly payload?: string | undefined;
}

/** A standalone client (the watcher's LISTEN connection). */
export interface PgClient extends PgQueryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: PgNotification) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
}

/**
 * A `pg.Pool`, or anything with its shape (a pool of your own, configured as you like: TLS,
 * statement timeouts, a proxy).
 */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The constructors of the `pg` module. */
export interface PgDriver {
  readonly Pool: new (config: { connectionString: string; max?: number }) => PgPool;
  readonly Client: new (config: { connectionString: string }) => PgClient;
}

/** The driver's module specifier, in one constant (the layer test confines the name here). */
const DRIVER_MODULE = 'pg';

let driver: Promise<PgDriver> | undefined;

/** Imports `pg` once per process; `InvalidStoreError` when it is not installed. */
export function loadPgDriver(): Promise<PgDriver> {
  driver ??= importDriver().catch((error: unknown) => {
    driver = undefined;
    throw error;
  });
  return driver;
}

async function importDriver(): Promise<PgDriver> {
  let module: unknown;
  try {
    module = await import(DRIVER_MODULE);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new InvalidStoreError(
        'DRIVER_NOT_INSTALLED',
        'install pg@8 to use postgres:// stores',
        { cause: error },
      );
    }
    throw new InvalidStoreError('DRIVER_LOAD_FAILED', 'pg is installed but failed to load', {
      cause: error,
    });
  }
  const loaded = ((module as { default?: unknown }).default ?? module) as Partial<PgDriver>;
  if (typeof loaded.Pool !== 'function' || typeof loaded.Client !== 'function') {
    throw new InvalidStoreError(
      'DRIVER_LOAD_FAILED',
      'the pg module has no Pool or Client (expected pg 8.x)',
    );
  }
  return loaded as PgDriver;
}

/** The SQLSTATE of a server error, if the failure is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Whether a failure means the connection is gone or the server is restarting, so that whether
 * the statement took effect is unknown (a retry must check): a socket error, a connection the
 * server ended, or a server in shutdown, crash recovery or refusing connections.
 */
export function isConnectionFailure(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) {
    // 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
    return state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03';
  }
  const code = (error as { code?: unknown } | null)?.code;
  // A host name that does not resolve is a mistake in the URL, not an outage: waiting for it to
  // come back would only delay the report (a DNS server that did not answer is EAI_AGAIN).
  if (code === 'ENOTFOUND') return false;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true; // ECONNRESET, ECONNREFUSED, EPIPE...
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection (?:is )?closed|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}
