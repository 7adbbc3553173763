/**
 * Live sessions bound to a store: open (load, repair, lock), record, flush, close.
 */

import type { ElidedLog } from '../../core/elided-log.js';
import { validateHeader } from '../../core/header.js';
import {
  type Durable,
  InvalidArgumentError,
  type JsonLimits,
  planRepair,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionEvent,
  type SessionHeader,
  type SessionOptions,
} from '../../core/index.js';
import { NotFoundError } from '../contract/errors.js';
import { LoadedSession } from '../contract/loaded-session.js';
import type { LoadOptions, SessionLock, SessionStore } from '../contract/session-store.js';
import { type CheckpointPolicy, keepCheckpoints } from './checkpoints.js';
import { requireReadable } from './readable.js';
import { type Durability, Recorder, type RecorderStats } from './recorder.js';

/** Options of {@link openSession}. */
export interface OpenSessionOptions {
  /** How appends become durable; group commit with a 50 ms window by default. */
  readonly durability?: Durability;
  /**
   * Whether an id the store does not hold creates the session (default `true`). The store
   * creates it with the first batch of events, so a session closed (or a process that died)
   * before anything was appended leaves nothing behind: no empty session after a refused first
   * call. With `false` a new id is a `NotFoundError` and nothing is written: for tools that work
   * on existing sessions only.
   */
  readonly create?: boolean;
  /** Header fields for a session that does not exist yet (`metadata`, lineage). */
  readonly header?: Partial<Pick<SessionHeader, 'metadata' | 'parentSession' | 'seedLength'>>;
  /** The clock of the live session (event times); `Date.now` by default. */
  readonly clock?: () => number;
  /** Data limits of the live session. */
  readonly limits?: Partial<JsonLimits>;
  /** Receives subscriber errors (see `SessionOptions.onListenerError`). */
  readonly onListenerError?: SessionOptions['onListenerError'];
  /**
   * `'full'` (default) loads every event. `'elide'` loads finished `assistant/chunk` events as
   * stubs without their bodies (see `LoadOptions.elideFinishedChunks`): a faster resume and a
   * smaller session, for agents that do not read old stream parts. The session appends and
   * records as usual (stubs are never written back), but cannot be forked over a stub.
   */
  readonly chunks?: ChunkLoading;
  /**
   * Checkpoints of the session's hash chain, appended by the session itself (after each turn,
   * or every n events, signed when given a signer): see `docs/governance.md`. The events since
   * the last checkpoint must be loaded in full (with `chunks: 'elide'`, a session whose last
   * turn ended without one is refused with `InvalidArgumentError`).
   */
  readonly checkpoints?: CheckpointPolicy;
}

/** How a session's `assistant/chunk` events are loaded: all in full, or finished ones elided. */
export type ChunkLoading = 'full' | 'elide';

/** Options of {@link inspectSession}. */
export interface InspectSessionOptions {
  /** As {@link OpenSessionOptions.chunks}. */
  readonly chunks?: ChunkLoading;
  /**
   * Whether a turn a crash left open is closed in memory (default `true`), as a writer would
   * close it on open. `false` returns exactly what the store holds, for tools that show the
   * stored log and must not present closers as if they were stored.
   */
  readonly repair?: boolean;
}

/** What {@link openSession} did to bring the stored session into a writable state. */
export interface OpenReport {
  /** The session did not exist: it is created in the store with its first appended events. */
  readonly created: boolean;
  /** Bytes of a torn final batch that were dropped (0 for a store that has no torn tails). */
  readonly tornBytesDropped: number;
  /** Closer events appended to end a turn a crash left open. */
  readonly repairedEvents: number;
}

/**
 * A session whose appends are recorded to a store. Appends stay synchronous and are acknowledged
 * in memory at once; `flush()` is the durability barrier (`append` then `await flush()` gives a
 * durable acknowledgement of that event; with `durability: {mode: 'each'}` no window delays it).
 * After a failed write every append rejects with `WriterFailedError` until the session is
 * reopened.
 */
export class LiveSession extends Session implements Durable {
  /** What opening did (creation, torn tail, repair). */
  readonly openReport: OpenReport;
  readonly store: SessionStore;
  private readonly recorder: Recorder;
  private readonly writerLock: SessionLock;
  private closing: Promise<void> | undefined;

  /** @internal use {@link openSession} */
  constructor(
    options: SessionOptions,
    wiring: { store: SessionStore; recorder: Recorder; lock: SessionLock; report: OpenReport },
  ) {
    super({ ...options, beforeAppend: () => wiring.recorder.assertWritable() });
    this.store = wiring.store;
    this.recorder = wiring.recorder;
    this.writerLock = wiring.lock;
    this.openReport = wiring.report;
    this.subscribe((event) => this.recorder.enqueue(event));
  }

  /** Resolves once every event appended before the call is durable. */
  flush(): Promise<void> {
    return this.recorder.flush();
  }

  /** Counters of the recorder. */
  get recorderStats(): RecorderStats {
    return this.recorder.stats;
  }

  /**
   * Replaces the stored log with `events` under this writer's lock, in one atomic write, then
   * closes the session (its events in memory are the old log's). The one write of a redaction:
   * use `redact`, which builds `events` from this session's.
   * @internal
   */
  async replaceStoredLog(events: readonly SessionEvent[]): Promise<void> {
    try {
      await this.flush();
      await this.store.replaceLog(
        this.header.id,
        events,
        { expectedLength: this.seq },
        this.writerLock,
      );
    } finally {
      await this.close();
    }
  }

