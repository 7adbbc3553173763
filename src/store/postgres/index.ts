/**
 * palimpsest/postgres — sessions in PostgreSQL, shared by a fleet of workers, through
 * node-postgres (`pg` 8.x, an optional peer dependency loaded when a store is opened).
 *
 * Appends are transactions that check the expected seq under a row lock; one writer per session
 * across hosts holds a lease with fencing; a lost connection is retried, and a batch the server
 * committed before the client heard is applied exactly once. See docs/postgres.md.
 *
 * @packageDocumentation
 */
export type { PostgresSettings } from './context.js';
export type { PgPool, PgPoolClient, PgQueryable, PgResult } from './driver.js';
export { openPostgresStore, type PostgresStoreOptions } from './open.js';
export { DEFAULT_SCHEMA, POSTGRES_SCHEMA_VERSION } from './schema.js';
export { PostgresStore } from './store.js';
