/**
 * An in-memory store: the reference implementation of the contract, for tests and for
 * applications that do not need durability. Events are kept serialized, as a real store would
 * keep them, so every load returns fresh objects.
 */

import { CitedSeqs } from '../../core/elided.js';
import { ElidedLog } from '../../core/elided-log.js';
import { validateHeader } from '../../core/header.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';

import {
  AlreadyExistsError,
  ConflictError,
  InvalidStoreError,
  LockedError,
  type LockOwner,
  NotFoundError,
} from '../contract/errors.js';
import { follow, Wakeups } from '../contract/follow.js';
import { LoadedSession } from '../contract/loaded-session.js';
import type {
  AppendOptions,
  ListOptions,
  LoadOptions,
  ReplaceLogOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  TornTail,
  UnlockOptions,
  UnlockReport,
  WatchOptions,
} from '../contract/session-store.js';
import {
  assertOpen,
  checkBatch,
  checkReplaceLog,
  checkSessionId,
  checkTornTail,
  pageOf,
  STATS_EVENT_TYPES,
  type StatsEvent,
  statsOf,
} from '../contract/store-rules.js';

interface StoredEntry {
  readonly header: string;
  readonly lines: string[];
  /**
   * Per line, for an `assistant/chunk` a load may elide, its time (known from the append; a file
   * store reads it from the line's first bytes). The length of its data is measured by a load
   * that elides it, which reads every line anyway: measured on append, it cost as much as
   * serializing the chunk.
   */
  readonly chunkTimes: (number | undefined)[];
  updatedAt: number;
}

let tokens = 0;

/** Sessions held in this process's memory; nothing survives the process. */
export class MemoryStore implements SessionStore {
  readonly location = 'memory:';
  readonly #sessions: Map<string, StoredEntry>;
  readonly #locks: Map<string, LockOwner>;
  /** Wakes the watchers of every store sharing these sessions on each append. */
  readonly #appended: Wakeups;
  #closed = false;

  /**
   * @param options.sharedWith another memory store whose sessions (and locks) this one shares,
   *   as two processes share a directory: tests use it to stand for a restart or a second writer.
   */
  constructor(options: { readonly sharedWith?: MemoryStore } = {}) {
    const shared = options.sharedWith;
    this.#sessions = shared === undefined ? new Map() : shared.#sessions;
    this.#locks = shared === undefined ? new Map() : shared.#locks;
    this.#appended = shared === undefined ? new Wakeups() : shared.#appended;
  }

