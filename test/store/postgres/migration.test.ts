/**
 * The upgrade of a PostgreSQL store from schema 3 (no row checksums) to schema 4: a store made
 * with the DDL of schema 3 opens with this version, keeps every session as it was and goes on
 * working, with every row checksummed, the new columns NOT NULL, and no damage blessed.
 */
import { afterAll, expect, it } from 'vitest';
import { isElidedChunk, type SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError, FormatVersionError, openSession } from '../../../src/store/index.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/index.js';
import { rejection } from '../../conformance/helpers.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';
import { recorded } from './recorded.js';
import { storeOfSchema3 } from './schema-3.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

const SESSIONS = ['a', 'b'].map((id) => recorded(id));

/** A fresh store of schema 3 holding sessions `a` and `b`; `damage` run on it (`$s`: its schema). */
async function schema3(damage?: string): Promise<string> {
  const schema = freshSchema('v3');
  schemas.push(schema);
  await storeOfSchema3(schema, SESSIONS);
  if (damage !== undefined) {
    await withClient((client) => client.query(damage.replaceAll('$s', `"${schema}"`)));
  }
  return schema;
}

async function open(schema: string, readOnly = false): Promise<PostgresStore> {
  return openPostgresStore({ connectionString: pgUrl, schema, readOnly, maxConnections: 4 });
}

async function query(schema: string, sql: string): Promise<unknown[]> {
  return withClient(
    async (client) => (await client.query(sql.replaceAll('$s', `"${schema}"`))).rows,
  );
}

/** Whether a fast load's events are the recorded ones, the finished chunks as their stubs. */
function sameOrStub(loaded: readonly SessionEvent[], events: readonly SessionEvent[]): boolean {
  return (
    loaded.length === events.length &&
    loaded.every((event, i) =>
      isElidedChunk(event)
        ? event.seq === events[i]?.seq && event.time === events[i]?.time
        : JSON.stringify(event) === JSON.stringify(events[i]),
    )
  );
}

describePg('a store of schema 3', () => {
  it('opened by a store that may write is upgraded in place: every session loads as it was, the checksum columns are NOT NULL, and appends go on', async () => {
    const schema = await schema3();
    const store = await open(schema);
    try {
      for (const session of SESSIONS) {
        expect((await store.load(session.id)).events).toEqual(session.events);
        const fast = await store.load(session.id, { elideFinishedChunks: true });
        expect(sameOrStub(fast.events, session.events)).toBe(true);
      }
      expect((await store.list()).sessions.map((summary) => summary.header.id).sort()).toEqual([
        'a',
        'b',
      ]);
      const live = await openSession(store, 'a');
      live.append('app/note', { after: 'the upgrade' });
      await live.close();
      const reloaded = await store.load('a');
      expect(reloaded.events).toHaveLength((SESSIONS[0]?.seq ?? 0) + 1);
      expect(reloaded.events.at(-1)?.data).toEqual({ after: 'the upgrade' });
    } finally {
      await store.close();
    }
    expect(await query(schema, `SELECT value FROM $s.meta WHERE key = 'schema_version'`)).toEqual([
      { value: '4' },
    ]);
    const columns = await query(
      schema,
      `SELECT table_name, column_name, is_nullable FROM information_schema.columns
       WHERE table_schema = '${schema}' AND column_name IN ('crc', 'length_crc', 'envelope_crc')
       ORDER BY table_name, column_name`,
    );
    expect(columns).toEqual([
      { table_name: 'chunk_runs', column_name: 'crc', is_nullable: 'NO' },
      { table_name: 'chunk_runs', column_name: 'envelope_crc', is_nullable: 'NO' },
      { table_name: 'events', column_name: 'crc', is_nullable: 'NO' },
      { table_name: 'sessions', column_name: 'crc', is_nullable: 'NO' },
      { table_name: 'sessions', column_name: 'length_crc', is_nullable: 'NO' },
    ]);
  });

  it('gets a checksum for every row: an edit by SQL after the upgrade is a CorruptLogError', async () => {
    const schema = await schema3();
    await (await open(schema)).close();
    await query(
      schema,
      `UPDATE $s.events SET data = replace(data, 'the question', 'a question') WHERE seq = 1
         AND session_key = (SELECT key FROM $s.sessions WHERE id = 'a')`,
    );
    const store = await open(schema, true);
    try {
      for (const options of [{}, { elideFinishedChunks: true }]) {
        const error = await rejection(store.load('a', options));
        expect(error).toBeInstanceOf(CorruptLogError);
        expect(error).toMatchObject({ row: 1 });
      }
      expect((await store.load('b')).events).toEqual(SESSIONS[1]?.events);
    } finally {
      await store.close();
    }
  });

  it('keeps a chunk run its checksums refuse refused, on a full load and on a fast one', async () => {
    const schema = await schema3(
      `UPDATE $s.chunk_runs SET data = set_byte(data, 3, get_byte(data, 3) # 16)
       WHERE session_key = (SELECT key FROM $s.sessions WHERE id = 'a')`,
    );
    const store = await open(schema);
    try {
      for (const options of [{}, { elideFinishedChunks: true }]) {
        const error = await rejection(store.load('a', options));
        expect(error).toBeInstanceOf(CorruptLogError);
        expect((error as CorruptLogError).reason).toContain('does not match its checksum');
        expect(error).toMatchObject({ row: 3 });
      }
      expect((await store.load('b')).events).toEqual(SESSIONS[1]?.events);
    } finally {
      await store.close();
    }
  });

  it('is refused by a read-only open, which says how to upgrade it, and left untouched', async () => {
    const schema = await schema3();
    const refused = await rejection(open(schema, true));
    expect(refused).toBeInstanceOf(FormatVersionError);
    expect((refused as FormatVersionError).message).toContain(
      'schema version 3, older than this palimpsest',
    );
    expect((refused as FormatVersionError).message).toContain(
      'open it once with a store that may write',
    );
    expect(await query(schema, `SELECT value FROM $s.meta`)).toEqual([{ value: '3' }]);
    expect(
      await query(
        schema,
        `SELECT 1 FROM information_schema.columns WHERE table_schema = '${schema}' AND column_name = 'length_crc'`,
      ),
    ).toEqual([]);
  });

  it('is upgraded once when several stores open it at once', async () => {
    const schema = await schema3();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(schema)));
    try {
      for (const store of stores) {
        expect((await store.load('b')).events).toEqual(SESSIONS[1]?.events);
      }
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
