/**
 * Following a session's log as it grows: the rule every backend's `watch` shares. A backend
 * brings a {@link LogSource} (how to read committed events from a seq on, and how to wait until
 * there may be more); {@link follow} turns it into the ordered, exactly-once stream of events
 * `watch` promises. A source may be woken for nothing (a notification for another session, a
 * poll) or miss a wake-up (a dropped connection): every wake-up ends in a read from the next seq,
 * so neither loses or repeats an event.
 */

import type { SessionEvent } from '../../core/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { CorruptLogError } from './errors.js';
import type { WatchOptions } from './session-store.js';

/** What a backend provides to follow one session. */
export interface LogSource {
  /** The committed events with seq `from` and on, in order; none when there are none yet. */
  read(from: number): Promise<readonly SessionEvent[]>;
  /** Resolves once the log may have grown (or after a poll interval), or once `signal` aborts. */
  changed(signal: AbortSignal): Promise<void>;
  /** Releases what the source holds (a file handle, a listening connection). */
  close(): Promise<void>;
}

/** Checks `watch` options before anything is opened; `InvalidArgumentError` for a bad `fromSeq`. */
export function checkWatchOptions(options: WatchOptions): number {
  const from = options.fromSeq ?? 0;
  if (!Number.isSafeInteger(from) || from < 0) {
    throw new InvalidArgumentError(
      `watch fromSeq must be a non-negative integer, found ${String(from)}`,
    );
  }
  return from;
}

/**
 * The committed events of a session from `options.fromSeq` on, in order, each exactly once:
 * those stored already, then each batch as it commits. Ends when `options.signal` aborts (or the
 * consumer stops iterating); rejects with the error a read meets (`NotFoundError` once the
 * session is deleted, `CorruptLogError` for damage).
 */
export async function* follow(
  open: () => Promise<LogSource>,
  location: string,
  options: WatchOptions,
): AsyncGenerator<SessionEvent, void, undefined> {
  let next = checkWatchOptions(options);
  const stop = new AbortController();
  const signal = options.signal;
  const onAbort = (): void => stop.abort();
  if (signal?.aborted === true) return;
  signal?.addEventListener('abort', onAbort, { once: true });
  const source = await open();
  try {
    while (!stop.signal.aborted) {
      const events = await source.read(next);
      for (const event of events) {
        if (event.seq !== next) {
          throw new CorruptLogError({
            file: location,
            row: next,
            reason: `a watched log went from seq ${next - 1} to ${event.seq}`,
          });
        }
        next++;
        yield event;
        if (stop.signal.aborted) return;
      }
      if (events.length === 0) await source.changed(stop.signal);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await source.close();
  }
}

/**
 * Wake-ups for in-process listeners: `notify` resolves every pending `wait`. A wait also ends
 * after `pollMs` (a change this process could not see: another process's write) or on abort.
 */
export class Wakeups {
  #waiters = new Set<() => void>();
  #count = 0;

  /**
   * How many times `notify` was called: a listener compares it with the count it saw before its
   * last read, since a notification that came while it was reading had no waiter to wake.
   */
  get count(): number {
    return this.#count;
  }

  notify(): void {
    this.#count++;
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolves `true` when notified, `false` after `pollMs` or on abort. */
  wait(signal: AbortSignal, pollMs: number): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (notified: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', timedOut);
        this.#waiters.delete(notify);
        resolve(notified);
      };
      const notify = (): void => finish(true);
      const timedOut = (): void => finish(false);
      const timer = setTimeout(timedOut, pollMs);
      signal.addEventListener('abort', timedOut, { once: true });
      this.#waiters.add(notify);
    });
  }
}
