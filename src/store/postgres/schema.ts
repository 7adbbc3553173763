/**
 * The PostgreSQL layout of a store: one schema (namespace) per store, created on first use in one
 * transaction, and versioned in its `meta` table. A schema of the version before this one is
 * upgraded in place by the first open that may write (`migrate.ts`); one of any other version is
 * refused and left untouched, as the SQLite backend refuses one.
 *
 * Event data, sources and surface ops are `text` holding the JSON palimpsest wrote, never `jsonb`
 * (which rejects `\u0000` escapes and lone surrogates and reorders keys): a load returns the very
 * bytes an append stored. Ids sort as JavaScript compares strings (UTF-16 code units), through
 * `id_order`, the id's UTF-16BE bytes, so `list` pages agree with every other backend.
 */
import { InvalidArgumentError } from '../../core/index.js';
import { FormatVersionError, InvalidStoreError, StoreNotFoundError } from '../contract/errors.js';
import type { PgPool, PgQueryable } from './driver.js';
import { migrateFrom3 } from './migrate.js';

/**
 * Version of the layout below; bumped on any change. Version 1 kept every event as a row of
 * `events`; version 2 moves the chunks a message has finished into compressed runs in
 * `chunk_runs` (see `../sql/chunk-runs.ts`); version 3 gives each run a checksum of its envelope
 * alone, `envelope_crc`, so that a fast load reads no run data; version 4 gives every session and
 * event row a checksum (`crc`, and `length_crc` for a session's length), and makes `envelope_crc`
 * cover the digest of the run's data and its `crc`, so that a row altered by anything but
 * palimpsest is found by every read, fast loads included.
 */
export const POSTGRES_SCHEMA_VERSION = 4;

/** The one older version an open that may write upgrades (see `migrate.ts`). */
export const MIGRATABLE_VERSION = 3;

/** The schema a store uses when the URL or options name none. */
export const DEFAULT_SCHEMA = 'palimpsest';

/** A schema name: a lowercase SQL identifier, quoted anyway. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a schema name; `InvalidArgumentError` for anything but a plain lowercase identifier. */
export function checkSchemaName(name: unknown): string {
  if (typeof name !== 'string' || !SCHEMA_NAME.test(name) || name.startsWith('pg_')) {
    throw new InvalidArgumentError(
      `postgres schema must be a lowercase identifier (letters, digits, _; at most 63; not starting with pg_, which PostgreSQL reserves), found ${JSON.stringify(String(name)).slice(0, 80)}`,
    );
  }
  return name;
}

/**
 * The DDL of a new store in schema `s` (quoted). Exported so that the PostgreSQL benchmark's raw
 * floor inserts into tables made by the very same statements.
 */
