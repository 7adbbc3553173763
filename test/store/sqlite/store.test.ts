import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, type SessionEvent } from '../../../src/core/index.js';
import {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  InvalidSessionIdError,
  MemoryStore,
  NotFoundError,
  type SessionStore,
  StorageError,
  StoreBusyError,
} from '../../../src/store/index.js';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/index.js';
import { event, rawEvent } from '../../core/builders.js';
import { events, header, raw, rejection, useTempDir, withRaw } from './helpers.js';

const tempDir = useTempDir();
const opened: SessionStore[] = [];

async function open(file: string, options: Parameters<typeof openSqliteStore>[1] = {}) {
  const store = await openSqliteStore(file, options);
  opened.push(store);
  return store;
}

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
});

async function fresh(): Promise<{ file: string; store: SqliteStore }> {
  const file = join(tempDir(), 'sessions.db');
  return { file, store: await open(file) };
}

describe('create, append and load', () => {
  it('stores surface ops and provenance as JSON text, NULL when absent, and rebuilds only present fields', async () => {
    const { file, store } = await fresh();
    const log = [
      event(0, 'app/note', { n: 0 }, { time: 10 }),
      event(1, 'user/message', { t: 'u' }, { time: 11, surfaceOp: 'append' }),
      event(
        2,
        'user/message',
        { t: 'summary' },
        { time: 12, surfaceOp: { op: 'replace', start: 1, end: 1 }, sourceEventSeqs: [1, 0] },
      ),
      event(3, 'app/derived', null, { time: 13, sourceEventSeqs: [] }),
    ] as SessionEvent[];
    await store.create(header('s'));
    await store.append('s', log, { expectedSeq: 0 });
    const loaded = await store.load('s');
    expect(loaded.events).toEqual(log);
    expect(loaded.events.map((event) => Object.keys(event))).toEqual([
      ['seq', 'time', 'type', 'data'],
      ['seq', 'time', 'type', 'data', 'surfaceOp'],
      ['seq', 'time', 'type', 'data', 'surfaceOp', 'sourceEventSeqs'],
      ['seq', 'time', 'type', 'data', 'sourceEventSeqs'],
    ]);
    expect(loaded.tornTail).toBeUndefined();
    await withRaw(file, (db) => {
      const rows = db
        .prepare(
          "SELECT seq, type, time, data, source_event_seqs, surface_op FROM session_events WHERE session_id = 's' ORDER BY seq",
        )
        .all();
      expect(rows).toEqual([
        {
          seq: 0,
          type: 'app/note',
          time: 10,
          data: '{"n":0}',
          source_event_seqs: null,
          surface_op: null,
        },
        {
          seq: 1,
          type: 'user/message',
          time: 11,
          data: '{"t":"u"}',
          source_event_seqs: null,
          surface_op: '"append"',
        },
        {
          seq: 2,
          type: 'user/message',
          time: 12,
          data: '{"t":"summary"}',
          source_event_seqs: '[1,0]',
          surface_op: '{"op":"replace","start":1,"end":1}',
        },
        {
          seq: 3,
          type: 'app/derived',
          time: 13,
          data: 'null',
          source_event_seqs: '[]',
          surface_op: null,
        },
      ]);
    });
  });

  it('round-trips NUL, lone surrogates, U+2028, SQL metacharacters and quotes in ids and data', async () => {
    const { store } = await fresh();
    const id = `it's "x"; DROP TABLE events;-- $1 ?`;
    const data = {
      nul: 'a\u0000b',
      lone: '\ud800 and \udfff',
      separator: 'line\u2028next',
      sql: "'); DELETE FROM sessions; --",
      big: '123456789012345678901234567890',
    };
    await store.create({ ...header(id), metadata: { note: 'a\u0000\ud83d' } });
    await store.append(id, [{ seq: 0, time: 1, type: 'app/odd', data }] as SessionEvent[], {
      expectedSeq: 0,
    });
    const loaded = await store.load(id);
    expect(loaded.header.metadata).toEqual({ note: 'a\u0000\ud83d' });
    expect(loaded.events[0]?.data).toEqual(data);
    expect((await store.list()).sessions.map((summary) => summary.header.id)).toEqual([id]);
  });

  it('returns fresh, unfrozen events on every load, in a read-only array', async () => {
    const { store } = await fresh();
    await store.create(header('s'));
    await store.append('s', events(0, 3), { expectedSeq: 0 });
    const first = await store.load('s');
    expect(Object.isFrozen(first.events[0])).toBe(false);
    (first.events[0]?.data as { n?: number; id?: string }).id = 'changed';
    // The array is a view of the loaded log: changing it would make the two disagree.
    expect(() => (first.events as unknown[]).pop()).toThrow(TypeError);
    const second = await store.load('s');
    expect(second.events).toEqual(events(0, 3));
  });

  it('refuses to create a session twice and keeps the first header', async () => {
    const { store } = await fresh();
    await store.create(header('dup', 1));
    const error = await rejection(store.create(header('dup', 2)));
    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect((error as AlreadyExistsError).location).toBe(store.location);
    expect((await store.load('dup')).header.createdAt).toBe(1);
  });

  it('refuses an invalid header or session id before writing', async () => {
    const { store } = await fresh();
    expect(await rejection(store.create({ ...header('x'), createdAt: -1 }))).toMatchObject({
      code: 'INVALID_HEADER',
    });
    expect(await rejection(store.create(header('')))).toBeInstanceOf(InvalidSessionIdError);
    expect(await rejection(store.load('x'.repeat(201)))).toBeInstanceOf(InvalidSessionIdError);
    expect((await store.list()).sessions).toEqual([]);
  });

  it('reports a missing session with NotFoundError from load, append and delete', async () => {
    const { store } = await fresh();
    for (const attempt of [
      store.load('none'),
      store.append('none', events(0, 1), { expectedSeq: 0 }),
      store.append('none', [], { expectedSeq: 0 }),
      store.delete('none'),
    ]) {
      expect(await rejection(attempt)).toBeInstanceOf(NotFoundError);
    }
  });

  it('treats an empty batch as a no-op that still checks the expected seq', async () => {
    const { store } = await fresh();
    await store.create(header('s'));
    await store.append('s', [], { expectedSeq: 0 });
    expect(await rejection(store.append('s', [], { expectedSeq: 1 }))).toBeInstanceOf(
      ConflictError,
    );
    expect((await store.load('s')).events).toEqual([]);
  });

  it('refuses a batch that is not contiguous from expectedSeq, writing nothing', async () => {
    const { store } = await fresh();
    await store.create(header('s'));
    const gap = [...events(0, 1), ...events(2, 1)];
    expect(await rejection(store.append('s', gap, { expectedSeq: 0 }))).toBeInstanceOf(
      InvalidArgumentError,
    );
    expect((await store.load('s')).events).toEqual([]);
  });
});

