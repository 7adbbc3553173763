/**
 * A LockClock a test moves by hand: `advance(ms)` moves time forward and runs every heartbeat
 * that falls due on the way, in time order, and resolves the sleeps that end by then. Nothing
 * happens between two calls of `advance`, so a lock goes stale or a lease lapses exactly when
 * the test says.
 */
import type { LockClock } from '../../src/store/index.js';

interface Ticker {
  readonly ms: number;
  next: number;
  readonly tick: () => void;
}

interface Sleeper {
  readonly at: number;
  readonly wake: () => void;
}

export class ManualLockClock implements LockClock {
  #now: number;
  readonly #tickers = new Set<Ticker>();
  #sleepers: Sleeper[] = [];

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  every(ms: number, tick: () => void): () => void {
    const ticker: Ticker = { ms, next: this.#now + ms, tick };
    this.#tickers.add(ticker);
    return () => this.#tickers.delete(ticker);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((wake) => this.#sleepers.push({ at: this.#now + ms, wake }));
  }

  /** How many sleeps are pending: the code under test is waiting on this clock. */
  get sleeping(): number {
    return this.#sleepers.length;
  }

  /** How many heartbeats are scheduled (a released lock stops its own). */
  get heartbeats(): number {
    return this.#tickers.size;
  }

  /**
   * Moves time forward by `ms`, firing each heartbeat and waking each sleeper when its time
   * comes, and lets the promises they start settle before time moves on.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#nextDue(end);
      if (due === undefined) break;
      this.#now = due;
      for (const ticker of [...this.#tickers]) {
        if (ticker.next === due) {
          ticker.next += ticker.ms;
          ticker.tick();
        }
      }
      const woken = this.#sleepers.filter((s) => s.at === due);
      this.#sleepers = this.#sleepers.filter((s) => s.at !== due);
      for (const sleeper of woken) sleeper.wake();
      await settle();
    }
    this.#now = end;
    await settle();
  }

  #nextDue(end: number): number | undefined {
    let due: number | undefined;
    for (const t of this.#tickers)
      if (t.next <= end && (due === undefined || t.next < due)) due = t.next;
    for (const s of this.#sleepers)
      if (s.at <= end && (due === undefined || s.at < due)) due = s.at;
    return due;
  }
}

/** Lets pending promise callbacks and I/O completions run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
