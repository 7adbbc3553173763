/**
 * palimpsest/sqlite — sessions in one SQLite file, through better-sqlite3 12.x (an optional peer
 * dependency, loaded when a store is opened).
 *
 * Every append is one `BEGIN IMMEDIATE` transaction that checks the expected seq before writing,
 * so a resolved append is whole and, with the default `synchronous: 'full'` in WAL mode, survives
 * power loss. A database written by another schema version is refused and left untouched.
 *
 * @packageDocumentation
 */
import type { SqliteStoreOptions } from './open.js';
import { SqliteStore } from './store.js';

export type { SqliteStoreOptions } from './open.js';
export { APPLICATION_ID, SCHEMA_VERSION, type SqliteSettings } from './schema.js';
export { SqliteStore } from './store.js';

/**
 * Opens (creating if needed) the SQLite database at `file`. A missing parent directory is
 * created with mode 0700 and a new database file with mode 0600.
 *
 * @throws FormatVersionError for a palimpsest database of another schema version;
 *   InvalidStoreError for a file that is not a palimpsest database or a missing driver;
 *   InvalidArgumentError for bad options; StorageError when the file cannot be opened. A refused
 *   file is not modified.
 */
export function openSqliteStore(
  file: string,
  options: SqliteStoreOptions = {},
): Promise<SqliteStore> {
  return SqliteStore.open(file, options);
}
