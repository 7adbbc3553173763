/**
 * The child writer of the crash tests. It opens one session on a real store (repairing whatever
 * the previous child left), then records agent turns forever, printing `ACK <event JSON>` for
 * every event once a flush covering it has resolved. With a failpoint armed, the store calls
 * the hook at that point of its write path; on the chosen hit the child prints
 * `FAILPOINT <name>` and blocks until the parent kills it with SIGKILL.
 *
 *   node --import tsx test/crash/writer.ts <jsonl|sqlite> <location> <failpoint|-> <hit> <seed>
 */
import { writeSync } from 'node:fs';
import type { SessionEvent } from '../../src/core/index.js';
import { type LiveSession, openSession, type SessionStore } from '../../src/store/index.js';
import { random, recordTurns } from './workload.js';

const [backend, location, failpoint = '-', hitArg = '1', seedArg = '1'] = process.argv.slice(2);
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
    const { openJsonlStore } = await import('../../src/store/jsonl/index.js');
    return mutate(await openJsonlStore(location ?? '', { failpoint: hook }));
  }
  const { openSqliteStore } = await import('../../src/store/sqlite/index.js');
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

let acked = 0;

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

async function main(): Promise<void> {
  const store = await openBackend();
  const session = await openSession(store, 'crash', { durability: { mode: 'group', windowMs: 2 } });
  acked = session.seq;
  say(`OPEN ${session.seq} ${session.openReport.repairedEvents}`);
  await recordTurns(session, random(Number(seedArg)), () => durable(session));
}

/** Flushes, then acknowledges every event the flush covered. */
async function durable(session: LiveSession): Promise<void> {
  await session.flush();
  const events: readonly SessionEvent[] = session.events;
  for (; acked < session.seq; acked++) say(`ACK ${JSON.stringify(events[acked])}`);
}

main().catch((error: unknown) => {
  writeSync(
    2,
    `writer failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(3);
});
