/**
 * The recorder: makes a live session's appends durable. Appends are acknowledged in memory at
 * once (the session is synchronous); the recorder groups what arrives within a batching window
 * into one store append (one write and one fsync), so a streamed turn costs a few syncs instead
 * of one per chunk.
 */

import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { ClosedError, WriterFailedError } from '../contract/errors.js';
import type { SessionStore } from '../contract/session-store.js';
import { isRetryable } from '../contract/store-rules.js';

/** How appends become durable. */
export type Durability =
  /**
   * Group commit: the first event admitted after a quiet period starts a window of `windowMs`;
   * everything admitted until it ends (and while a write is in flight) goes in one batch.
   */
  | { readonly mode: 'group'; readonly windowMs?: number }
  /**
   * Each event is written as soon as the previous write finishes, with no waiting window; pair
   * it with `flush()` (or `appendDurable`) to have every acknowledgement durable.
   */
  | { readonly mode: 'each' };

/** The default batching window: long enough to group a burst of stream chunks. */
export const DEFAULT_WINDOW_MS = 50;

interface Waiter {
  readonly target: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Counters of a recorder, for monitoring and tests. */
export interface RecorderStats {
  /** Events made durable. */
  readonly events: number;
  /** Store appends (batches) written. */
  readonly batches: number;
  /** The next seq not yet durable. */
  readonly durableSeq: number;
}

/**
 * Writes the events of one session to a store, in order, one batch at a time. Not used directly:
 * `openSession` wires one to each live session.
 */
export class Recorder {
  private queue: SessionEvent[] = [];
  private durable: number;
  private writing = false;
  private inFlight = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private waiters: Waiter[] = [];
  private failure: WriterFailedError | undefined;
  private closed = false;
  private batches = 0;
  private written = 0;
  private readonly windowMs: number;
  private pendingHeader: SessionHeader | undefined;

  /**
   * @param pendingHeader the header of a session the store does not hold yet: it is created
   *   with the first batch, so a session nothing was ever appended to leaves nothing behind.
   */
  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    nextSeq: number,
    durability: Durability = { mode: 'group' },
    pendingHeader?: SessionHeader,
  ) {
    this.durable = nextSeq;
    this.pendingHeader = pendingHeader;
    this.windowMs = durability.mode === 'each' ? 0 : (durability.windowMs ?? DEFAULT_WINDOW_MS);
    if (!Number.isFinite(this.windowMs) || this.windowMs < 0) {
      throw new InvalidArgumentError(
        `durability windowMs must be a non-negative number, found ${this.windowMs}`,
      );
    }
  }

  /** The failure that stopped this writer, if any. */
  get failed(): WriterFailedError | undefined {
    return this.failure;
  }

  get stats(): RecorderStats {
    return { events: this.written, batches: this.batches, durableSeq: this.durable };
  }

  /** Throws when no more events may be admitted (the writer failed or was closed). */
  assertWritable(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.closed) throw new ClosedError(`session '${this.sessionId}'`);
  }

  /** Queues a committed event for the next batch. */
  enqueue(event: SessionEvent): void {
    this.queue.push(event);
    if (this.writing || this.failure !== undefined) return;
    if (this.windowMs === 0) {
      this.startWrite();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.startWrite();
      }, this.windowMs);
    }
  }

  /**
   * Resolves once every event enqueued before the call is durable; rejects with a
   * `WriterFailedError` if the writer failed, or with the store's retryable error (such as
   * `StoreBusyError`) if the write it waited on met contention past the store's bound: then the
   * events stay queued, and the next flush writes them. Starts a write at once instead of
   * waiting for the window.
   */
  flush(): Promise<void> {
    const target = this.durable + this.queue.length + this.inFlight;
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (target <= this.durable) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ target, resolve, reject });
      if (!this.writing) this.startWrite();
    });
  }

  /** Flushes, then refuses further events. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.closed = true;
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private startWrite(): void {
    if (this.writing || this.queue.length === 0 || this.failure !== undefined) return;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.queue;
    this.queue = [];
    this.writing = true;
    this.inFlight = batch.length;
    this.writeBatch(batch).then(
      () => {
        this.writing = false;
        this.inFlight = 0;
        this.durable += batch.length;
        this.written += batch.length;
        this.batches++;
        this.settleWaiters();
        this.continueAfterWrite();
      },
      (error: unknown) => {
        this.writing = false;
        this.inFlight = 0;
        if (isRetryable(error)) {
          // Contention (other writers held the store past its bound): nothing was written, so
          // the batch goes back at the head of the queue for the next write, and the writer
          // stays usable. The flushes waiting on it learn of the contention; a later flush,
          // append or close writes it.
          this.queue = [...batch, ...this.queue];
          for (const waiter of this.waiters) waiter.reject(error);
          this.waiters = [];
          return;
        }
        // No retry: after a failed fsync the kernel may have dropped the pages, and a retry
        // that "succeeds" would acknowledge data that is not on disk.
        this.failure = new WriterFailedError(this.sessionId, { cause: error });
        this.queue = [];
        for (const waiter of this.waiters) waiter.reject(this.failure);
        this.waiters = [];
      },
    );
  }

  private writeBatch(batch: readonly SessionEvent[]): Promise<void> {
    const append = () => this.store.append(this.sessionId, batch, { expectedSeq: this.durable });
    const header = this.pendingHeader;
    if (header === undefined) return append();
    return this.store.create(header).then(() => {
      // Created: a retry after contention on the append must not create it again.
      this.pendingHeader = undefined;
      return append();
    });
  }

  private continueAfterWrite(): void {
    // Events that arrived while the write was in flight already waited at least one write;
    // they go out together now (group commit), without opening another window.
    if (this.queue.length > 0) this.startWrite();
  }

  private settleWaiters(): void {
    const pending: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.target <= this.durable) waiter.resolve();
      else pending.push(waiter);
    }
    this.waiters = pending;
  }
}
