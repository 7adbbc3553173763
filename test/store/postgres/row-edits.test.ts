/**
 * Rows of a PostgreSQL store altered behind its back with SQL (an operator's UPDATE, another
 * program, a restore gone wrong): each kind of edit, read by each path that reads the rows it
 * touched (a full load, a fast load, a salvaging load as `inspect` makes it, a follower's tail
 * read, the listing, the summary), is a CorruptLogError naming the session, never a silent
 * load of a different session. The edits keep every value well-formed (valid JSON, events of a
 * valid shape): what finds them is the rows' checksums, not a parse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/index.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/index.js';
import { rejection } from '../../conformance/helpers.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';
import { recorded } from './recorded.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

/**
 * Edits by SQL, each of one row of session `d` (or two, to swap them): `$s` stands for the
 * store's schema, `$d` for the session's key. Every one keeps the values well-formed.
 */
const EDITS: readonly (readonly [string, string])[] = [
  [
    "an event row's data",
    "UPDATE $s.events SET data = replace(data, 'the question', 'another question') WHERE session_key = $d AND seq = 1",
  ],
  [
    "an event row's type",
    "UPDATE $s.events SET type = 'app/call' WHERE session_key = $d AND seq = 17",
  ],
  [
    "an event row's time",
    'UPDATE $s.events SET time = time + 1 WHERE session_key = $d AND seq = 0',
  ],
  [
    'the seqs of two event rows (swapped)',
    `UPDATE $s.events SET seq = -1 WHERE session_key = $d AND seq = 10;
     UPDATE $s.events SET seq = 10 WHERE session_key = $d AND seq = 11;
     UPDATE $s.events SET seq = 11 WHERE session_key = $d AND seq = -1`,
  ],
  [
    "an event row's sources",
    "UPDATE $s.events SET source_event_seqs = '[16,17]' WHERE session_key = $d AND seq = 18",
  ],
  [
    "an event row's surface op",
    `UPDATE $s.events SET surface_op = '{"op":"replace","start":13,"end":13}' WHERE session_key = $d AND seq = 18`,
  ],
  [
    "an event row's checksum",
    'UPDATE $s.events SET crc = crc # 1 WHERE session_key = $d AND seq = 15',
  ],
  [
    "the session row's header",
    `UPDATE $s.sessions SET header = left(header, -1) || ',"metadata":{"edited":true}}' WHERE key = $d`,
  ],
  [
    "the session row's created_at",
    'UPDATE $s.sessions SET created_at = created_at + 1 WHERE key = $d',
  ],
  [
    "the session row's parent_session",
    "UPDATE $s.sessions SET parent_session = 'o' WHERE key = $d",
  ],
  [
    "the session row's id_order",
    "UPDATE $s.sessions SET id_order = '\\x0065'::bytea WHERE key = $d",
  ],
  [
    "the session row's updated_at",
    'UPDATE $s.sessions SET updated_at = updated_at + 1 WHERE key = $d',
  ],
  [
    "the session row's next_seq (its last event row deleted)",
    `DELETE FROM $s.events WHERE session_key = $d AND seq = 24;
     UPDATE $s.sessions SET next_seq = next_seq - 1 WHERE key = $d`,
  ],
  ["the session row's checksum", 'UPDATE $s.sessions SET crc = crc # 1 WHERE key = $d'],
  [
    "the session row's length checksum",
    'UPDATE $s.sessions SET length_crc = length_crc # 1 WHERE key = $d',
  ],
  ['the last event row (deleted)', 'DELETE FROM $s.events WHERE session_key = $d AND seq = 24'],
  [
    "a chunk run's data",
    'UPDATE $s.chunk_runs SET data = set_byte(data, 3, get_byte(data, 3) # 16) WHERE session_key = $d',
  ],
  [
    "a chunk run's times",
    'UPDATE $s.chunk_runs SET times = set_byte(times, 0, get_byte(times, 0) # 8) WHERE session_key = $d',
  ],
  [
    "a chunk run's boundaries",
    'UPDATE $s.chunk_runs SET first_seq = first_seq + 1, count = count - 1 WHERE session_key = $d',
  ],
  ["a chunk run's checksum", 'UPDATE $s.chunk_runs SET crc = crc # 1 WHERE session_key = $d'],
];

/** A store holding sessions `d` and `o`, `edit` run on it; closed after the edit's tests. */
async function storeEditedBy(edit: string): Promise<PostgresStore> {
  const schema = freshSchema('edit');
  schemas.push(schema);
  const store = await openPostgresStore({ connectionString: pgUrl, schema, maxConnections: 4 });
  for (const id of ['d', 'o']) {
    const session = recorded(id);
    await store.create(session.header);
    await store.append(id, session.events, { expectedSeq: 0 });
  }
  await withClient(async (client) => {
    const runs = await client.query(`SELECT 1 FROM "${schema}".chunk_runs`);
    // The edits of chunk runs need one per session.
    expect(runs.rowCount).toBe(2);
    const results: unknown = await client.query(
      edit
        .replaceAll('$s', `"${schema}"`)
        .replaceAll('$d', `(SELECT key FROM "${schema}".sessions WHERE id = 'd')`),
    );
    // Every statement of the edit changed a row.
    const counts = [results]
      .flat()
      .map((result) => (result as { rowCount: number | null }).rowCount);
    expect(counts.every((count) => count !== null && count > 0)).toBe(true);
  });
  return store;
}

