/**
 * Chunk runs (schema 4): the chunks a message finishes leave `events` for one compressed row of
 * `chunk_runs`, and every read gives them back byte for byte.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isElidedChunk, type SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError, type SessionStore } from '../../../src/store/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import { event } from '../../core/builders.js';
import { message, streamed } from '../chunk-run-events.js';
import { header, type RawDatabase, rejection, useTempDir, withRaw } from './helpers.js';

const tempDir = useTempDir();
const opened: SessionStore[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
});

async function storeWith(batches: readonly SessionEvent[][]): Promise<{
  file: string;
  store: SessionStore;
  events: SessionEvent[];
}> {
  const file = join(tempDir(), 'sessions.db');
  const store = await openSqliteStore(file);
  opened.push(store);
  await store.create(header('s'));
  const events: SessionEvent[] = [];
  for (const batch of batches) {
    await store.append('s', batch, { expectedSeq: events.length });
    events.push(...batch);
  }
  return { file, store, events };
}

const count = (db: RawDatabase, table: string): number =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('chunk runs', () => {
  it('store the chunks a message finishes in one row and load them byte for byte', async () => {
    const chunks = streamed(0, 50);
    const { file, store, events } = await storeWith([
      [
        ...chunks,
        message(
          50,
          chunks.map((c) => c.seq),
        ),
      ],
    ]);
    await withRaw(file, (db) => {
      expect(count(db, 'chunk_runs')).toBe(1);
      expect(count(db, 'events')).toBe(1);
    });
    expect((await store.load('s')).events).toEqual(events);
  });

  it('take in the chunks earlier batches stored as rows when the message lands', async () => {
    const chunks = streamed(0, 30);
    const { file, store, events } = await storeWith([
      chunks.slice(0, 10),
      chunks.slice(10, 25),
      [
        ...chunks.slice(25),
        message(
          30,
          chunks.map((c) => c.seq),
        ),
      ],
    ]);
    await withRaw(file, (db) => {
      expect(count(db, 'chunk_runs')).toBe(1);
      expect(count(db, 'events')).toBe(1);
    });
    expect((await store.load('s')).events).toEqual(events);
    const fast = (await store.load('s', { elideFinishedChunks: true })).events;
    expect(fast.slice(0, 30).every(isElidedChunk)).toBe(true);
    expect(fast[30]).toEqual(events[30]);
  });

  it('leave the chunks no message cites, and a cited range broken by other events, as rows', async () => {
    const open = streamed(0, 4);
    const tool: SessionEvent = event(
      4,
      'tool/call',
      { turn: 1, step: 1, callId: 'c', name: 'n', arguments: '{}' },
      { time: 1_700_000_000_100 },
    );
    const { file, store, events } = await storeWith([
      [...open, tool, ...streamed(5, 3), message(8, [0, 1, 4, 5, 6, 7])],
      streamed(9, 5),
    ]);
    await withRaw(file, (db) => {
      const runs = db.prepare('SELECT first_seq, count FROM chunk_runs ORDER BY first_seq').all();
      expect(runs).toEqual([
        { first_seq: 0, count: 2 },
        { first_seq: 5, count: 3 },
      ]);
    });
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
    const watching = (async () => {
      for await (const event of store.watch('s', { fromSeq: 5, signal: stop.signal })) {
        seen.push(event);
        if (event.seq === 40) stop.abort();
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) throw error;
    });
    await store.append(
      's',
      [
        ...chunks.slice(20),
        message(
          40,
          chunks.map((c) => c.seq),
        ),
      ],
      {
        expectedSeq: 20,
      },
    );
    events.push(
      ...chunks.slice(20),
      message(
        40,
        chunks.map((c) => c.seq),
      ),
    );
    await watching;
    expect(seen).toEqual(events.slice(5));
    // A watcher that starts inside a run reads it from there.
    const late: SessionEvent[] = [];
    for await (const event of store.watch('s', { fromSeq: 33, signal: AbortSignal.timeout(500) })) {
      late.push(event);
      if (event.seq === 40) break;
    }
    expect(late).toEqual(events.slice(33));
  });

  it('are deleted with their session', async () => {
    const chunks = streamed(0, 10);
    const { file, store } = await storeWith([
      [
        ...chunks,
        message(
          10,
          chunks.map((c) => c.seq),
        ),
      ],
    ]);
    await store.delete('s');
    await withRaw(file, (db) => expect(count(db, 'chunk_runs')).toBe(0));
  });

  describe('damage', () => {
    async function damagedRun(sql: string): Promise<{ file: string; store: SessionStore }> {
      const chunks = streamed(0, 20);
      const { file, store } = await storeWith([
        [
          ...chunks,
          message(
            20,
            chunks.map((c) => c.seq),
          ),
        ],
      ]);
      await withRaw(file, (db) => db.prepare(sql).run());
      return { file, store };
    }

    it.each([
      [
        'a flipped bit in the compressed data',
        "UPDATE chunk_runs SET data = CAST(X'00' || substr(data, 2) AS BLOB)",
      ],
      ['a changed time', 'UPDATE chunk_runs SET time = time + 1'],
      ['a changed size', "UPDATE chunk_runs SET sizes = CAST(X'01' || substr(sizes, 2) AS BLOB)"],
      ['a changed count', 'UPDATE chunk_runs SET count = count - 1'],
    ])('finds %s on a full load and on a fast one', async (_, sql) => {
      const { file, store } = await damagedRun(sql);
      for (const options of [{}, { elideFinishedChunks: true }]) {
        const error = await rejection(store.load('s', options));
        expect(error).toBeInstanceOf(CorruptLogError);
        expect(error).toMatchObject({ file, row: 0 });
      }
    });

    it('finds a deleted run as a missing seq', async () => {
      const { store } = await damagedRun('DELETE FROM chunk_runs');
      const error = await rejection(store.load('s'));
      expect(error).toBeInstanceOf(CorruptLogError);
      expect((error as CorruptLogError).reason).toContain('no event with seq 0');
    });

    it('refuses to move a damaged chunk row into a run, and writes nothing', async () => {
      const chunks = streamed(0, 6);
      const { file, store, events } = await storeWith([chunks]);
      await withRaw(file, (db) =>
        db.prepare('UPDATE events SET time = time + 1 WHERE seq = 2').run(),
      );
      const error = await rejection(
        store.append(
          's',
          [
            message(
              6,
              chunks.map((c) => c.seq),
            ),
          ],
          { expectedSeq: 6 },
        ),
      );
      expect(error).toBeInstanceOf(CorruptLogError);
      expect(error).toMatchObject({ row: 2 });
      await withRaw(file, (db) => {
        expect(count(db, 'chunk_runs')).toBe(0);
        expect(count(db, 'events')).toBe(events.length);
      });
    });

    it('salvages the events before a damaged run', async () => {
      const first = streamed(0, 3);
      const second = streamed(4, 5);
      const { file, store, events } = await storeWith([
        [...first, message(3, [0, 1, 2])],
        [...second, message(9, [4, 5, 6, 7, 8])],
      ]);
      await withRaw(file, (db) =>
        db.prepare('UPDATE chunk_runs SET time = time + 1 WHERE first_seq = 4').run(),
      );
      const salvaged = await store.load('s', { salvage: true });
      expect(salvaged.events).toEqual(events.slice(0, 4));
      expect(salvaged.damage).toMatchObject({ row: 4 });
    });
  });
});
