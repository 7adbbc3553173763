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
export { openSqliteStore, type SqliteStoreOptions } from './open.js';
export { APPLICATION_ID, SCHEMA_VERSION, type SqliteSettings } from './schema.js';
export { SqliteStore } from './store.js';
