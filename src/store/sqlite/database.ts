/**
 * Opening a SQLite store's database: the options checked, the file prepared and identified before
 * SQLite touches it (so a foreign or newer database is refused unmodified), the connection,
 * the schema created or checked, the pragmas set. Driver failures are mapped to typed errors by `driver-errors.ts`.
 */

import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { InvalidArgumentError } from '../../core/index.js';
import {
  CorruptLogError,
  InvalidStoreError,
  StorageError,
  StoreBusyError,
} from '../contract/errors.js';
import { DEFAULT_BUSY_RETRY_MS, retryWhileBusy } from '../contract/store-rules.js';
import { closeQuietly, driverCall, driverCode, isBusy, schemaDamage } from './driver-errors.js';
import { ledgerPath } from './ledger.js';
import type { SqliteStoreOptions } from './open.js';
import {
  checkTables,
  classify,
  configure,
  createSchema,
  loadDriver,
  PREVIOUS_SCHEMA_VERSION,
  type ReadableSchema,
  readFileIdentity,
  readIdentity,
  readSettings,
  SCHEMA_VERSION,
  type SqliteDatabase,
  type SqliteDriver,
  type SqliteSettings,
  setPageSize,
} from './schema.js';

/** A database ready for the store: schema checked, pragmas set. */
export interface OpenedDatabase {
  /** The absolute path of the file. */
  readonly path: string;
  readonly db: SqliteDatabase;
  /** The pragmas of the connection, read back after setting them. */
  readonly settings: SqliteSettings;
  readonly readOnly: boolean;
  /**
   * The schema version of the database as opened: the previous one only until a writable open
   * migrates it (`pairing.ts`), which happens before the store uses it.
   */
  readonly version: ReadableSchema;
  /** The checked `busyRetryMs`. */
  readonly busyRetryMs: number;
  /** Removes what the open made aside (a private copy, see `privateCopy`); call after closing. */
  readonly cleanup?: () => void;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Checks the options, prepares the file and opens a connection to it with the schema in place.
 *
 * @throws as `openSqliteStore`.
 */
export async function openDatabase(
  file: string,
  options: SqliteStoreOptions,
): Promise<OpenedDatabase> {
  const synchronous = options.synchronous ?? 'full';
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new InvalidArgumentError(
      `sqlite option synchronous must be 'full' or 'normal', found ${String(synchronous)}`,
    );
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2 ** 31 - 1) {
    throw new InvalidArgumentError(
      `sqlite option busyTimeoutMs must be a non-negative integer, found ${String(busyTimeoutMs)}`,
    );
  }
  const busyRetryMs = options.busyRetryMs ?? DEFAULT_BUSY_RETRY_MS;
  if (!Number.isSafeInteger(busyRetryMs) || busyRetryMs < 0) {
    throw new InvalidArgumentError(
      `sqlite option busyRetryMs must be a non-negative integer, found ${String(busyRetryMs)}`,
    );
  }
  if (typeof file !== 'string' || file === '') {
    throw new InvalidArgumentError(
      `sqlite store needs a database file path, found ${typeof file === 'string' ? 'an empty string' : typeof file}`,
    );
  }
  const path = resolve(file);
  const readOnly = options.readOnly === true;
  const Database = await loadDriver();
  const existing = damagedIfOurs(path, () =>
    readOnly ? identifyReadOnly(Database, path) : prepareFile(Database, path),
  );
  let db: SqliteDatabase | undefined;
  try {
    db = connect(Database, path, {
      readonly: readOnly,
      fileMustExist: true,
      timeout: busyTimeoutMs,
    });
    let connection = db;
    let version: ReadableSchema = SCHEMA_VERSION;
    if (readOnly) {
      const checkOn = (opened: SqliteDatabase) =>
        opened.transaction(() => {
          const found = classify(readIdentity(opened), path);
          if (found === 'pristine') {
            throw new InvalidStoreError(
              'NOT_A_STORE',
              `${path} holds no palimpsest database yet (opened read-only)`,
            );
          }
          version = found === 'previous' ? PREVIOUS_SCHEMA_VERSION : SCHEMA_VERSION;
          checkTables(opened, path, version);
        });
      let settings: SqliteSettings;
      let cleanup: (() => void) | undefined;
      try {
        settings = driverCall(path, 'open', () => readSettings(connection, busyTimeoutMs));
        await retryingCall(path, busyRetryMs, () => checkOn(connection)());
      } catch (error) {
        const copy = unwritableDirectory(error) ? privateCopy(path) : undefined;
        if (copy === undefined) throw error;
        cleanup = copy.remove;
        closeQuietly(connection);
        try {
          connection = connect(Database, copy.file, { readonly: true, fileMustExist: true });
          db = connection;
          settings = driverCall(path, 'open', () => readSettings(connection, busyTimeoutMs));
          await retryingCall(path, busyRetryMs, () => checkOn(connection)());
        } catch (again) {
          copy.remove();
          throw again;
        }
      }
      return {
        path,
        db: connection,
        settings,
        readOnly,
        version,
        busyRetryMs,
        ...(cleanup === undefined ? {} : { cleanup }),
      };
    }
    if (existing === 'pristine') {
      await retryingCall(path, busyRetryMs, () => setPageSize(connection));
    }
    // Checked again on this connection, before any pragma writes: the file header may lag
    // behind an uncheckpointed WAL, and another process may have created the schema since.
    const check = connection.transaction(() => {
      const found = classify(readIdentity(connection), path);
      if (found === 'pristine') createSchema(connection);
      version = found === 'previous' ? PREVIOUS_SCHEMA_VERSION : SCHEMA_VERSION;
      checkTables(connection, path, version);
    });
    await retryingCall(path, busyRetryMs, () =>
      existing === 'pristine' ? check.immediate() : check(),
    );
    const settings = await retryingCall(path, busyRetryMs, () =>
      configure(connection, path, { synchronous, busyTimeoutMs }),
    );
    return { path, db: connection, settings, readOnly, version, busyRetryMs };
  } catch (error) {
    closeQuietly(db);
    throw existing === 'pristine' ? error : schemaDamage(path, error);
  }
}

