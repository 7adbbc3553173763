/**
 * Frozen PostgreSQL writers (issue 34): a worker process commits a random number of batches,
 * freezes inside the transaction of its next append (holding the session's row lock and a share
 * lock on its lease) and is stopped with SIGSTOP; another worker polls `openSession` as a fleet's
 * workers do. Each trial must end with the taker holding the session, every acknowledged event
 * there unchanged, nothing of the frozen batch, and the open turn repaired. A taker still
 * refused after 300 polls counts as a hang. The takeover times are recorded as figures.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { checkInvariants, type UserMessage } from '../../src/core/index.js';
import { LockedError, openSession } from '../../src/store/index.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { type PostgresServer, postgresBinaries, startPostgres } from '../postgres/server.js';
import { untilOutput } from '../store/child-output.js';
import { add, count, expectClean, fail, tally } from './lib/results.js';

const TRIALS = count(6);
const LEASE_MS = 1500;
const POLL_MS = 100;
const available = postgresBinaries() !== undefined || process.env.PALIMPSEST_REQUIRE_PG === '1';

(available ? describe : describe.skip)('concurrency: postgres', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(() => server?.stop());

  it(`takes a session from a writer frozen inside an append (${TRIALS} freezes), losing nothing acknowledged`, async () => {
    const t = tally('concurrency', 'postgres');
    const schema = 'frozen';
    const store = await openPostgresStore({
      connectionString: server.url,
      schema,
      leaseMs: LEASE_MS,
    });
    const times: number[] = [];
    try {
      for (let trial = 0; trial < TRIALS; trial++) {
        const id = `frozen-${trial}`;
        const batches = 1 + Math.floor(Math.random() * 4);
        const child = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            join(import.meta.dirname, '../store/postgres/frozen-writer-child.ts'),
            server.url,
            schema,
            id,
            String(LEASE_MS),
            String(batches),
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
        try {
          const output = await untilOutput(child, 'frozen');
          child.kill('SIGSTOP');
          const frozenAt = Date.now();
          t.runs++;
          t.faults++;
          const acked = Math.max(
            ...[...output.matchAll(/acked (\d+)/g)].map((match) => Number(match[1])),
          );
          let session: Awaited<ReturnType<typeof openSession>> | undefined;
          for (let poll = 0; session === undefined && poll < 300; poll++) {
            try {
              session = await openSession(store, id);
            } catch (error) {
              if (!LockedError.isInstance(error)) {
                fail(t, 'untyped', `${id}: ${String(error)}`);
                break;
              }
              await new Promise((resolve) => setTimeout(resolve, POLL_MS));
            }
          }
          if (session === undefined) {
            fail(t, 'hangs', `${id}: still refused after 300 polls`);
            continue;
          }
          times.push(Date.now() - frozenAt);
          const events = session.events;
          t.acked += acked;
          const expected = ['turn/start', ...Array.from({ length: batches - 1 }, () => 'm')];
          for (const [seq, kind] of expected.entries()) {
            const event = events[seq];
            const ok =
              kind === 'turn/start'
                ? event?.type === 'turn/start'
                : event?.type === 'user/message' && (event.data as UserMessage).id === `m${seq}`;
            if (event === undefined) fail(t, 'lost', `${id}: seq ${seq} missing`);
            else if (!ok) fail(t, 'altered', `${id}: seq ${seq} is ${event.type}`);
          }
          if (JSON.stringify(events).includes('never committed')) {
            fail(t, 'altered', `${id}: the frozen batch landed after its writer lost the lease`);
          }
          if (events.at(-1)?.type !== 'turn/end' || checkInvariants(events).length > 0) {
            fail(t, 'altered', `${id}: the open turn was not repaired`);
          }
          await session.close();
        } finally {
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
        }
      }
    } finally {
      await store.close();
    }
    add(t, 'frozen writers taken over', times.length);
    add(t, 'max frozen-writer takeover ms', Math.max(0, ...times));
    expectClean(t);
  });
});
