/**
 * The time source of locks and leases. Every backend reads the time of a refresh, judges a
 * stale lock and schedules its heartbeat through one {@link LockClock}, so a test (or an
 * embedder with its own scheduler) can move time forward instead of waiting for it: a lock
 * going stale, a lease lapsing and a heartbeat firing are then steps of the test, not races
 * against the machine's load.
 */

/**
 * Reads the time and schedules the heartbeat of locks and leases.
 *
 * @example
 * ```ts
 * import { mkdtemp } from 'node:fs/promises';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { openJsonlStore } from 'palimpsest/jsonl';
 * import { type LockClock, systemLockClock } from 'palimpsest/store';
 *
 * // The machine's time, with every heartbeat a lock schedules reported to the embedder.
 * const clock: LockClock = {
 *   ...systemLockClock,
 *   every(ms, tick) {
 *     console.log(`lock heartbeat every ${ms} ms`);
 *     return systemLockClock.every(ms, tick);
 *   },
 * };
 * const store = await openJsonlStore(await mkdtemp(join(tmpdir(), 'locks-')), { lockClock: clock });
 * await store.create({ version: 1, id: 'notes', createdAt: 0 });
 * const lock = await store.lock('notes'); // logs the heartbeat's period
 * await lock.release();
 * ```
 *
 * A test passes a clock it moves by hand, so a lock goes stale when the test says so.
 */
export interface LockClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `tick` every `ms` until the returned function is called. A pending tick never keeps
   * the process alive: a held lock must not stop a program from exiting.
   */
  every(ms: number, tick: () => void): () => void;
  /** Resolves after `ms` (a writer waiting for a lock, a retry pausing between attempts). */
  sleep(ms: number): Promise<void>;
}

/** The machine's clock and timers: the default {@link LockClock}. */
export const systemLockClock: LockClock = {
  now: () => Date.now(),
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
