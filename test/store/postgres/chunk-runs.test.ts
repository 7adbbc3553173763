/**
 * Chunk runs in PostgreSQL (schema 2): the chunks a message finishes leave `events` for one
 * compressed row of `chunk_runs`, and every read gives them back byte for byte. Mirrors
 * test/store/sqlite/chunk-runs.test.ts against the real server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isElidedChunk, type SessionEvent } from '../../../src/core/index.js';
import { ConflictError, CorruptLogError } from '../../../src/store/index.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/index.js';
import { rejection } from '../../conformance/helpers.js';
import { event } from '../../core/builders.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';
import { type CuttingProxy, startProxy } from '../../postgres/proxy.js';
import { HOSTILE_TEXTS, message, streamed as streamedWith } from '../chunk-run-events.js';

const opened: PostgresStore[] = [];
const schemas: string[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
});
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

/** The hostile texts, and SQL for the server's parser to choke on. */
const TEXTS = [...HOSTILE_TEXTS, "'); DROP --"];
const streamed = (first: number, count: number): SessionEvent[] =>
  streamedWith(first, count, TEXTS);
const seqsOf = (events: readonly SessionEvent[]): number[] => events.map((event) => event.seq);

async function open(connectionString = pgUrl): Promise<PostgresStore> {
  const schema = freshSchema('runs');
  schemas.push(schema);
  const store = await openPostgresStore({ connectionString, schema, maxConnections: 4 });
  opened.push(store);
  return store;
}

async function storeWith(
  batches: readonly SessionEvent[][],
  connectionString = pgUrl,
): Promise<{ store: PostgresStore; events: SessionEvent[] }> {
  const store = await open(connectionString);
  await store.create({ version: 1, id: 's', createdAt: 1 });
  const events: SessionEvent[] = [];
  for (const batch of batches) {
    await store.append('s', batch, { expectedSeq: events.length });
    events.push(...batch);
  }
  return { store, events };
}

/** Runs `sql` against the store's schema (`$s` stands for it, quoted). */
async function raw<T = Record<string, unknown>>(store: PostgresStore, sql: string): Promise<T[]> {
  return withClient(
    async (client) =>
      (await client.query(sql.replaceAll('$s', `"${store.settings.schema}"`))).rows as T[],
  );
}

const count = async (store: PostgresStore, table: string): Promise<number> =>
  Number((await raw<{ n: string }>(store, `SELECT count(*) AS n FROM $s.${table}`))[0]?.n);