/** Expects a CorruptLogError that names session `d` and the store. */
function expectNamesSession(error: unknown, store: PostgresStore): void {
  expect(error).toBeInstanceOf(CorruptLogError);
  expect((error as CorruptLogError).file).toBe(store.location);
  expect((error as CorruptLogError).reason).toContain("session 'd'");
}

/** What a follower of `d` from seq 0 meets: the error, or the events when there is none. */
async function tailRead(store: PostgresStore, length: number): Promise<unknown> {
  const stop = new AbortController();
  const seen: SessionEvent[] = [];
  try {
    for await (const event of store.watch('d', { signal: stop.signal })) {
      seen.push(event);
      if (seen.length >= length) stop.abort();
    }
    return seen;
  } catch (error) {
    return error;
  }
}

/** The store `edit` was run on, made before the tests of a describe block and closed after. */
function useStoreEditedBy(edit: string): () => PostgresStore {
  let store: PostgresStore | undefined;
  beforeAll(async () => {
    store = await storeEditedBy(edit);
  });
  afterAll(async () => {
    await store?.close();
  });
  return () => store as PostgresStore;
}

describePg.each(EDITS)('%s, edited by SQL,', (_, edit) => {
  const edited = useStoreEditedBy(edit);

  it('is a CorruptLogError naming the session on a full load', async () => {
    const store = edited();
    expectNamesSession(await rejection(store.load('d')), store);
  });

  it('is a CorruptLogError naming the session on a fast load', async () => {
    const store = edited();
    expectNamesSession(await rejection(store.load('d', { elideFinishedChunks: true })), store);
  });

  it('is the damage a salvaging load (inspect, salvage) reports, naming the session', async () => {
    const store = edited();
    const outcome = await store.load('d', { salvage: true }).catch((error: unknown) => error);
    expectNamesSession(
      outcome instanceof Error ? outcome : (outcome as { damage?: unknown }).damage,
      store,
    );
  });

  it("is a CorruptLogError naming the session on a follower's tail read", async () => {
    const store = edited();
    expectNamesSession(await tailRead(store, recorded('d').seq), store);
  });

  it('leaves the other session whole', async () => {
    const store = edited();
    const other = recorded('o');
    expect((await store.load('o')).events).toEqual(other.events);
  });
});

describePg.each(EDITS.filter(([what]) => what.startsWith('the session row')))(
  '%s, edited by SQL,',
  (_, edit) => {
    const edited = useStoreEditedBy(edit);

    it('is listed as a damaged session with a CorruptLogError naming it', async () => {
      const store = edited();
      const page = await store.list();
      expect(page.sessions.map((summary) => summary.header.id)).toEqual(['o']);
      expect(page.damaged).toHaveLength(1);
      expect(page.damaged?.[0]?.id).toBe('d');
      expectNamesSession(page.damaged?.[0]?.error, store);
    });

    it('is a CorruptLogError naming the session when summarized', async () => {
      const store = edited();
      expectNamesSession(await rejection(store.summarize('d')), store);
    });
  },
);

describe('the rows a summary reads', () => {
  const edits = [
    [
      'a turn/start row',
      'UPDATE $s.events SET data = replace(data, \'"turn":2\', \'"turn":3\') WHERE session_key = $d AND seq = 12',
    ],
    [
      'the last event row',
      'UPDATE $s.events SET time = time + 1 WHERE session_key = $d AND seq = 24',
    ],
  ] as const;
  describePg.each(edits)('%s, edited by SQL,', (_, edit) => {
    it('is a CorruptLogError naming the session when summarized', async () => {
      const store = await storeEditedBy(edit);
      try {
        expectNamesSession(await rejection(store.summarize('d')), store);
      } finally {
        await store.close();
      }
    });
  });
});

describePg('an append after an edit', () => {
  it("of the session row's length is refused with a CorruptLogError, and writes nothing", async () => {
    const store = await storeEditedBy(
      'UPDATE $s.sessions SET updated_at = updated_at + 1 WHERE key = $d',
    );
    try {
      const next = recorded('d').seq;
      const error = await rejection(
        store.append('d', [{ seq: next, time: 1, type: 'app/note', data: {} } as SessionEvent], {
          expectedSeq: next,
        }),
      );
      expectNamesSession(error, store);
      const { rows } = await withClient((client) =>
        client.query(`SELECT next_seq FROM "${store.settings.schema}".sessions WHERE id = 'd'`),
      );
      expect(rows).toEqual([{ next_seq: String(next) }]);
    } finally {
      await store.close();
    }
  });
});
