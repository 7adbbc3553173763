/**
 * What the PostgreSQL store adds to the contract: byte-exact hostile payloads, the schema's
 * version policy, leases across processes and hosts with fencing, and appends that survive a
 * connection lost at the worst moment.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  dataAsJson,
  Session,
  type SessionEvent,
  TOOL_OUTCOME_UNKNOWN,
} from '../../../src/core/index.js';
import {
  ConflictError,
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  LeaseLostError,
  LockedError,
  openSession,
  StorageError,
  StoreNotFoundError,
  StoreUnavailableError,
} from '../../../src/store/index.js';
import {
  openPostgresStore,
  type PgPool,
  type PgResult,
  type PostgresStore,
  type PostgresStoreOptions,
} from '../../../src/store/postgres/index.js';
import { rejection } from '../../conformance/helpers.js';
import { event, recordToolTurn, tickingClock } from '../../core/builders.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';
import { type CuttingProxy, startProxy } from '../../postgres/proxy.js';
import { ManualLockClock } from '../manual-lock-clock.js';

const opened: PostgresStore[] = [];
const schemas: string[] = [];

async function open(options: PostgresStoreOptions = {}) {
  const schema = options.schema ?? freshSchema('st');
  if (!schemas.includes(schema)) schemas.push(schema);
  const store = await openPostgresStore({
    ...(options.pool === undefined ? { connectionString: pgUrl, maxConnections: 4 } : {}),
    schema,
    ...options,
  });
  opened.push(store);
  return store;
}

function notes(from: number, count: number, text = 'note'): SessionEvent[] {
  return Array.from({ length: count }, (_, i) =>
    event(from + i, 'app/note', { n: from + i, text }, { time: 1000 + from + i }),
  ) as SessionEvent[];
}

const header = (id: string) => ({ version: 1 as const, id, createdAt: 1 });

const pools: pg.Pool[] = [];

/**
 * A pool of the test's own whose queries the test can wait for: a heartbeat is a query the lock
 * clock starts, and `settled()` resolves once every query started so far has finished.
 */
function trackedPool(): PgPool & { settled(): Promise<void> } {
  const pool = new pg.Pool({ connectionString: pgUrl, max: 4 });
  pool.on('error', () => {});
  pools.push(pool);
  const pending = new Set<Promise<unknown>>();
  return {
    query<R>(text: string, values?: readonly unknown[]) {
      const result = pool.query(text, values === undefined ? undefined : [...values]);
      pending.add(result);
      result.then(
        () => pending.delete(result),
        () => pending.delete(result),
      );
      return result as Promise<PgResult<R>>;
    },
    connect: () => pool.connect(),
    end: () => pool.end(),
    on: (event, listener) => pool.on(event, listener),
    settled: async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  for (const pool of pools.splice(0)) await pool.end().catch(() => {});
});
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

describePg('hostile input', () => {
  it('keeps ids with SQL metacharacters and data with NUL escapes, lone surrogates and 10 MB values byte-exact', async () => {
    const store = await open();
    const ids = [
      "'; DROP TABLE sessions; --",
      'quote"d',
      'back\\slash',
      'percent%_under',
      'é 世界 🌍',
    ];
    const data = [
      { nul: 'a\u0000b', surrogate: '\ud800 lone', reversed: '\udc00\ud800' },
      { big: 'x'.repeat(10 * 1024 * 1024) },
      JSON.parse('{"__proto__": {"polluted": true}, "z": 1, "a": 2}'),
      { sql: "'); DELETE FROM events; --", dollar: '$1 $$ $tag$' },
    ];
    for (const id of ids) {
      await store.create(header(id));
      const events = data.map((value, seq) => ({
        seq,
        time: seq,
        type: 'app/x',
        data: value,
      })) as SessionEvent[];
      await store.append(id, events, { expectedSeq: 0 });
      const loaded = await store.load(id);
      expect(loaded.events.map((event) => JSON.stringify(event.data))).toEqual(
        events.map((event) => JSON.stringify(event.data)),
      );
      expect(Object.keys(loaded.events[2]?.data as object)).toEqual(['__proto__', 'z', 'a']);
    }
    const listed = (await store.list()).sessions.map((summary) => summary.header.id).sort();
    expect(listed).toEqual([...ids].sort());
  });
});

