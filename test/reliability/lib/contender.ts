/**
 * A child process of the concurrency harness: one of several writers on one store.
 *
 *   node contender.mjs lock   <backend> <location> <session> <writer> <ms>
 *   node contender.mjs append <backend> <location> <session> <writer> <ms>
 *   node contender.mjs hold   <backend> <location> <session>
 *
 * `lock` opens the session as a live writer (the single-writer lock), appends a batch of one
 * to five events tagged with the writer and batch, flushes, prints an `ACK` line per event and
 * a `WINDOW` line (monotonic clock, shared by all processes on Linux) for the time it held the
 * session, closes it, and starts again until `ms` have passed. `append` writes through the store
 * alone with `expectedSeq` from a fresh load, retrying on a conflict. `hold` opens the session,
 * prints `LOCKED` and waits to be killed. Each ends with a `STATS` line. PALIMPSEST_MUTANT
 * selects a broken store (lib/mutants.ts).
 */
import { writeSync } from 'node:fs';
import { PalimpsestError, type SessionEvent } from '../../../src/core/index.js';
import { openSession, type SessionStore } from '../../../src/store/index.js';
import { rawEvent } from '../../core/builders.js';
import { mutantStore, STORE_MUTANTS, type StoreMutant } from './mutants.js';

const [mode, backend, location = '', session = 's', writer = 'w', msArg = '1000'] =
  process.argv.slice(2);
const deadline = Date.now() + Number(msArg);

function say(line: string): void {
  writeSync(1, `${line}\n`);
}

async function openBackend(): Promise<SessionStore> {
  const store =
    backend === 'jsonl'
      ? await (await import('../../../src/store/jsonl/index.js')).openJsonlStore(location)
      : await (await import('../../../src/store/sqlite/index.js')).openSqliteStore(location);
  const mutant = process.env.PALIMPSEST_MUTANT as StoreMutant | undefined;
  return mutant !== undefined && STORE_MUTANTS.includes(mutant)
    ? mutantStore(store, mutant)
    : store;
}

const stats = { attempts: 0, commits: 0, conflicts: 0, errors: 0 };
const errorCodes = new Set<string>();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A typed error counts as contention and is retried; anything else ends the writer. */
function contended(error: unknown): void {
  if (!PalimpsestError.isInstance(error)) throw error;
  const code = (error as PalimpsestError).code;
  if (code === 'LOCKED' || code === 'CONFLICT') stats.conflicts++;
  else {
    stats.errors++;
    errorCodes.add(code);
  }
}

function batch(from: number, n: number): SessionEvent[] {
  const size = 1 + (n % 5);
  return Array.from({ length: size }, (_, i) =>
    rawEvent({
      seq: from + i,
      time: Date.now(),
      type: 'app/note',
      data: { writer, batch: n, i, of: size },
    }),
  );
}

async function lockLoop(store: SessionStore): Promise<void> {
  for (let n = 0; Date.now() < deadline; ) {
    stats.attempts++;
    let live: Awaited<ReturnType<typeof openSession>>;
    try {
      live = await openSession(store, session, { durability: { mode: 'each' } });
    } catch (error) {
      contended(error);
      await pause(1 + Math.random() * 3);
      continue;
    }
    const start = process.hrtime.bigint();
    try {
      const events = batch(live.seq, n);
      for (const event of events) live.append(event.type, event.data);
      await live.flush();
      const stored = live.events;
      for (let seq = stored.length - events.length; seq < stored.length; seq++)
        say(`ACK ${seq} ${JSON.stringify(stored[seq]?.data)}`);
      stats.commits++;
      n++;
    } catch (error) {
      contended(error);
    } finally {
      say(`WINDOW ${start} ${process.hrtime.bigint()}`);
      await live.close().catch(() => {});
    }
  }
}

async function appendLoop(store: SessionStore): Promise<void> {
  try {
    await store.create({ version: 1, id: session, createdAt: Date.now() });
  } catch (error) {
    if (!PalimpsestError.isInstance(error)) throw error;
  }
  for (let n = 0; Date.now() < deadline; ) {
    stats.attempts++;
    try {
      const at = (await store.load(session)).events.length;
      const events = batch(at, n);
      await store.append(session, events, { expectedSeq: at });
      for (const event of events) say(`ACK ${event.seq} ${JSON.stringify(event.data)}`);
      stats.commits++;
      n++;
    } catch (error) {
      contended(error);
      await pause(Math.random() * 2);
    }
  }
}

async function main(): Promise<void> {
  const store = await openBackend();
  if (mode === 'hold') {
    await openSession(store, session);
    say('LOCKED');
    // A pending promise alone does not keep a process alive; the timer does, until the kill.
    setInterval(() => {}, 60_000);
    await new Promise(() => {});
  }
  await (mode === 'append' ? appendLoop(store) : lockLoop(store));
  await store.close();
  say(`STATS ${JSON.stringify({ ...stats, errorCodes: [...errorCodes] })}`);
}

main().catch((error: unknown) => {
  say(`UNTYPED ${String(error).slice(0, 500)}`);
  process.exit(3);
});