describe('optimistic concurrency', () => {
  it('rejects an append from a second store instance that lost the race, and writes nothing', async () => {
    const { file, store } = await fresh();
    const other = await open(file);
    await store.create(header('s'));
    await store.append('s', events(0, 2), { expectedSeq: 0 });
    const error = await rejection(other.append('s', events(0, 3), { expectedSeq: 0 }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ sessionId: 's', expectedSeq: 0, actualSeq: 2 });
    const future = await rejection(other.append('s', events(5, 1), { expectedSeq: 5 }));
    expect(future).toMatchObject({ expectedSeq: 5, actualSeq: 2 });
    await other.append('s', events(2, 3), { expectedSeq: 2 });
    expect((await store.load('s')).events).toEqual(events(0, 5));
  });

  it('lets exactly one of many interleaved appends win each seq', async () => {
    const { file, store } = await fresh();
    const stores = [store, await open(file), await open(file)];
    await store.create(header('s'));
    let next = 0;
    let conflicts = 0;
    for (let round = 0; round < 20; round++) {
      const results = await Promise.allSettled(
        stores.map((each, i) =>
          each.append('s', events(next, 1 + ((round + i) % 3)), { expectedSeq: next }),
        ),
      );
      for (const result of results) {
        if (result.status === 'rejected') {
          expect(result.reason).toBeInstanceOf(ConflictError);
          conflicts++;
        }
      }
      next = (await stores[round % 3]?.load('s'))?.events.length ?? 0;
    }
    expect(conflicts).toBe(40);
    const loaded = (await store.load('s')).events;
    expect(loaded.map((event) => event.seq)).toEqual(loaded.map((_, index) => index));
    expect((await store.list()).sessions[0]?.eventCount).toBe(loaded.length);
  });
});

