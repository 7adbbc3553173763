/**
 * The child writer of the crash and power-loss harnesses. It opens `sessions` sessions on one
 * real store (repairing whatever the previous child left) and records agent turns on all of
 * them at once, forever, printing `ACK <session> <event JSON>` for every event once a flush
 * covering it has resolved. With a failpoint armed, the store calls the hook at that point of
 * its write path; on the chosen hit the child prints `FAILPOINT <name>` and blocks until the
 * parent kills it with SIGKILL. Several sessions per process give each kill more states to
 * check (a kill lands mid-write on one session while another waits for its fsync).
 *
 *   node writer.mjs <jsonl|sqlite> <location> <failpoint|random> <hit> <seed> [sessions]
 *
 * Bundled by setup.ts; PALIMPSEST_MUTANT selects a deliberately broken store (see `mutate`).
 */
import { writeSync } from 'node:fs';
import type { SessionEvent } from '../../../src/core/index.js';
import { type LiveSession, openSession, type SessionStore } from '../../../src/store/index.js';
import { crashSessionId, random, recordTurns } from './workload.js';

const [backend, location, failpoint = '-', hitArg = '1', seedArg = '1', sessionsArg = '1'] =
  process.argv.slice(2);
const targetHit = Number(hitArg);
let hits = 0;

function hook(name: string): void {
  if (name !== failpoint || ++hits !== targetHit) return;
  say(`FAILPOINT ${name}`);
  // Block the whole process (not just this task) until the parent's SIGKILL arrives.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

async function openBackend(): Promise<SessionStore> {
  if (backend === 'jsonl') {
    const { openJsonlStore } = await import('../../../src/store/jsonl/index.js');
    return mutate(await openJsonlStore(location ?? '', { failpoint: hook }));
  }
  const { openSqliteStore } = await import('../../../src/store/sqlite/index.js');
  return mutate(await openSqliteStore(location ?? '', { failpoint: hook }));
}

/**
 * PALIMPSEST_MUTANT=ack-before-write: a deliberately broken store whose appends resolve before
 * they are written (the write happens a little later), to show the harness catches it.
 */
function mutate(store: SessionStore): SessionStore {
  if (process.env.PALIMPSEST_MUTANT !== 'ack-before-write') return store;
  let queue = Promise.resolve();
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') {
        return (id: string, events: readonly SessionEvent[], options: { expectedSeq: number }) => {
          queue = queue
            .then(() => new Promise((resolve) => setTimeout(resolve, 30)))
            .then(() => target.append(id, events, options));
          return Promise.resolve();
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/**
 * Writes one line to stdout synchronously (the parent must see an ACK before the child can be
 * killed after it), retrying while the pipe is full.
 */
function say(line: string): void {
  const bytes = Buffer.from(`${line}\n`);
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
    }
  }
}

async function record(store: SessionStore, n: number): Promise<void> {
  const id = crashSessionId(n);
  const session = await openSession(store, id, { durability: { mode: 'group', windowMs: 2 } });
  let acked = session.seq;
  say(`OPEN ${id} ${session.seq} ${session.openReport.repairedEvents}`);
  /** Flushes, then acknowledges every event the flush covered. */
  const durable = async (live: LiveSession): Promise<void> => {
    await live.flush();
    const events: readonly SessionEvent[] = live.events;
    for (; acked < live.seq; acked++) say(`ACK ${id} ${JSON.stringify(events[acked])}`);
  };
  await recordTurns(session, random(Number(seedArg) * 7919 + n), () => durable(session));
}

async function main(): Promise<void> {
  const store = await openBackend();
  const sessions = Math.max(1, Number(sessionsArg));
  // Opened one after another (so a lock failpoint meets a known session), then written at once.
  await Promise.all(Array.from({ length: sessions }, (_, n) => record(store, n)));
}

main().catch((error: unknown) => {
  writeSync(
    2,
    `writer failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(3);
});