export function schemaDdl(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE ${s}.meta (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE ${s}.sessions (
  key bigserial PRIMARY KEY,
  id text COLLATE "C" NOT NULL UNIQUE,
  id_order bytea NOT NULL,
  created_at bigint NOT NULL,
  parent_session text COLLATE "C",
  header text NOT NULL,
  next_seq bigint NOT NULL DEFAULT 0,
  updated_at bigint NOT NULL,
  crc bigint NOT NULL,
  length_crc bigint NOT NULL
);
CREATE INDEX sessions_newest ON ${s}.sessions (created_at DESC, id_order);
CREATE INDEX sessions_children ON ${s}.sessions (parent_session, created_at DESC, id_order)
  WHERE parent_session IS NOT NULL;
CREATE TABLE ${s}.events (
  session_key bigint NOT NULL REFERENCES ${s}.sessions (key) ON DELETE CASCADE,
  seq bigint NOT NULL,
  type text NOT NULL,
  time bigint NOT NULL,
  data text NOT NULL,
  source_event_seqs text,
  surface_op text,
  crc bigint NOT NULL,
  PRIMARY KEY (session_key, seq)
);
-- The chunks a message finished, one row per run of consecutive seqs (layout in chunk-runs.ts).
-- Every crc is a CRC-32 of ours (../sql/row-checksums.ts, ../sql/chunk-runs.ts, session-rows.ts):
-- PostgreSQL checks no value's content (data checksums, when enabled, cover pages against the
-- disk, not an UPDATE), and one damaged byte of compressed data would otherwise garble every
-- chunk after it unseen.
CREATE TABLE ${s}.chunk_runs (
  session_key bigint NOT NULL REFERENCES ${s}.sessions (key) ON DELETE CASCADE,
  first_seq bigint NOT NULL,
  count integer NOT NULL,
  time bigint NOT NULL,
  times bytea NOT NULL,
  sizes bytea NOT NULL,
  data bytea NOT NULL,
  crc bigint NOT NULL,
  envelope_crc bigint NOT NULL,
  PRIMARY KEY (session_key, first_seq)
);
-- DEFLATE output does not compress again: spare the server trying (pglz) on every insert.
ALTER TABLE ${s}.chunk_runs ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE ${s}.leases (
  session_id text COLLATE "C" PRIMARY KEY,
  owner text NOT NULL,
  token text NOT NULL,
  refreshed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', '${POSTGRES_SCHEMA_VERSION}');
`;
}

/** The schema name quoted as an identifier. */
export function quoted(schema: string): string {
  return `"${schema}"`;
}

/** How the store names itself in messages: the URL without credentials, and the schema. */
export function describeLocation(connection: string | undefined, schema: string): string {
  if (connection === undefined) return `postgres:(pool)?schema=${schema}`;
  try {
    const url = new URL(connection);
    url.password = '';
    url.username = url.username === '' ? '' : url.username;
    url.search = '';
    return `${url.toString().replace(/\/$/, '')}?schema=${schema}`;
  } catch {
    return `postgres:(connection string)?schema=${schema}`;
  }
}

/** What an open may do to the schema: read it, also upgrade it, or also create it. */
export type SchemaAccess = 'read' | 'write' | 'create';

/**
 * Creates the store's schema if it does not exist (`create`), upgrades one of
 * {@link MIGRATABLE_VERSION} (`write`, `create`), and checks the version of the one it finds.
 * Opens that may write do so in one transaction under a transaction-level advisory lock, so two
 * processes opening a new or old store at once are serialised: exactly one creates or upgrades
 * it, and the other finds it current.
 *
 * @throws FormatVersionError for another schema version (and, for a read-only open, for one it
 *   would have to upgrade); InvalidStoreError for a schema that holds tables but no palimpsest
 *   version; StoreNotFoundError for no store where one may not be created.
 */
export async function ensureSchema(
  pool: PgPool,
  schema: string,
  location: string,
  access: SchemaAccess,
): Promise<void> {
  const client = await pool.connect();
  const ignore = (): void => {};
  client.on('error', ignore);
  let failed: Error | undefined;
  try {
    if (access === 'read') {
      await checkVersion(client, schema, location, await tablesOf(client, schema), false);
      return;
    }
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`palimpsest:${schema}`]);
    const exists = await tablesOf(client, schema);
    if (exists.length === 0 && access === 'create') {
      await client.query(schemaDdl(quoted(schema)));
    } else if ((await checkVersion(client, schema, location, exists, true)) === 'old') {
      await migrateFrom3(client, quoted(schema));
    }
    await client.query('COMMIT');
  } catch (error) {
    failed = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.removeListener('error', ignore);
    client.release(failed);
  }
}

async function tablesOf(client: PgQueryable, schema: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
    [schema],
  );
  return rows.map((row) => row.name);
}

/** `'current'`, or `'old'` for a version an open that may write (`upgrade`) upgrades. */
async function checkVersion(
  client: PgQueryable,
  schema: string,
  location: string,
  found: readonly string[],
  upgrade: boolean,
): Promise<'current' | 'old'> {
  if (found.length === 0) {
    throw new StoreNotFoundError(location, `schema '${schema}' has no palimpsest tables`);
  }
  if (!found.includes('meta')) {
    throw new InvalidStoreError(
      'NOT_A_STORE',
      `schema '${schema}' of ${location} holds tables (${found.slice(0, 5).join(', ')}) but no palimpsest version; pick another schema`,
    );
  }
  const { rows } = await client.query<{ value: string }>(
    `SELECT value FROM ${quoted(schema)}.meta WHERE key = 'schema_version'`,
  );
  const version = Number(rows[0]?.value);
  if (!Number.isSafeInteger(version)) {
    throw new InvalidStoreError(
      'NOT_A_STORE',
      `schema '${schema}' of ${location} has no valid palimpsest schema version`,
    );
  }
  if (version === POSTGRES_SCHEMA_VERSION) return 'current';
  if (version === MIGRATABLE_VERSION && upgrade) return 'old';
  throw new FormatVersionError(
    location,
    version,
    POSTGRES_SCHEMA_VERSION,
    'schema version',
    version === MIGRATABLE_VERSION
      ? `open it once with a store that may write (not read-only) to upgrade it to ${POSTGRES_SCHEMA_VERSION}`
      : undefined,
  );
}
