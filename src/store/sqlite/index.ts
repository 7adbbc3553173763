/**
 * palimpsest/sqlite — sessions in one SQLite file, through better-sqlite3 12.x (an optional peer
 * dependency, loaded when a store is opened).
 *
 * Every append is one `BEGIN IMMEDIATE` transaction that checks the expected seq before writing,
 * so a resolved append is whole and, with the default `synchronous: 'full'` in WAL mode, survives
 * power loss. The ledger beside the database (`<file>-lengths`) detects committed events SQLite
 * lost; the database names it, so a database opened without its own ledger is refused
 * (`LedgerError`) until `adoptSqliteLedger` adopts it as it is. A database of the previous schema
 * version is read as it is and migrated by the first writable open; one of any other version is
 * refused and left untouched.
 *
 * @packageDocumentation
 */
export {
  type AdoptOptions,
  adoptSqliteLedger,
  type LedgerAdoption,
  type NewlyVouched,
} from './adopt.js';
export { openSqliteStore, type SqliteStoreOptions } from './open.js';
export { APPLICATION_ID, SCHEMA_VERSION, type SqliteSettings } from './schema.js';
export { SqliteStore } from './store.js';
