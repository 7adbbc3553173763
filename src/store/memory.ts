/**
 * An in-memory store: the reference implementation of the contract, for tests and for
 * applications that do not need durability. Events are kept serialized, as a real store would
 * keep them, so every load returns fresh objects.
 */
import { type SessionEvent, type SessionHeader, validateHeader } from '../core/index.js';
import type {
  AppendOptions,
  ListOptions,
  LoadedSession,
  SessionLock,
  SessionPage,
  SessionStore,
  TornTail,
} from './contract.js';
import {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  LockedError,
  type LockOwner,
  NotFoundError,
} from './errors.js';
import { checkBatch, checkSessionId, pageOf } from './store-rules.js';

interface StoredEntry {
  readonly header: string;
  readonly lines: string[];
  updatedAt: number;
}

let tokens = 0;

/** Sessions held in this process's memory; nothing survives the process. */
export class MemoryStore implements SessionStore {
  readonly location = 'memory:';
  private readonly sessions: Map<string, StoredEntry>;
  private readonly locks: Map<string, LockOwner>;
  private closed = false;

  /**
   * @param options.sharedWith another memory store whose sessions (and locks) this one shares,
   *   as two processes share a directory: tests use it to stand for a restart or a second writer.
   */
  constructor(options: { readonly sharedWith?: MemoryStore } = {}) {
    this.sessions = options.sharedWith?.sessions ?? new Map();
    this.locks = options.sharedWith?.locks ?? new Map();
  }

  async create(header: SessionHeader): Promise<void> {
    this.assertOpen();
    checkSessionId(header.id);
    validateHeader(header);
    if (this.sessions.has(header.id)) throw new AlreadyExistsError(header.id, this.location);
    this.sessions.set(header.id, {
      header: JSON.stringify(header),
      lines: [],
      updatedAt: Date.now(),
    });
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    this.assertOpen();
    const entry = this.entry(id);
    checkBatch(id, events, options);
    if (options.expectedSeq !== entry.lines.length) {
      throw new ConflictError(id, options.expectedSeq, entry.lines.length);
    }
    const lines = events.map((event) => JSON.stringify(event));
    entry.lines.push(...lines);
    entry.updatedAt = Date.now();
  }

  async load(id: string): Promise<LoadedSession> {
    this.assertOpen();
    const entry = this.entry(id);
    return {
      header: JSON.parse(entry.header) as SessionHeader,
      events: entry.lines.map((line) => JSON.parse(line) as SessionEvent),
    };
  }

  async list(options: ListOptions = {}): Promise<SessionPage> {
    this.assertOpen();
    const summaries = [...this.sessions.values()].map((entry) => ({
      header: JSON.parse(entry.header) as SessionHeader,
      updatedAt: entry.updatedAt,
      eventCount: entry.lines.length,
    }));
    return pageOf(summaries, options);
  }

  async delete(id: string): Promise<void> {
    this.assertOpen();
    this.entry(id);
    const owner = this.locks.get(id);
    if (owner !== undefined) throw new LockedError(id, owner);
    this.sessions.delete(id);
  }

  async lock(id: string): Promise<SessionLock> {
    this.assertOpen();
    checkSessionId(id);
    const held = this.locks.get(id);
    if (held !== undefined) throw new LockedError(id, held);
    const owner: LockOwner = {
      pid: 0,
      host: 'memory',
      since: Date.now(),
      token: `memory-${++tokens}`,
    };
    this.locks.set(id, owner);
    return {
      sessionId: id,
      owner,
      release: async () => {
        if (this.locks.get(id)?.token === owner.token) this.locks.delete(id);
      },
    };
  }

  async discardTornTail(_id: string, _tail: TornTail, _lock: SessionLock): Promise<void> {
    // Appends to memory are atomic: there is never a torn tail.
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private entry(id: string): StoredEntry {
    checkSessionId(id);
    const entry = this.sessions.get(id);
    if (entry === undefined) throw new NotFoundError(id, this.location);
    return entry;
  }

  private assertOpen(): void {
    if (this.closed) throw new ClosedError(`store ${this.location}`);
  }
}