describePg('damage found by a fast load as by a full one', () => {
  /** A stored session of two tool turns, then `sql` run on its events table behind the store. */
  async function damaged(sql: (events: string, session: Session) => string) {
    const store = await open();
    const session = Session.create({ id: 'd', clock: tickingClock() });
    recordToolTurn(session, 1);
    recordToolTurn(session, 2);
    await store.create(header('d'));
    await store.append('d', session.events, { expectedSeq: 0 });
    const events = `"${schemas[schemas.length - 1] as string}".events`;
    await withClient((client) => client.query(sql(events, session)));
    return store;
  }

  async function bothLoads(store: PostgresStore, message: string | RegExp) {
    for (const options of [{}, { elideFinishedChunks: true }]) {
      const error = await rejection(store.load('d', options));
      expect(error).toBeInstanceOf(CorruptLogError);
      expect((error as CorruptLogError).message).toMatch(message);
    }
  }

  it('a missing chunk row is a CorruptLogError naming its seq', async () => {
    let chunk = -1;
    const store = await damaged((events, session) => {
      chunk = (session.events.find((event) => event.type === 'assistant/chunk') as SessionEvent)
        .seq;
      return `DELETE FROM ${events} WHERE seq = ${chunk}`;
    });
    await bothLoads(store, `seq ${chunk}`);
  });

  it('a missing message row is a CorruptLogError naming its seq', async () => {
    const store = await damaged((events) => `DELETE FROM ${events} WHERE seq = 1`);
    await bothLoads(store, 'seq 1');
  });

  it('a chunk row beyond the recorded length is a CorruptLogError', async () => {
    const store = await damaged((events, session) => {
      const chunk = session.events.find((event) => event.type === 'assistant/chunk');
      return `INSERT INTO ${events} (session_key, seq, type, time, data, crc) SELECT session_key, ${session.seq}, type, time, data, crc FROM ${events} WHERE seq = ${chunk?.seq}`;
    });
    await bothLoads(store, 'beyond its recorded length');
  });
});

