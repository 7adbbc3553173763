/**
 * A PostgreSQL store as schema 3 left it, for the upgrade tests: the DDL of schema 3 verbatim
 * (no row checksums; `envelope_crc` of a run's times, sizes and key line only), filled with the
 * rows this version writes for the same sessions, less what schema 4 added.
 */
import type pg from 'pg';
import type { SessionEvent, SessionHeader } from '../../../src/core/index.js';
import { openPostgresStore } from '../../../src/store/postgres/index.js';
import { envelopeChecksumFrom } from '../../../src/store/sql/chunk-runs.js';
import { dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';

/** The DDL of schema 3, as `schemaDdl` of src/store/postgres/schema.ts wrote it. */
function schema3Ddl(s: string): string {
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
  updated_at bigint NOT NULL
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
  PRIMARY KEY (session_key, seq)
);
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
ALTER TABLE ${s}.chunk_runs ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE ${s}.leases (
  session_id text COLLATE "C" PRIMARY KEY,
  owner text NOT NULL,
  token text NOT NULL,
  refreshed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', '3');
`;
}

/** A session to store: its header and events. */
export interface StoredSession {
  readonly header: SessionHeader;
  readonly events: readonly SessionEvent[];
}

/**
 * Makes schema `schema` a store of schema 3 holding `sessions`: the rows are written by this
 * version into a scratch schema, then copied over without the columns schema 4 added, each
 * run's `envelope_crc` recomputed as schema 3 computed it.
 */
export async function storeOfSchema3(
  schema: string,
  sessions: readonly StoredSession[],
): Promise<void> {
  const scratch = freshSchema('v4');
  const store = await openPostgresStore({ connectionString: pgUrl, schema: scratch });
  try {
    for (const { header, events } of sessions) {
      await store.create(header);
      await store.append(header.id, events, { expectedSeq: 0 });
    }
  } finally {
    await store.close();
  }
  const [from, to] = [`"${scratch}"`, `"${schema}"`];
  await withClient(async (client) => {
    await client.query(schema3Ddl(to));
    await client.query(`
      INSERT INTO ${to}.sessions (key, id, id_order, created_at, parent_session, header, next_seq, updated_at)
        SELECT key, id, id_order, created_at, parent_session, header, next_seq, updated_at FROM ${from}.sessions;
      SELECT setval(pg_get_serial_sequence('${to}.sessions', 'key'), (SELECT max(key) FROM ${to}.sessions));
      INSERT INTO ${to}.events (session_key, seq, type, time, data, source_event_seqs, surface_op)
        SELECT session_key, seq, type, time, data, source_event_seqs, surface_op FROM ${from}.events;
      INSERT INTO ${to}.chunk_runs (session_key, first_seq, count, time, times, sizes, data, crc, envelope_crc)
        SELECT session_key, first_seq, count, time, times, sizes, data, crc, 0 FROM ${from}.chunk_runs`);
    await schema3Envelopes(client, to);
  });
  await dropSchema(scratch);
}

/** Sets every run's `envelope_crc` as schema 3 computed it. */
async function schema3Envelopes(client: pg.Client, s: string): Promise<void> {
  const { rows } = await client.query<{
    session_key: string;
    first_seq: string;
    count: number;
    time: string;
    times: Buffer;
    sizes: Buffer;
  }>(`SELECT session_key, first_seq, count, time, times, sizes FROM ${s}.chunk_runs`);
  for (const row of rows) {
    const run = { ...row, first_seq: Number(row.first_seq), time: Number(row.time) };
    await client.query(
      `UPDATE ${s}.chunk_runs SET envelope_crc = $3 WHERE session_key = $1 AND first_seq = $2`,
      [row.session_key, row.first_seq, envelopeChecksumFrom(Number(row.session_key), run, 0)],
    );
  }
}