describe('list', () => {
  it('pages newest first with the same order and cursors as the memory store, unicode ids included', async () => {
    const { store } = await fresh();
    const memory = new MemoryStore();
    // U+FFFD sorts after an astral character in UTF-8 but before it in UTF-16 (JavaScript).
    const ids = ['b', 'a', '\ufffd', 'z', 'é', '\u{1f600}', 'A', 'aa', '\u{10000}'];
    for (const [i, id] of ids.entries()) {
      for (const target of [store, memory]) await target.create(header(id, 1000 + (i % 3)));
    }
    for (const limit of [1, 2, 3, 8, 100]) {
      let cursor: string | undefined;
      let expectedCursor: string | undefined;
      do {
        const page = await store.list({ limit, ...(cursor === undefined ? {} : { cursor }) });
        const expected = await memory.list({
          limit,
          ...(expectedCursor === undefined ? {} : { cursor: expectedCursor }),
        });
        expect(page.sessions.map((summary) => summary.header)).toEqual(
          expected.sessions.map((summary) => summary.header),
        );
        expect(page.nextCursor).toBe(expected.nextCursor);
        cursor = page.nextCursor;
        expectedCursor = expected.nextCursor;
      } while (cursor !== undefined);
    }
  });

  it('reports the event count and the time of the last write', async () => {
    const { store } = await fresh();
    const before = Date.now();
    await store.create(header('s'));
    await store.append('s', events(0, 4), { expectedSeq: 0 });
    const [summary] = (await store.list()).sessions;
    expect(summary?.eventCount).toBe(4);
    expect(summary?.updatedAt).toBeGreaterThanOrEqual(before);
    expect(summary?.updatedAt).toBeLessThanOrEqual(Date.now());
  });

  it('refuses a cursor it did not issue and a limit below one', async () => {
    const { store } = await fresh();
    for (const options of [
      { cursor: 'garbage' },
      { cursor: '[1]' },
      { limit: 0 },
      { limit: 1.5 },
    ]) {
      expect(await rejection(store.list(options))).toBeInstanceOf(InvalidArgumentError);
    }
  });
});

describe('delete', () => {
  it('removes the session and its events', async () => {
    const { file, store } = await fresh();
    await store.create(header('s'));
    await store.create(header('keep'));
    await store.append('s', events(0, 5), { expectedSeq: 0 });
    await store.append('keep', events(0, 2), { expectedSeq: 0 });
    await store.delete('s');
    expect(await rejection(store.load('s'))).toBeInstanceOf(NotFoundError);
    expect((await store.list()).sessions.map((summary) => summary.header.id)).toEqual(['keep']);
    await withRaw(file, (db) => {
      expect(
        db
          .prepare('SELECT session_id, count(*) AS n FROM session_events GROUP BY session_id')
          .all(),
      ).toEqual([{ session_id: 'keep', n: 2 }]);
      expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 2 });
    });
    await store.create(header('s'));
    expect((await store.load('s')).events).toEqual([]);
  });
});