  async create(header: SessionHeader): Promise<void> {
    this.#assertOpen();
    checkSessionId(header.id);
    validateHeader(header);
    if (this.#sessions.has(header.id)) throw new AlreadyExistsError(header.id, this.location);
    this.#sessions.set(header.id, {
      header: JSON.stringify(header),
      lines: [],
      chunkTimes: [],
      updatedAt: Date.now(),
    });
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    this.#assertOpen();
    const entry = this.#entry(id);
    checkBatch(id, events, options);
    if (options.expectedSeq !== entry.lines.length) {
      throw new ConflictError(id, options.expectedSeq, entry.lines.length);
    }
    this.#push(entry, events);
  }

  #push(entry: StoredEntry, events: readonly SessionEvent[]): void {
    for (const event of events) {
      entry.lines.push(JSON.stringify(event));
      // Only the form an admitted chunk serializes to is elided, as in a JSONL log (a chunk
      // citing sources would lose them).
      const elidable = event.type === 'assistant/chunk' && event.sourceEventSeqs === undefined;
      entry.chunkTimes.push(elidable ? event.time : undefined);
    }
    entry.updatedAt = Date.now();
    this.#appended.notify();
  }

  watch(id: string, options: WatchOptions = {}): AsyncIterable<SessionEvent> {
    return follow(
      async () => {
        this.#assertOpen();
        this.#entry(id);
        return {
          read: async (from) =>
            this.#entry(id)
              .lines.slice(from)
              .map((line) => JSON.parse(line) as SessionEvent),
          changed: async (signal) => {
            await this.#appended.wait(signal, 1000);
          },
          close: async () => {},
        };
      },
      this.location,
      options,
    );
  }

  async load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    this.#assertOpen();
    const entry = this.#entry(id);
    const header = JSON.parse(entry.header) as SessionHeader;
    if (options.elideFinishedChunks !== true) {
      return LoadedSession.fromEvents(
        header,
        entry.lines.map((line) => JSON.parse(line) as SessionEvent),
      );
    }
    // As a file store does: chunk bodies stay unparsed, the other events are parsed, and the
    // chunks that no message cites are parsed at the end.
    const lines = entry.lines;
    const times = entry.chunkTimes;
    const events: (SessionEvent | undefined)[] = lines.map((line, seq) =>
      times[seq] === undefined ? (JSON.parse(line) as SessionEvent) : undefined,
    );
    // The chunks left out cite nothing (a chunk with sources is never left out).
    const cited = new CitedSeqs();
    for (const event of events) if (event !== undefined) cited.cite(event);
    const log = new ElidedLog(lines.length);
    events.forEach((event, seq) => {
      const time = times[seq] as number;
      const line = lines[seq] as string;
      const bytes = event === undefined && cited.has(seq) ? dataBytes(seq, time, line) : undefined;
      if (bytes !== undefined) log.pushElided(time, bytes);
      else log.push(event ?? (JSON.parse(line) as SessionEvent));
    });
    return LoadedSession.fromLog(header, log);
  }

  /** Parses every event: a memory store holds them as text and is small by nature. */
  async summarize(id: string): Promise<SessionStats> {
    this.#assertOpen();
    const entry = this.#entry(id);
    const picked: StatsEvent[] = [];
    let lastTime: number | undefined;
    for (const line of entry.lines) {
      const event = JSON.parse(line) as SessionEvent;
      lastTime = event.time;
      if (STATS_EVENT_TYPES.has(event.type)) picked.push(event);
    }
    const header = JSON.parse(entry.header) as SessionHeader;
    return statsOf(header, entry.lines.length, lastTime, picked);
  }

  async list(options: ListOptions = {}): Promise<SessionPage> {
    this.#assertOpen();
    const summaries = [...this.#sessions.values()].map((entry) => ({
      header: JSON.parse(entry.header) as SessionHeader,
      updatedAt: entry.updatedAt,
      eventCount: entry.lines.length,
    }));
    return pageOf(summaries, options);
  }

  async delete(id: string): Promise<void> {
    this.#assertOpen();
    this.#entry(id);
    const owner = this.#locks.get(id);
    if (owner !== undefined) throw new LockedError(id, owner);
    this.#sessions.delete(id);
  }

  async lock(id: string): Promise<SessionLock> {
    this.#assertOpen();
    checkSessionId(id);
    const held = this.#locks.get(id);
    if (held !== undefined) throw new LockedError(id, held);
    const owner: LockOwner = {
      pid: 0,
      host: 'memory',
      since: Date.now(),
      token: `memory-${++tokens}`,
    };
    this.#locks.set(id, owner);
    return {
      sessionId: id,
      owner,
      release: async () => {
        if (this.#locks.get(id)?.token === owner.token) this.#locks.delete(id);
      },
    };
  }

  /**
   * Removes a session's lock with `force`; without it, a held lock is a `LockedError`: its
   * holder is this very process, alive by definition.
   */
  async unlock(id: string, options: UnlockOptions = {}): Promise<UnlockReport> {
    this.#assertOpen();
    checkSessionId(id);
    const owner = this.#locks.get(id);
    if (owner === undefined) return { removed: false };
    if (options.force !== true) throw new LockedError(id, owner);
    this.#locks.delete(id);
    return { removed: true, owner, refreshedAt: owner.since, wasLive: true };
  }

  /** Checks the arguments and the lock, and drops nothing: an append to memory is atomic. */
  async discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    this.#assertOpen();
    checkSessionId(id);
    checkTornTail(id, tail, lock);
    this.#checkHolder(id, lock);
  }

  /** Throws unless `lock` still holds the session. */
  #checkHolder(id: string, lock: SessionLock): void {
    const holder = this.#locks.get(id);
    if (holder?.token === lock.owner.token) return;
    if (holder !== undefined) throw new LockedError(id, holder);
    throw new InvalidStoreError(
      'LOCK_NOT_HELD',
      `the lock of session '${id}' is no longer held; lock it again`,
    );
  }

  async replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void> {
    this.#assertOpen();
    checkSessionId(id);
    checkReplaceLog(id, events, options, lock);
    this.#checkHolder(id, lock);
    const entry = this.#entry(id);
    if (options.expectedLength !== entry.lines.length) {
      throw new ConflictError(id, options.expectedLength, entry.lines.length);
    }
    entry.lines.length = 0;
    entry.chunkTimes.length = 0;
    this.#push(entry, events);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #entry(id: string): StoredEntry {
    checkSessionId(id);
    const entry = this.#sessions.get(id);
    if (entry === undefined) throw new NotFoundError(id, this.location);
    return entry;
  }

  #assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }
}

/**
 * The UTF-8 length of a chunk line's data (its stub's size), or `undefined` when the line is not
 * in the form an admitted chunk serializes to (it is then loaded whole).
 */
function dataBytes(seq: number, time: number, line: string): number | undefined {
  const prefix = `{"seq":${seq},"time":${time},"type":"assistant/chunk","data":{`;
  if (!line.startsWith(prefix) || !line.endsWith('}}')) return undefined;
  // The data runs from its opening brace to the envelope's closing brace (the prefix is ASCII).
  return utf8Length(line) - (prefix.length - 1) - 1;
}

/** The UTF-8 length of JSON text (whose surrogates are paired: JSON.stringify escapes others). */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 2; // with its low surrogate: 4 bytes for 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}