describePg('the schema', () => {
  it('is created once when many stores, each with its own pool, open a new store at once', async () => {
    const schema = freshSchema('race');
    const stores = await Promise.all(Array.from({ length: 6 }, () => open({ schema })));
    await stores[0]?.create(header('a'));
    expect((await stores[5]?.list())?.sessions).toHaveLength(1);
  });

  it('of another version is refused and left untouched', async () => {
    const store = await open();
    const schema = store.settings.schema;
    await store.close();
    await withClient((client) =>
      client.query(`UPDATE "${schema}".meta SET value = '5' WHERE key = 'schema_version'`),
    );
    const refused = await openPostgresStore({ connectionString: pgUrl, schema }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FormatVersionError);
    expect((refused as FormatVersionError).message).toContain(
      'schema version 5, newer than this palimpsest supports (4)',
    );
    const { rows } = await withClient((client) =>
      client.query(`SELECT value FROM "${schema}".meta`),
    );
    expect(rows).toEqual([{ value: '5' }]);
  });

  it('is not created by a read-only open or one that must not create', async () => {
    const schema = freshSchema('absent');
    for (const options of [{ readOnly: true }, { create: false }]) {
      const refused = await openPostgresStore({
        connectionString: pgUrl,
        schema,
        ...options,
      }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreNotFoundError);
    }
    const { rows } = await withClient((client) =>
      client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]),
    );
    expect(rows).toEqual([]);
  });

  it('holding foreign tables is refused', async () => {
    const schema = freshSchema('foreign');
    schemas.push(schema);
    await withClient(async (client) => {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE "${schema}".orders (id int)`);
    });
    const refused = await openPostgresStore({ connectionString: pgUrl, schema }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(InvalidStoreError);
    expect((refused as Error).message).toContain('orders');
  });
});

describePg('leases', () => {
  const LEASE_MS = 3_000;
  const HEARTBEAT_MS = 1_000;
  /** Lease options timed by `clock`. */
  const timed = (clock: ManualLockClock) => ({
    leaseMs: LEASE_MS,
    heartbeatMs: HEARTBEAT_MS,
    lockClock: clock,
  });

  /** When the lease of session `id` was last refreshed and when it expires, in epoch ms. */
  async function leaseTimes(schema: string, id: string) {
    const { rows } = await withClient((client) =>
      client.query<{ refreshed: string; expires: string }>(
        `SELECT (extract(epoch FROM refreshed_at) * 1000)::bigint AS refreshed, (extract(epoch FROM expires_at) * 1000)::bigint AS expires FROM "${schema}".leases WHERE session_id = $1`,
        [id],
      ),
    );
    const row = rows[0];
    return row === undefined
      ? undefined
      : { refreshed: Number(row.refreshed), expires: Number(row.expires) };
  }

  it('fence off a writer whose lease was taken over: its append fails and writes nothing', async () => {
    // The first writer's clock never moves: it stalls, and its heartbeat never comes.
    const stalled = new ManualLockClock();
    const clock = new ManualLockClock();
    const first = await open(timed(stalled));
    const second = await open({ schema: first.settings.schema, ...timed(clock) });
    await first.create(header('s'));
    await first.lock('s');
    await first.append('s', notes(0, 2), { expectedSeq: 0 });
    expect(await rejection(second.lock('s'))).toBeInstanceOf(LockedError);
    // Respected up to its bound, taken over at it.
    await clock.advance(LEASE_MS - 1);
    expect(await rejection(second.lock('s'))).toBeInstanceOf(LockedError);
    await clock.advance(1);
    await second.lock('s');
    const fenced = await rejection(first.append('s', notes(2, 1, 'late'), { expectedSeq: 2 }));
    expect(fenced).toBeInstanceOf(LeaseLostError);
    expect((fenced as LeaseLostError).holder?.pid).toBe(process.pid);
    await second.append('s', notes(2, 1, 'new holder'), { expectedSeq: 2 });
    // Once the new holder has appended, the fenced writer's seq is stale too: it still hears
    // that its lease is gone, not of a conflict.
    const stale = await rejection(first.append('s', notes(2, 1, 'late'), { expectedSeq: 2 }));
    expect(stale).toBeInstanceOf(LeaseLostError);
    const events = (await second.load('s')).events;
    expect(events.map((event) => (dataAsJson(event) as { text: string }).text)).toEqual([
      'note',
      'note',
      'new holder',
    ]);
  });

  it('held on another host is respected until the clock passes its expiry, then taken over, and says who held it until then', async () => {
    const clock = new ManualLockClock();
    const store = await open(timed(clock));
    const owner = { pid: 4242, host: 'other-host', since: clock.now(), token: 'elsewhere' };
    await withClient((client) =>
      client.query(
        `INSERT INTO "${store.settings.schema}".leases (session_id, owner, token, refreshed_at, expires_at) VALUES ('s', $1, 'elsewhere', to_timestamp($2::float8 / 1000), to_timestamp(($2::float8 + 800) / 1000))`,
        [JSON.stringify(owner), clock.now()],
      ),
    );
    const locked = await rejection(store.lock('s'));
    expect(locked).toBeInstanceOf(LockedError);
    expect((locked as Error).message).toContain('pid 4242 on other-host');
    await clock.advance(799);
    expect(await rejection(store.lock('s'))).toBeInstanceOf(LockedError);
    await clock.advance(1);
    const lock = await store.lock('s');
    expect(lock.owner.host).not.toBe('other-host');
    expect(lock.owner.since).toBe(clock.now());
  });

  it('is renewed each time the clock advances a heartbeat, and no longer once released', async () => {
    const clock = new ManualLockClock();
    const pool = trackedPool();
    const holder = await open({ pool, ...timed(clock) });
    const schema = holder.settings.schema;
    const other = await open({ schema, ...timed(clock) });
    const lock = await holder.lock('s');
    const taken = clock.now();
    expect(await leaseTimes(schema, 's')).toEqual({ refreshed: taken, expires: taken + LEASE_MS });
    for (let beat = 1; beat <= 3; beat++) {
      await clock.advance(HEARTBEAT_MS);
      await pool.settled();
      const renewed = taken + beat * HEARTBEAT_MS;
      expect(await leaseTimes(schema, 's')).toEqual({
        refreshed: renewed,
        expires: renewed + LEASE_MS,
      });
    }
    // The clock is now at the lease's first expiry: only the renewals keep it in force.
    expect(await rejection(other.lock('s'))).toBeInstanceOf(LockedError);
    await lock.release();
    expect(clock.heartbeats).toBe(0);
    expect(await leaseTimes(schema, 's')).toBeUndefined();
    await other.lock('s');
  });

  it('of a worker killed mid-turn is taken over at once on its host, and the next worker repairs the session', async () => {
    // This store's clock never moves: the worker's lease stays in force by its expiry, so only
    // the owner's death (judged by its process on this host) frees it.
    const store = await open({ leaseMs: 30_000, lockClock: new ManualLockClock(Date.now()) });
    const schema = store.settings.schema;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'lease-child.ts'),
        pgUrl,
        schema,
        'job',
        '30000',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    });
    expect(await store.lock('job').catch((error: unknown) => error)).toBeInstanceOf(LockedError);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const session = await openSession(store, 'job');
    expect(session.openReport.repairedEvents).toBe(3);
    const result = session.events.find((event) => event.type === 'tool/result');
    expect(JSON.stringify(result?.data)).toContain(TOOL_OUTCOME_UNKNOWN);
    expect(session.events.at(-1)?.type).toBe('turn/end');
    await session.close();
  });

  it('lets another worker take a session from a writer frozen inside an append, once its lease is over', async () => {
    const store = await open({ leaseMs: 1500 });
    const schema = store.settings.schema;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, 'frozen-writer-child.ts'),
        pgUrl,
        schema,
        'frozen',
        '1500',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('frozen')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
      });
      // Stopped inside its transaction, holding the session's row and a share lock on its lease.
      child.kill('SIGSTOP');
      // A worker polls for the session as a fleet's workers do: refused while the lease runs,
      // then taking it. The frozen transaction still holds its locks when the lease lapses; the
      // server ends it once it has idled a lease long, so the takeover does not wait on it.
      let session: Awaited<ReturnType<typeof openSession>> | undefined;
      for (let attempt = 0; session === undefined; attempt++) {
        try {
          session = await openSession(store, 'frozen');
        } catch (error) {
          if (!(error instanceof LockedError) || attempt > 200) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect(session.events.map((event) => event.type)).toEqual(['turn/start', 'turn/end']);
      expect(JSON.stringify(session.events)).not.toContain('never committed');
      await session.close();
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  it('let exactly one of many racing writers take a session', async () => {
    const stores = [await open()];
    for (let i = 0; i < 5; i++)
      stores.push(await open({ schema: stores[0]?.settings.schema as string }));
    const results = await Promise.allSettled(stores.map((store) => store.lock('race')));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(LockedError);
    }
  });
});

describe('a server that cannot be reached', () => {
  it('by a host name that does not resolve is a mistake reported at once, not an outage waited out', async () => {
    const error = await rejection(
      openPostgresStore({
        connectionString: 'postgres://u@no-such-host.invalid/db',
        retryMs: 600_000,
      }),
    );
    expect(error).toBeInstanceOf(StorageError);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect((error as StorageError).message).toContain('ENOTFOUND');
  });
});

describePg('a lost connection', () => {
  let proxy: CuttingProxy;
  beforeAll(async () => {
    proxy = await startProxy(Number(new URL(pgUrl).port));
  });
  afterAll(() => proxy.close());

  it('after the server committed but before the client heard: the retried append is applied exactly once', async () => {
    const schema = freshSchema('cut');
    const store = await open({ connectionString: proxy.url(pgUrl), schema, retryMs: 5_000 });
    await store.create(header('s'));
    await store.append('s', notes(0, 3), { expectedSeq: 0 });
    const cutsBefore = proxy.cuts;
    proxy.cutAfterNextCommit();
    await store.append('s', notes(3, 204), { expectedSeq: 3 });
    expect(proxy.cuts).toBe(cutsBefore + 1);
    const events = (await store.load('s')).events;
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i));
    expect(events).toHaveLength(207);
    // The batch landed once: appending it again is a conflict, not a duplicate.
    expect(
      await store.append('s', notes(3, 204), { expectedSeq: 3 }).catch((error: unknown) => error),
    ).toBeInstanceOf(ConflictError);
  });

  it('for longer than the retry bound: a retryable StoreUnavailableError, and a later load tells whether it landed', async () => {
    const schema = freshSchema('down');
    const store = await open({ connectionString: proxy.url(pgUrl), schema, retryMs: 300 });
    await store.create(header('s'));
    proxy.cutAfterNextCommit({ thenRefuse: true });
    const failed = await store
      .append('s', notes(0, 5), { expectedSeq: 0 })
      .catch((error: unknown) => error);
    proxy.refuse(false);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect(failed).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      outcome: 'unknown',
    });
    expect((await store.load('s')).events).toHaveLength(5);
  });
});

describePg('watch', () => {
  it('sees each of 10,000 events exactly once, in order, across a forced reconnect of its listening connection', async () => {
    const reader = await open();
    const writer = await open({ schema: reader.settings.schema });
    await writer.create(header('tail'));
    const stop = new AbortController();
    const seen: number[] = [];
    let terminated = 0;
    const watching = (async () => {
      for await (const event of reader.watch('tail', { signal: stop.signal })) {
        seen.push(event.seq);
        if (seen.length === 10_000) stop.abort();
      }
    })();
    for (let from = 0; from < 10_000; from += 100) {
      await writer.append('tail', notes(from, 100), { expectedSeq: from });
      if (from === 3_000) {
        const { rows } = await withClient((client) =>
          client.query(
            "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
          ),
        );
        terminated = rows.length;
      }
    }
    await watching;
    expect(terminated).toBeGreaterThan(0);
    expect(seen).toHaveLength(10_000);
    expect(seen.every((seq, i) => seq === i)).toBe(true);
  });
});