/**
 * Runs the identification of the file before SQLite opens it. A file that is not a SQLite
 * database, or one of another application, is refused as such (`InvalidStoreError`), unless
 * palimpsest's ledger lies beside it: then it was a palimpsest database whose header is
 * damaged, and it is a `CorruptLogError`.
 */
function damagedIfOurs<T>(path: string, identify: () => T): T {
  try {
    return identify();
  } catch (error) {
    if (!InvalidStoreError.isInstance(error) || !existsSync(ledgerPath(path))) throw error;
    throw new CorruptLogError(
      {
        file: path,
        reason: `the database header is damaged: ${error.message.replace(`${path} `, '')}, but palimpsest's ledger ${ledgerPath(path)} lies beside it`,
      },
      { cause: error },
    );
  }
}

/**
 * Whether a read-only open failed because SQLite cannot create the `-shm` wal-index beside the
 * database (the directory is not writable by this user).
 */
function unwritableDirectory(error: unknown): boolean {
  const cause = StorageError.isInstance(error) ? error.cause : error;
  const code = driverCode(cause);
  return code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_CANTOPEN';
}

/**
 * A private copy of a WAL database that has no `-wal` beside it, for a read-only open in a
 * directory this user cannot write: SQLite cannot read a WAL database without creating its
 * `-shm`, and nothing of the database is outside the file (no `-wal`), so a copy reads the same
 * and the directory stays untouched. `undefined` when a `-wal` with data exists (its frames
 * would be missed) or the copy fails.
 */
function privateCopy(path: string): { file: string; remove: () => void } | undefined {
  try {
    if (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) return undefined;
  } catch {
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-readonly-'));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    const file = join(dir, basename(path));
    copyFileSync(path, file);
    return { file, remove };
  } catch {
    remove();
    return undefined;
  }
}

/**
 * Makes sure the directory exists (0700 when created) and the database file too (0600 when
 * created), then reads the file's identity without opening it with SQLite, so that a database
 * of another version or application is refused untouched.
 */
function prepareFile(Database: SqliteDriver, path: string): 'pristine' | 'current' | 'previous' {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StorageError(`cannot create the directory of ${path}`, { cause: error });
  }
  try {
    closeSync(openSync(path, 'wx', 0o600));
    return 'pristine';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new StorageError(`cannot create ${path}`, { cause: error });
    }
  }
  if (!statSync(path).isFile())
    throw new InvalidStoreError('WRONG_FILE_TYPE', `${path} is not a regular file`);
  const identity = readFileIdentity(path);
  if (identity === undefined) return 'pristine';
  if (identity.objects !== undefined && identity.applicationId === 0 && !identity.wal) {
    // An unversioned database: name its tables in the refusal. A read-only connection to a
    // rollback-journal database creates no file (to a WAL one it would: the count must do).
    const objects = nameObjects(Database, path);
    if (objects !== undefined) return classify({ ...identity, objects }, path);
  }
  return classify(identity, path);
}

/** What a read-only open finds at `path`, without creating or changing anything. */
function identifyReadOnly(
  Database: SqliteDriver,
  path: string,
): 'pristine' | 'current' | 'previous' {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (error) {
    throw new StorageError(`cannot open ${path} (opened read-only: nothing is created)`, {
      cause: error,
    });
  }
  if (!isFile) throw new InvalidStoreError('WRONG_FILE_TYPE', `${path} is not a regular file`);
  const identity = readFileIdentity(path);
  if (identity === undefined) {
    throw new InvalidStoreError(
      'NOT_A_STORE',
      `${path} holds no palimpsest database yet (opened read-only)`,
    );
  }
  if (identity.objects !== undefined && identity.applicationId === 0 && !identity.wal) {
    const objects = nameObjects(Database, path);
    if (objects !== undefined) return classify({ ...identity, objects }, path);
  }
  return classify(identity, path);
}

/** The first schema objects of a database, through a read-only connection, if it can tell. */
function nameObjects(Database: SqliteDriver, path: string): string | undefined {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      return readIdentity(db).objects;
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

function connect(
  Database: SqliteDriver,
  path: string,
  options: { readonly?: boolean; fileMustExist: boolean; timeout?: number },
): SqliteDatabase {
  return driverCall(path, 'open', () => new Database(path, options));
}

/**
 * A driver call during open, retried while other connections hold the database (several
 * processes opening one new database at once take turns creating and converting it), its other
 * failures mapped as by {@link driverCall}.
 */
export async function retryingCall<T>(path: string, retryMs: number, call: () => T): Promise<T> {
  try {
    return await retryWhileBusy(
      { isBusy, retryMs, location: `sqlite:${path}`, action: 'open' },
      call,
    );
  } catch (error) {
    if (StoreBusyError.isInstance(error)) throw error;
    return driverCall(path, 'open', () => {
      throw error;
    });
  }
}
