/**
 * What the PostgreSQL store adds to the contract: byte-exact hostile payloads, the schema's
 * version policy, leases across processes and hosts with fencing, and appends that survive a
 * connection lost at the worst moment.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
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
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/index.js';
import { rejection } from '../../conformance/helpers.js';
import { event, recordToolTurn, tickingClock } from '../../core/builders.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';
import { type CuttingProxy, startProxy } from '../../postgres/proxy.js';

const opened: PostgresStore[] = [];
const schemas: string[] = [];

async function open(options: Partial<Parameters<typeof openPostgresStore>[0]> = {}) {
  const schema = options.schema ?? freshSchema('st');
  if (!schemas.includes(schema)) schemas.push(schema);
  const store = await openPostgresStore({
    connectionString: pgUrl,
    schema,
    maxConnections: 4,
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

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
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
      return `INSERT INTO ${events} (session_key, seq, type, time, data) SELECT session_key, ${session.seq}, type, time, data FROM ${events} WHERE seq = ${chunk?.seq}`;
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
      client.query(`UPDATE "${schema}".meta SET value = '4' WHERE key = 'schema_version'`),
    );
    const refused = await openPostgresStore({ connectionString: pgUrl, schema }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FormatVersionError);
    expect((refused as FormatVersionError).message).toContain(
      'schema version 4, newer than this palimpsest supports (3)',
    );
    const { rows } = await withClient((client) =>
      client.query(`SELECT value FROM "${schema}".meta`),
    );
    expect(rows).toEqual([{ value: '4' }]);
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
  it('fence off a writer whose lease was taken over: its append fails and writes nothing', async () => {
    const first = await open({ leaseMs: 60_000, heartbeatMs: 59_000 });
    const second = await open({
      schema: first.settings.schema,
      leaseMs: 60_000,
      heartbeatMs: 59_000,
    });
    await first.create(header('s'));
    await first.lock('s');
    await first.append('s', notes(0, 2), { expectedSeq: 0 });
    expect(await second.lock('s').catch((error: unknown) => error)).toBeInstanceOf(LockedError);
    // The first writer stalls past its lease (its heartbeat never came).
    await withClient((client) =>
      client.query(
        `UPDATE "${first.settings.schema}".leases SET expires_at = now() - interval '1 second'`,
      ),
    );
    await second.lock('s');
    const fenced = await first
      .append('s', notes(2, 1, 'late'), { expectedSeq: 2 })
      .catch((error: unknown) => error);
    expect(fenced).toBeInstanceOf(LeaseLostError);
    expect((fenced as LeaseLostError).holder?.pid).toBe(process.pid);
    await second.append('s', notes(2, 1, 'new holder'), { expectedSeq: 2 });
    const events = (await second.load('s')).events;
    expect(events.map((event) => (dataAsJson(event) as { text: string }).text)).toEqual([
      'note',
      'note',
      'new holder',
    ]);
  });

  it('held on another host is taken over once it expires, and says who held it until then', async () => {
    const store = await open({ leaseMs: 5_000 });
    const owner = { pid: 4242, host: 'other-host', since: Date.now(), token: 'elsewhere' };
    await withClient((client) =>
      client.query(
        `INSERT INTO "${store.settings.schema}".leases (session_id, owner, token, refreshed_at, expires_at) VALUES ('s', $1, 'elsewhere', now(), now() + interval '800 milliseconds')`,
        [JSON.stringify(owner)],
      ),
    );
    const locked = await store.lock('s').catch((error: unknown) => error);
    expect(locked).toBeInstanceOf(LockedError);
    expect((locked as Error).message).toContain('pid 4242 on other-host');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const lock = await store.lock('s');
    expect(lock.owner.host).not.toBe('other-host');
  });

  it('of a worker killed mid-turn is taken over at once on its host, and the next worker repairs the session', async () => {
    const store = await open({ leaseMs: 30_000 });
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
    const started = Date.now();
    const session = await openSession(store, 'job');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(session.openReport.repairedEvents).toBe(3);
    const result = session.events.find((event) => event.type === 'tool/result');
    expect(JSON.stringify(result?.data)).toContain(TOOL_OUTCOME_UNKNOWN);
    expect(session.events.at(-1)?.type).toBe('turn/end');
    await session.close();
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
    await Promise.race([
      watching,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`saw ${seen.length} events`)), 60_000),
      ),
    ]);
    expect(terminated).toBeGreaterThan(0);
    expect(seen).toHaveLength(10_000);
    expect(seen.every((seq, i) => seq === i)).toBe(true);
  });
});
