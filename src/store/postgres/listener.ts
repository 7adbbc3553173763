/**
 * A LISTEN connection for one watch: a client held out of the pool for as long as the watch
 * runs, woken by the notifications of appends to its session. A connection that drops (the
 * server restarting, an administrator terminating the backend) is replaced at the next wait;
 * what was committed meanwhile is found by the catch-up read that follows every wait, so a lost
 * notification delays an event by at most one poll interval and never loses it.
 */
import type { PgNotification, PgPool, PgPoolClient } from './driver.js';

/** How long a wait lasts without a notification (a fallback poll). */
const POLL_MS = 1000;

export class Listener {
  readonly #pool: PgPool;
  readonly #channel: string;
  readonly #payloadPrefix: string;
  #client: PgPoolClient | undefined;
  #pending = false;
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(pool: PgPool, channel: string, payloadPrefix: string) {
    this.#pool = pool;
    this.#channel = channel;
    this.#payloadPrefix = payloadPrefix;
  }

  /** Resolves on a notification for the session, after the poll interval, or on abort. */
  async wait(signal: AbortSignal): Promise<void> {
    await this.#connect().catch(() => {
      // Unreachable for now: the poll interval paces the retries.
    });
    if (this.#pending || signal.aborted) {
      this.#pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, POLL_MS);
      signal.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
    this.#pending = false;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    try {
      await client.query(`UNLISTEN "${this.#channel}"`);
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
    }
  }

  async #connect(): Promise<void> {
    if (this.#client !== undefined || this.#closed) return;
    const client = await this.#pool.connect();
    const listening = client as PgPoolClient & {
      on(event: 'notification', listener: (message: PgNotification) => void): unknown;
    };
    const drop = (error?: Error): void => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.release(error ?? true);
      // Whatever was missed is read by the catch-up read after this wake-up.
      this.#notified();
    };
    client.on('error', drop);
    listening.on('notification', (message) => {
      if (message.channel === this.#channel && message.payload?.startsWith(this.#payloadPrefix)) {
        this.#notified();
      }
    });
    try {
      await client.query(`LISTEN "${this.#channel}"`);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    this.#client = client;
    // Appends that committed before LISTEN took effect are found by the read after this wait.
    this.#pending = true;
  }

  #notified(): void {
    this.#pending = true;
    this.#wake?.();
  }
}
