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
 * // A store whose locks go stale when the test says so:
 * const clock = new ManualLockClock(); // from your test helpers
 * const store = await openStore('jsonl:./sessions', { lockClock: clock });
 * ```
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
