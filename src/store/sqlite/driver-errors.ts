/**
 * How a SQLite store reads the driver's failures: its result codes, contention, damage reported by
 * SQLite, and the typed errors an open maps them to.
 */

import { PalimpsestError } from '../../core/index.js';
import { CorruptLogError, InvalidStoreError, StorageError } from '../contract/errors.js';
import type { SqliteDatabase } from './schema.js';

/**
 * A database whose header says it is palimpsest's at this schema version, but whose schema
 * SQLite cannot use (`SQLITE_ERROR`: "no such column", "malformed database schema",
 * "unsupported file format"; `SQLITE_NOTADB` for a damaged header field) or that lacks a table
 * or column this version writes: no palimpsest writes that, so it is damage (`CorruptLogError`, the CLI's exit code 4), not a
 * usage mistake or a failing medium. Other errors pass through.
 */
export function schemaDamage(path: string, error: unknown): unknown {
  const cause =
    StorageError.isInstance(error) || InvalidStoreError.isInstance(error) ? error.cause : error;
  const code = driverCode(cause);
  // NOTADB after the header read as ours: SQLite refuses a field of it (page size, versions).
  if (code === 'SQLITE_ERROR' || code === 'SQLITE_NOTADB') {
    return new CorruptLogError(
      {
        file: path,
        reason: `the schema is damaged: SQLite cannot use it (${describeCause(cause)})`,
      },
      { cause },
    );
  }
  return error;
}

function describeCause(cause: unknown): string {
  return cause instanceof Error ? cause.message.slice(0, 200) : String(cause);
}

/** Closes a connection whose open failed; that failure is the one to report. */
export function closeQuietly(db: SqliteDatabase | undefined): void {
  try {
    db?.close();
  } catch {
    // The open's own failure is the one to report.
  }
}

/** Runs a driver call during open, mapping its failures to typed errors. */
export function driverCall<T>(path: string, action: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (PalimpsestError.isInstance(error)) throw error;
    const code = driverCode(error);
    if (code?.startsWith('SQLITE_CORRUPT') === true) {
      throw new CorruptLogError(
        { file: path, reason: `SQLite reports the database damaged (${code}) on ${action}` },
        { cause: error },
      );
    }
    if (code === 'SQLITE_NOTADB') {
      throw new InvalidStoreError(
        'NOT_A_STORE',
        `${path} is not a SQLite database; it was not modified`,
        {
          cause: error,
        },
      );
    }
    if (code === undefined && error instanceof Error && /bindings|dlopen/i.test(error.message)) {
      throw new InvalidStoreError(
        'DRIVER_LOAD_FAILED',
        'better-sqlite3 is installed but its native addon did not load; rebuild it (npm rebuild better-sqlite3)',
        { cause: error },
      );
    }
    throw new StorageError(`cannot ${action} ${path}`, { cause: error });
  }
}

/** Whether a driver error is contention: another connection holds the database. */
export function isBusy(error: unknown): boolean {
  const code = driverCode(error);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The result code of a driver error (`SQLITE_BUSY`, ...), if it has one. */
export function driverCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