describe('failures of the driver', () => {
  it('retries SQLITE_BUSY up to its bound, then rejects with a retryable StoreBusyError and writes nothing', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await open(file, { busyTimeoutMs: 20, busyRetryMs: 200 });
    await store.create(header('s'));
    const holder = await raw(file);
    try {
      holder.exec('BEGIN IMMEDIATE');
      const error = await rejection(store.append('s', events(0, 2), { expectedSeq: 0 }));
      expect(error).toBeInstanceOf(StoreBusyError);
      expect(error).toMatchObject({ code: 'STORE_BUSY', retryable: true });
      expect((error as StoreBusyError).cause).toMatchObject({ code: 'SQLITE_BUSY' });
      expect((error as Error).message).toContain(`append to session 's' in ${store.location}`);
      expect(await rejection(store.lock('s'))).toBeInstanceOf(StoreBusyError);
      // A holder that lets go within the bound: the waiting write goes through.
      const pending = store.append('s', events(0, 2), { expectedSeq: 0 });
      setTimeout(() => holder.exec('ROLLBACK'), 80);
      await pending;
    } finally {
      holder.close();
    }
    expect((await store.load('s')).events).toHaveLength(2);
  });

  it('rolls the batch back when the failpoint before COMMIT throws', async () => {
    const file = join(tempDir(), 'sessions.db');
    let fail = true;
    const hits: string[] = [];
    const store = await open(file, {
      failpoint: (name) => {
        hits.push(name);
        if (fail && name === 'append:before-commit') throw new Error('injected');
      },
    });
    await store.create(header('s'));
    const error = await rejection(store.append('s', events(0, 3), { expectedSeq: 0 }));
    expect(error).toBeInstanceOf(StorageError);
    expect((await store.load('s')).events).toEqual([]);
    expect((await store.list()).sessions[0]?.eventCount).toBe(0);
    fail = false;
    await store.append('s', events(0, 3), { expectedSeq: 0 });
    expect(hits).toEqual([
      'pair:before-commit',
      'create:before-ledger',
      'append:before-commit',
      'append:before-commit',
      'append:before-ledger',
      'append:after-commit',
    ]);
  });

  it("forgets the type code a rolled-back batch assigned, so it never reads another writer's type under it", async () => {
    const file = join(tempDir(), 'sessions.db');
    let fail = true;
    const first = await open(file, {
      failpoint: (name) => {
        if (fail && name === 'append:before-commit') throw new Error('injected');
      },
    });
    const second = await open(file);
    await first.create(header('s'));
    await second.create(header('t'));
    const note = (type: string): SessionEvent[] => [
      rawEvent({ seq: 0, time: 1, type, data: null }),
    ];
    expect(
      await rejection(first.append('s', note('app/first'), { expectedSeq: 0 })),
    ).toBeInstanceOf(StorageError);
    // The code the rolled-back batch took is free again: the other store's new type gets it.
    await second.append('t', note('app/second'), { expectedSeq: 0 });
    fail = false;
    await first.append('s', note('app/first'), { expectedSeq: 0 });
    expect((await first.load('s')).events).toEqual(note('app/first'));
    expect((await first.load('t')).events).toEqual(note('app/second'));
    expect((await second.load('s')).events).toEqual(note('app/first'));
    await withRaw(file, (db) => {
      expect(
        db.prepare("SELECT type FROM event_types WHERE type LIKE 'app/%' ORDER BY code").all(),
      ).toEqual([{ type: 'app/second' }, { type: 'app/first' }]);
    });
  });

  it('keeps a committed batch when the failpoint after COMMIT throws: a retry sees a conflict', async () => {
    const file = join(tempDir(), 'sessions.db');
    const store = await open(file, {
      failpoint: (name) => {
        if (name === 'append:after-commit') throw new Error('injected');
      },
    });
    await store.create(header('s'));
    expect(await rejection(store.append('s', events(0, 3), { expectedSeq: 0 }))).toBeInstanceOf(
      StorageError,
    );
    expect((await store.load('s')).events).toEqual(events(0, 3));
    expect(await rejection(store.append('s', events(0, 3), { expectedSeq: 0 }))).toMatchObject({
      code: 'CONFLICT',
      actualSeq: 3,
    });
  });
});

describe('close', () => {
  it('makes every later call reject with ClosedError, and is idempotent', async () => {
    const { store } = await fresh();
    await store.create(header('s'));
    const lock = await store.lock('s');
    await store.close();
    await store.close();
    const tail = { committedSeq: 0, reason: 'none' };
    for (const attempt of [
      store.create(header('t')),
      store.append('s', events(0, 1), { expectedSeq: 0 }),
      store.load('s'),
      store.list(),
      store.delete('s'),
      store.lock('s'),
      store.discardTornTail('s', tail, lock),
    ]) {
      expect(await rejection(attempt)).toBeInstanceOf(ClosedError);
    }
    await lock.release();
  });
});
