/**
 * A worker for the frozen-writer tests: opens session `id` of the PostgreSQL store, commits
 * BATCHES batches (default 1; prints `acked N` after each, N the events committed), then freezes
 * inside the transaction of its next append (after the fencing read, before its rows go in),
 * prints `frozen` and waits there for ever (the test stops it with SIGSTOP as well): a writer
 * whose process or host stalled mid-append.
 * Usage: frozen-writer-child.ts URL SCHEMA ID LEASE_MS [BATCHES]
 */
import pg from 'pg';
import { openSession } from '../../../src/store/index.js';
import { openPostgresStore } from '../../../src/store/postgres/index.js';
import { user } from '../../core/builders.js';

const [url, schema, id, leaseMs, batches] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];
let freeze = false;
const pool = new pg.Pool({ connectionString: url });
pool.on('error', () => {});
const connect = pool.connect.bind(pool);
const patched = new WeakSet<object>();
pool.connect = (async () => {
  const client = await connect();
  if (!patched.has(client)) {
    patched.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    client.query = ((...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : '';
      if (freeze && /^INSERT INTO .*\.events/.test(text)) {
        process.stdout.write('frozen\n');
        return new Promise(() => {});
      }
      return query(...args);
    }) as typeof client.query;
  }
  return client;
}) as typeof pool.connect;

const store = await openPostgresStore({ pool, schema, leaseMs: Number(leaseMs) });
const session = await openSession(store, id);
session.append('turn/start', { turn: 1 });
await session.flush();
process.stdout.write(`acked ${session.seq}\n`);
for (let batch = 1; batch < Number(batches ?? 1); batch++) {
  session.append('user/message', user(`m${batch}`, `batch ${batch}`), { surfaceOp: 'append' });
  await session.flush();
  process.stdout.write(`acked ${session.seq}\n`);
}
freeze = true;
session.append('user/message', user('u1', 'never committed'), { surfaceOp: 'append' });
await session.flush();