  /** Flushes, stops recording and releases the writer lock. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.recorder.close();
      } finally {
        await this.writerLock.release();
      }
    })();
    return this.closing;
  }
}

/**
 * Opens a session for writing: takes the single-writer lock, loads the session (creating it if
 * the id is new), drops a torn final batch, durably appends the closers of a turn a crash left
 * open (deterministic: they take the last event's time), and records every later append.
 *
 * @throws NotFoundError when the id is new and `create` is `false`; LockedError when another
 *   live writer holds the session; CorruptLogError,
 *   FormatVersionError or SessionValidationError when the stored log cannot be trusted.
 *
 * @example
 * ```ts
 * import { mkdtempSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { openSession, openStore } from 'palimpsest/store';
 *
 * const store = await openStore(`jsonl:${mkdtempSync(join(tmpdir(), 'palimpsest-'))}`);
 * const live = await openSession(store, 'chat-1'); // created: the id was new
 * live.append('turn/start', { turn: 1 }); // acknowledged in memory at once
 * await live.flush(); // the durability barrier: everything appended so far is on disk
 * await live.close();
 *
 * // A later process (or this one after a crash) opens it again: loaded, repaired if a turn
 * // was left open, and locked for this writer alone.
 * const again = await openSession(store, 'chat-1');
 * console.log(again.openReport.created); // false
 * console.log(again.openReport.repairedEvents); // 1: a turn/end closes the turn left open
 * await again.close();
 * await store.close();
 * ```
 */
export async function openSession(
  store: SessionStore,
  id: string,
  options: OpenSessionOptions = {},
): Promise<LiveSession> {
  const lock = await store.lock(id);
  try {
    const clock = options.clock ?? Date.now;
    let loaded: LoadedSession;
    let pendingHeader: SessionHeader | undefined;
    try {
      loaded = await store.load(id, loadOptions(options.chunks));
    } catch (error) {
      if (!NotFoundError.isInstance(error) || options.create === false) throw error;
      // Checked now, so a header the store would refuse fails the open, not the first write.
      pendingHeader = validateHeader({
        version: SESSION_FORMAT_VERSION,
        id,
        createdAt: clock(),
        ...options.header,
      });
      loaded = LoadedSession.fromEvents(pendingHeader, []);
    }
    requireReadable(loaded, store.location);
    const created = pendingHeader !== undefined;
    const tornBytesDropped = loaded.tornTail?.bytes?.size ?? 0;
    const loadedLength = loaded.log.length;
    const closers = planRepair(loaded.log);
    const seed = repairedSeed(loaded, closers);
    // The recorder starts after the closers, which are written below, once the session exists.
    const recorder = new Recorder(store, id, seed.length, options.durability, pendingHeader);
    // Building the session validates the repaired log before anything is written: a log the
    // session would refuse stays exactly as it was on disk.
    const session = new LiveSession(
      {
        header: loaded.header,
        seed,
        // A store's events are freshly parsed and ours alone (the store contract).
        seedMode: 'parsed',
        clock,
        ...(options.limits === undefined ? {} : { limits: options.limits }),
        ...(options.onListenerError === undefined
          ? {}
          : { onListenerError: options.onListenerError }),
      },
      {
        store,
        recorder,
        lock,
        report: { created, tornBytesDropped, repairedEvents: closers.length },
      },
    );
    if (options.checkpoints !== undefined) {
      keepCheckpoints(session, options.checkpoints, (error) =>
        (options.onListenerError ?? console.error)(
          error,
          session.events[session.seq - 1] as SessionEvent,
        ),
      );
    }
    if (loaded.tornTail !== undefined) await store.discardTornTail(id, loaded.tornTail, lock);
    if (closers.length > 0) {
      await store.append(id, closers, { expectedSeq: loadedLength });
    }
    return session;
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * Loads a session read-only: no lock, nothing written. A crashed session is repaired in memory
 * only (the closers are in the returned session, not in the store).
 */
export async function inspectSession(
  store: SessionStore,
  id: string,
  options: InspectSessionOptions = {},
): Promise<Session> {
  const loaded = await store.load(id, loadOptions(options.chunks));
  requireReadable(loaded, store.location);
  const closers = options.repair === false ? [] : planRepair(loaded.log);
  return Session.create({
    header: loaded.header,
    seed: repairedSeed(loaded, closers),
    seedMode: 'parsed',
  });
}

/**
 * The loaded log and the closers after it, as a seed: the compact log itself when there is
 * nothing to close (no stub is built per elided chunk), else a copy of it with the closers
 * pushed (the loaded log is sealed: its `events` are read from it).
 */
function repairedSeed(loaded: LoadedSession, closers: readonly SessionEvent[]): ElidedLog {
  return closers.length === 0 ? loaded.log : loaded.log.concat(closers);
}

function loadOptions(chunks: ChunkLoading | undefined): LoadOptions {
  if (chunks === undefined || chunks === 'full') return {};
  if (chunks === 'elide') return { elideFinishedChunks: true };
  throw new InvalidArgumentError(`chunks must be 'full' or 'elide', found ${String(chunks)}`);
}
