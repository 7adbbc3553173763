/**
 * The PostgreSQL benchmark's raw floors: what any program storing the same rows through `pg`
 * must do at least, in tables made by the store's own DDL (`schemaDdl`, imported so the floor
 * cannot drift from the layout).
 */
import type pg from 'pg';
import type { SessionEvent } from '../src/core/index.js';
import { schemaDdl } from '../src/store/postgres/schema.js';

/** The schema name quoted as the store quotes it. */
export function q(schema: string): string {
  return `"${schema}"`;
}

/** Creates `schema` with the store's tables (nothing else: no version check, no advisory lock). */
export async function createRawSchema(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query(schemaDdl(q(schema)));
}

/** A session row for raw inserts; its key. */
export async function rawSession(
  client: pg.ClientBase,
  schema: string,
  id: string,
): Promise<string> {
  const { rows } = await client.query<{ key: string }>(
    `INSERT INTO ${q(schema)}.sessions (id, id_order, created_at, header, next_seq, updated_at, crc, length_crc) VALUES ($1, $2, 0, '{}', 0, 0, 0, 0) RETURNING key`,
    [id, Buffer.from(id)],
  );
  return (rows[0] as { key: string }).key;
}

/**
 * One turn in one transaction: `BEGIN`, one multi-row INSERT of its events (the columns encoded
 * as the store encodes them, JSON.stringify included, in the same parameterised form), `COMMIT`.
 * What the store adds on top: the batch check, the session row lock and `expectedSeq` check, the
 * lease check, the `next_seq` update and the notification.
 */
export async function rawInsertTurn(
  client: pg.ClientBase,
  schema: string,
  key: string,
  events: readonly SessionEvent[],
): Promise<void> {
  const values: unknown[] = [key];
  const tuples: string[] = [];
  for (const event of events) {
    const n = values.length;
    // The checksum a raw program need not compute: 0, as the SQLite floor writes it.
    tuples.push(`($1, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, 0)`);
    values.push(
      event.seq,
      event.type,
      event.time,
      JSON.stringify(event.data),
      event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs),
      event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp),
    );
  }
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO ${q(schema)}.events (session_key, seq, type, time, data, source_event_seqs, surface_op, crc) VALUES ${tuples.join(', ')}`,
    values,
  );
  await client.query('COMMIT');
}