describePg('chunk runs', () => {
  it('store the chunks a message finishes in one row and load them byte for byte', async () => {
    const chunks = streamed(0, 50);
    const { store, events } = await storeWith([[...chunks, message(50, seqsOf(chunks))]]);
    expect(await count(store, 'chunk_runs')).toBe(1);
    expect(await count(store, 'events')).toBe(1);
    const loaded = (await store.load('s')).events;
    expect(loaded).toEqual(events);
    expect(loaded.map((event) => JSON.stringify(event.data))).toEqual(
      events.map((event) => JSON.stringify(event.data)),
    );
  });

  it('take in the chunks earlier batches stored as rows when the message lands', async () => {
    const chunks = streamed(0, 30);
    const { store, events } = await storeWith([
      chunks.slice(0, 10),
      chunks.slice(10, 25),
      [...chunks.slice(25), message(30, seqsOf(chunks))],
    ]);
    expect(await count(store, 'chunk_runs')).toBe(1);
    expect(await count(store, 'events')).toBe(1);
    expect((await store.load('s')).events).toEqual(events);
    const fast = (await store.load('s', { elideFinishedChunks: true })).events;
    expect(fast.slice(0, 30).every(isElidedChunk)).toBe(true);
    expect(fast[30]).toEqual(events[30]);
  });

  it('leave the chunks no message cites, and a cited range broken by other events, as rows', async () => {
    const tool: SessionEvent = event(
      4,
      'tool/call',
      { turn: 1, step: 1, callId: 'c', name: 'n', arguments: '{}' },
      { time: 1_700_000_000_100 },
    );
    const { store, events } = await storeWith([
      [...streamed(0, 4), tool, ...streamed(5, 3), message(8, [0, 1, 4, 5, 6, 7])],
      streamed(9, 5),
    ]);
    const runs = await raw(store, 'SELECT first_seq, count FROM $s.chunk_runs ORDER BY first_seq');
    expect(runs).toEqual([
      { first_seq: '0', count: 2 },
      { first_seq: '5', count: 3 },
    ]);
    expect((await store.load('s')).events).toEqual(events);
    const fast = (await store.load('s', { elideFinishedChunks: true })).events;
    expect(fast.map(isElidedChunk)).toEqual([
      ...[true, true, false, false, false],
      ...[true, true, true, false],
      ...[false, false, false, false, false],
    ]);
  });

  it('give a watcher every event once, in order, across the move into a run', async () => {
    const chunks = streamed(0, 40);
    const { store, events } = await storeWith([chunks.slice(0, 20)]);
    const seen: SessionEvent[] = [];
    const stop = new AbortController();
    let sawFirstPage: () => void = () => {};
    const firstPage = new Promise<void>((resolve) => {
      sawFirstPage = resolve;
    });
    const watching = (async () => {
      for await (const event of store.watch('s', { fromSeq: 5, signal: stop.signal })) {
        seen.push(event);
        if (event.seq === 19) sawFirstPage();
        if (event.seq === 40) stop.abort();
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) throw error;
    });
    // The watcher has read seqs 5..19 as rows; the append moves them into a run.
    await firstPage;
    const rest = [...chunks.slice(20), message(40, seqsOf(chunks))];
    await store.append('s', rest, { expectedSeq: 20 });
    events.push(...rest);
    await watching;
    expect(seen).toEqual(events.slice(5));
    expect(await count(store, 'events')).toBe(1);
    // A watcher that starts inside a run reads it from there.
    const late: SessionEvent[] = [];
    for await (const event of store.watch('s', {
      fromSeq: 33,
      signal: AbortSignal.timeout(5000),
    })) {
      late.push(event);
      if (event.seq === 40) break;
    }
    expect(late).toEqual(events.slice(33));
  });

  it('give a watcher from seq 0 every event once across full pages with runs inside and between', async () => {
    const notes = (first: number, n: number): SessionEvent[] =>
      Array.from({ length: n }, (_, i) =>
        event(first + i, 'app/note', { n: first + i }, { time: 5 + first + i }),
      ) as SessionEvent[];
    const turn = (first: number): SessionEvent[] => {
      const chunks = streamed(first, 20);
      return [...chunks, message(first + 20, seqsOf(chunks))];
    };
    // A first page of 10,000 rows ends at seq 9,999 + 21 with one run inside it; the second
    // page begins with rows and holds the other run.
    const { store, events } = await storeWith([
      notes(0, 5000),
      turn(5000),
      notes(5021, 6000),
      turn(11_021),
      notes(11_042, 3),
    ]);
    expect(await count(store, 'chunk_runs')).toBe(2);
    const seen: SessionEvent[] = [];
    const last = events.length - 1;
    for await (const event of store.watch('s', {
      fromSeq: 0,
      signal: AbortSignal.timeout(20_000),
    })) {
      seen.push(event);
      if (event.seq === last) break;
    }
    expect(seqsOf(seen)).toEqual(seqsOf(events));
    expect(seen).toEqual(events);
  });

  it('are deleted with their session', async () => {
    const chunks = streamed(0, 10);
    const { store } = await storeWith([[...chunks, message(10, seqsOf(chunks))]]);
    await store.delete('s');
    expect(await count(store, 'chunk_runs')).toBe(0);
    expect(await count(store, 'events')).toBe(0);
  });

  it('are summarized like rows (the last event is a row)', async () => {
    const chunks = streamed(0, 10);
    const { store, events } = await storeWith([[...chunks, message(10, seqsOf(chunks))]]);
    const stats = await store.summarize('s');
    expect(stats).toMatchObject({ eventCount: events.length });
  });

  describe('a lost connection', () => {
    let proxy: CuttingProxy;
    beforeAll(async () => {
      proxy = await startProxy(Number(new URL(pgUrl).port));
    });
    afterAll(() => proxy.close());

    it('after the server committed a batch that moved rows into a run: the retry is applied exactly once', async () => {
      const chunks = streamed(0, 30);
      const { store, events } = await storeWith([chunks.slice(0, 12)], proxy.url(pgUrl));
      const rest = [...chunks.slice(12), message(30, seqsOf(chunks))];
      const cutsBefore = proxy.cuts;
      proxy.cutAfterNextCommit();
      await store.append('s', rest, { expectedSeq: 12 });
      expect(proxy.cuts).toBe(cutsBefore + 1);
      events.push(...rest);
      expect((await store.load('s')).events).toEqual(events);
      expect(await count(store, 'chunk_runs')).toBe(1);
      expect(await rejection(store.append('s', rest, { expectedSeq: 12 }))).toBeInstanceOf(
        ConflictError,
      );
    });
  });

  describe('damage', () => {
    async function damagedRun(sql: string): Promise<PostgresStore> {
      const chunks = streamed(0, 20);
      const { store } = await storeWith([[...chunks, message(20, seqsOf(chunks))]]);
      await raw(store, sql);
      return store;
    }

    it.each([
      ['a changed time', 'UPDATE $s.chunk_runs SET time = time + 1'],
      ['a changed size', "UPDATE $s.chunk_runs SET sizes = '\\x01'::bytea || substr(sizes, 2)"],
      ['a changed count', 'UPDATE $s.chunk_runs SET count = count - 1'],
      ['a changed envelope checksum', 'UPDATE $s.chunk_runs SET envelope_crc = envelope_crc # 1'],
      ['a changed checksum', 'UPDATE $s.chunk_runs SET crc = crc # 1'],
    ])('finds %s on a full load and on a fast one', async (_, sql) => {
      const store = await damagedRun(sql);
      for (const options of [{}, { elideFinishedChunks: true }]) {
        const error = await rejection(store.load('s', options));
        expect(error).toBeInstanceOf(CorruptLogError);
        expect(error).toMatchObject({ file: store.location, row: 0 });
      }
    });

    it('finds a flipped bit in the compressed data on a full load and on a fast one, which reads its digest', async () => {
      const store = await damagedRun(
        'UPDATE $s.chunk_runs SET data = set_byte(data, 0, get_byte(data, 0) # 1)',
      );
      for (const options of [{}, { elideFinishedChunks: true }]) {
        const error = await rejection(store.load('s', options));
        expect(error).toBeInstanceOf(CorruptLogError);
        expect(error).toMatchObject({ file: store.location, row: 0 });
      }
      const salvaged = await store.load('s', { salvage: true });
      expect(salvaged.events).toHaveLength(0);
      expect(salvaged.damage).toMatchObject({ row: 0 });
    });

    it('finds a deleted run as a missing seq', async () => {
      const store = await damagedRun('DELETE FROM $s.chunk_runs');
      for (const options of [{}, { elideFinishedChunks: true }]) {
        const error = await rejection(store.load('s', options));
        expect(error).toBeInstanceOf(CorruptLogError);
        expect((error as CorruptLogError).reason).toContain('no event with seq 0');
      }
    });

    it('refuses to move a damaged chunk row into a run, and writes nothing', async () => {
      const chunks = streamed(0, 6);
      const { store, events } = await storeWith([chunks]);
      await raw(store, 'UPDATE $s.events SET data = left(data, 3) WHERE seq = 2');
      const error = await rejection(
        store.append('s', [message(6, seqsOf(chunks))], { expectedSeq: 6 }),
      );
      expect(error).toBeInstanceOf(CorruptLogError);
      expect(error).toMatchObject({ row: 2 });
      expect(await count(store, 'chunk_runs')).toBe(0);
      expect(await count(store, 'events')).toBe(events.length);
    });

    it('salvages the events before a damaged run', async () => {
      const first = streamed(0, 3);
      const second = streamed(4, 5);
      const { store, events } = await storeWith([
        [...first, message(3, [0, 1, 2])],
        [...second, message(9, [4, 5, 6, 7, 8])],
      ]);
      await raw(store, 'UPDATE $s.chunk_runs SET time = time + 1 WHERE first_seq = 4');
      const salvaged = await store.load('s', { salvage: true });
      expect(salvaged.events).toEqual(events.slice(0, 4));
      expect(salvaged.damage).toMatchObject({ row: 4 });
    });
  });
});
