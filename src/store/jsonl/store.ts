/**
 * The JSONL store: one append-only file per session in one directory.
 *
 * Durability (the writes are the writer's, `writer.ts`): `create` publishes a fully written,
 * fsynced file with `link()` (never clobbering) and fsyncs the directory; `append` writes the
 * whole batch (events and commit marker) with one positional write, fdatasyncs, and only then
 * resolves. The reads are `scan.ts` (load), `stats.ts` (summarize), `watch.ts` and `header.ts`
 * (list); the lock is `lock.ts`. The factory is `openJsonlStore` in `open.ts`. Safety: one
 * writer per file at a time (a process-wide queue, plus the lock file across processes), the
 * expected seq checked against the file itself, and a failed fsync stops all further appends to
 * that session.
 */
import { join } from 'node:path';
import { validateHeader } from '../../core/header.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { ConflictError, InvalidStoreError, LockedError, StorageError } from '../contract/errors.js';
import { follow } from '../contract/follow.js';
import { LoadedSession } from '../contract/loaded-session.js';
import type {
  AppendOptions,
  DamagedSession,
  ListOptions,
  LoadOptions,
  ReplaceLogOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  SessionSummary,
  TornTail,
  UnlockOptions,
  UnlockReport,
  WatchOptions,
} from '../contract/session-store.js';
import {
  asStorageError,
  assertOpen,
  checkBatch,
  checkListOptions,
  checkReplaceLog,
  checkSessionId,
  checkTornTail,
  pageOf,
  shortId,
} from '../contract/store-rules.js';
import { encodeBatch } from './format.js';
import { type FsFacade, openExisting, statExisting, unlinkQuietly } from './fs.js';
import { encodeHeaderLine, summarize } from './header.js';
import {
  acquireLock,
  breakLock,
  holdsLock,
  type LockEnv,
  type LockTarget,
  readLock,
  releaseLock,
  releaseQuietly,
  wasLost,
} from './lock.js';
import { encodeLog } from './log-file.js';
import type { JsonlFailpoint, ResolvedOptions } from './options.js';
import {
  contained,
  isLogFileName,
  SEARCH_INDEX_FILES,
  type SessionPaths,
  sessionPaths,
} from './paths.js';
import { heldLock, serialized } from './process-state.js';
import { scanLog } from './scan.js';
import { readStats } from './stats.js';
import { jsonlLogSource } from './watch.js';
import { JsonlWriter } from './writer.js';

const LIST_CONCURRENCY = 16;
/** Sessions whose append paths a store remembers before it starts over (see `#appendTarget`). */
const MAX_REMEMBERED_PATHS = 1024;

/** Where the appends of one session go: its log and its lock. */
interface AppendTarget {
  readonly log: string;
  readonly lock: LockTarget;
}

/**
 * Sessions as JSONL files in one directory: `<encoded id>.jsonl` (the log) and
 * `<encoded id>.lock` (the writer lock). See the module documentation of `format.ts` for the
 * file format. Create instances with {@link openJsonlStore}.
 */
export class JsonlStore implements SessionStore {
  /** `jsonl:<absolute directory>` */
  readonly location: string;
  /** The absolute directory of the logs. */
  readonly directory: string;
  /** Device, inode and birth time of the directory: the process-wide identity of its files. */
  readonly #directoryKey: string;
  readonly #options: ResolvedOptions;
  readonly #fs: FsFacade;
  readonly #lockEnv: LockEnv;
  readonly #writer: JsonlWriter;
  readonly #locks = new Set<SessionLock>();
  readonly #inFlight = new Set<Promise<unknown>>();
  /** The targets of recently appended sessions (see `#appendTarget`). */
  #appendTargets = new Map<string, AppendTarget>();
  #closed = false;

  /** @internal use {@link openJsonlStore} */
  constructor(directory: string, directoryKey: string, options: ResolvedOptions) {
    this.directory = directory;
    this.#directoryKey = directoryKey;
    this.location = `jsonl:${directory}`;
    this.#options = options;
    this.#fs = options.fs;
    this.#lockEnv = {
      fs: options.fs,
      directory,
      fsync: options.fsync,
      ownerAlive: options.ownerAlive,
      timing: options.lockTiming,
    };
    this.#writer = new JsonlWriter({
      location: this.location,
      fs: options.fs,
      maxLineBytes: options.maxLineBytes,
      fsync: options.fsync,
      failpoint: options.failpoint,
    });
  }

  /** The path of a session's log (whether or not it exists). */
  pathOf(id: string): string {
    checkSessionId(id);
    return sessionPaths(this.directory, id).log;
  }

  create(header: SessionHeader): Promise<void> {
    return this.#run('create session', async () => {
      this.#assertWritable();
      checkSessionId(header.id);
      // A header load would refuse is refused now, before a file exists.
      const valid = validateHeader(header);
      const line = encodeHeaderLine(valid, this.#options.maxLineBytes);
      await this.#writer.create(
        valid.id,
        this.directory,
        sessionPaths(this.directory, valid.id),
        line,
      );
    });
  }

  append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    return this.#run(`append to session '${shortId(id)}'`, async () => {
      this.#assertWritable();
      checkSessionId(id);
      checkBatch(id, events, options);
      const expectedSeq = options.expectedSeq;
      // Serialize (and check every line's size) before touching anything.
      const buffer =
        events.length === 0
          ? undefined
          : encodeBatch(id, events, expectedSeq + events.length, this.#options.maxLineBytes);
      const { log, lock: target } = this.#appendTarget(id);
      await serialized(target.key, async () => {
        this.#assertOpen();
        this.#writer.assertNotPoisoned(id);
        // A process that does not hold the session's lock takes it for this one append, so
        // two processes can never write to one file at the same time.
        const held = heldLock(target.key);
        if (held !== undefined && !held.transient && wasLost(held.owner.token)) {
          // Another taker judged this lock stale (this process stalled past the bound, or an
          // operator forced it): the session is no longer ours to write.
          const current = await readLock(this.#fs, target.path);
          throw new LockedError(id, current?.owner ?? held.owner);
        }
        const transient =
          held === undefined || held.transient
            ? await acquireLock(this.#lockEnv, target, {
                transient: true,
                waitMs: this.#options.lockWaitMs,
              })
            : undefined;
        try {
          await this.#writer.append(id, log, expectedSeq, buffer, events.length);
        } finally {
          if (transient !== undefined) {
            await releaseQuietly(this.#lockEnv, target, transient.token);
          }
        }
      });
    });
  }

  load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    return this.#run(`load session '${shortId(id)}'`, async () => {
      checkSessionId(id);
      const file = sessionPaths(this.directory, id).log;
      const handle = await openExisting(this.#fs, this.location, id, file, 'r');
      try {
        const scan = await scanLog(handle, {
          file,
          expectedId: id,
          maxLineBytes: this.#options.maxLineBytes,
          elideFinishedChunks: options.elideFinishedChunks === true,
          salvage: options.salvage === true,
        });
        return LoadedSession.fromLog(scan.header, scan.log, scan);
      } finally {
        await handle.close();
      }
    });
  }

  watch(id: string, options: WatchOptions = {}): AsyncIterable<SessionEvent> {
    return follow(
      () =>
        this.#run(`watch session '${shortId(id)}'`, async () => {
          checkSessionId(id);
          const file = sessionPaths(this.directory, id).log;
          const handle = await openExisting(this.#fs, this.location, id, file, 'r');
          try {
            return await jsonlLogSource(handle, file, id, this.#options.maxLineBytes, () =>
              statExisting(this.#fs, this.location, id, file),
            );
          } catch (error) {
            await handle.close();
            throw error;
          }
        }),
      this.location,
      options,
    );
  }

  /** The session's stats from one pass over its lines that decodes only what they need. */
  summarize(id: string): Promise<SessionStats> {
    return this.#run(`summarize session '${shortId(id)}'`, async () => {
      checkSessionId(id);
      const file = sessionPaths(this.directory, id).log;
      const handle = await openExisting(this.#fs, this.location, id, file, 'r');
      try {
        return await readStats(handle, file, id, this.#options.maxLineBytes);
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * Sessions newest first. Reads only each log's header line and its last few bytes (for the
   * event count), never a whole log. A log whose header is damaged, of another format version,
   * or names another session is reported in `damaged` of the first page, with the error `load`
   * gives.
   */
  list(options: ListOptions = {}): Promise<SessionPage> {
    return this.#run('list sessions', async () => {
      checkListOptions(options); // refuse a bad limit or cursor before reading anything
      const names = (await this.#fs.readdir(this.directory)).filter(isLogFileName);
      const summaries: SessionSummary[] = [];
      const damaged: DamagedSession[] = [];
      const { maxLineBytes } = this.#options;
      for (let i = 0; i < names.length; i += LIST_CONCURRENCY) {
        const found = await Promise.all(
          names
            .slice(i, i + LIST_CONCURRENCY)
            .map((name) =>
              summarize(this.#fs, contained(this.directory, name), name, maxLineBytes),
            ),
        );
        for (const entry of found) {
          if (entry === undefined) continue;
          if ('damaged' in entry) damaged.push(entry.damaged);
          else summaries.push(entry);
        }
      }
      const page = pageOf(summaries, options);
      // Damaged logs have no sort key: they are all reported on the first page.
      return options.cursor === undefined && damaged.length > 0 ? { ...page, damaged } : page;
    });
  }

  delete(id: string): Promise<void> {
    return this.#run(`delete session '${shortId(id)}'`, async () => {
      this.#assertWritable();
      checkSessionId(id);
      const paths = sessionPaths(this.directory, id);
      const target = this.#lockTarget(id, paths);
      await serialized(target.key, async () => {
        this.#assertOpen();
        await statExisting(this.#fs, this.location, id, paths.log);
        // Taking the lock makes a live writer's hold a LockedError and clears a stale one.
        const owner = await acquireLock(this.#lockEnv, target, {
          transient: true,
          waitMs: this.#options.lockWaitMs,
        });
        try {
          await this.#writer.remove(id, this.directory, paths.log);
        } finally {
          await releaseQuietly(this.#lockEnv, target, owner.token);
        }
        await this.#forgetIndexed(id);
      });
    });
  }

  /** Takes a deleted session out of the search index beside the logs (see `onSessionDeleted`). */
  async #forgetIndexed(id: string): Promise<void> {
    const hook = this.#options.onSessionDeleted;
    if (hook !== undefined) return hook(id);
    // The index may hold the session's words; the next search builds it again from the logs.
    for (const name of SEARCH_INDEX_FILES) {
      await unlinkQuietly(this.#fs, join(this.directory, name));
    }
  }

  lock(id: string): Promise<SessionLock> {
    return this.#run(`lock session '${shortId(id)}'`, async () => {
      this.#assertWritable();
      checkSessionId(id);
      const target = this.#lockTarget(id, sessionPaths(this.directory, id));
      const owner = await acquireLock(this.#lockEnv, target, {
        transient: false,
        waitMs: this.#options.lockWaitMs,
      });
      let released: Promise<void> | undefined;
      const handle: SessionLock = {
        sessionId: id,
        owner,
        release: () => {
          released ??= (async () => {
            this.#locks.delete(handle);
            try {
              await releaseLock(this.#lockEnv, target, owner.token);
            } catch (error) {
              throw new StorageError(`release the lock of session '${shortId(id)}'`, {
                cause: error,
              });
            }
          })();
          return released;
        },
      };
      this.#locks.add(handle);
      try {
        await this.#failpoint('lock:after-acquire');
      } catch (error) {
        await handle.release();
        throw error;
      }
      return handle;
    });
  }

  unlock(id: string, options: UnlockOptions = {}): Promise<UnlockReport> {
    return this.#run(`unlock session '${shortId(id)}'`, async () => {
      this.#assertWritable();
      checkSessionId(id);
      const target = this.#lockTarget(id, sessionPaths(this.directory, id));
      const broken = await breakLock(this.#lockEnv, target, options.force === true);
      return broken === undefined ? { removed: false } : { removed: true, ...broken };
    });
  }

  discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    return this.#run(`discard the torn tail of session '${shortId(id)}'`, async () => {
      this.#assertWritable();
      checkSessionId(id);
      checkTornTail(id, tail, lock);
      const paths = sessionPaths(this.directory, id);
      const target = this.#lockTarget(id, paths);
      await serialized(target.key, async () => {
        this.#assertOpen();
        this.#writer.assertNotPoisoned(id);
        await this.#checkHolder(id, target, lock);
        await this.#writer.discardTail(id, paths.log, tail.committedSeq, tail.bytes);
      });
    });
  }

  replaceLog(
    id: string,
    events: readonly SessionEvent[],
    options: ReplaceLogOptions,
    lock: SessionLock,
  ): Promise<void> {
    return this.#run(`replace the log of session '${shortId(id)}'`, async () => {
      this.#assertWritable();
      checkSessionId(id);
      checkReplaceLog(id, events, options, lock);
      const paths = sessionPaths(this.directory, id);
      const target = this.#lockTarget(id, paths);
      await serialized(target.key, async () => {
        this.#assertOpen();
        this.#writer.assertNotPoisoned(id);
        await this.#checkHolder(id, target, lock);
        const stored = await this.load(id);
        const length = stored.log.length;
        if (stored.tornTail !== undefined || length !== options.expectedLength) {
          throw new ConflictError(id, options.expectedLength, length);
        }
        const content = encodeLog(stored.header, id, events, this.#options.maxLineBytes);
        await this.#writer.replace(id, this.directory, paths, content);
      });
    });
  }

  /** Waits for running operations, closes files and releases the locks taken through this store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    await this.#writer.closeAll();
    for (const lock of [...this.#locks]) await lock.release().catch(() => undefined);
  }

  /** Runs one public operation: refuses after close, tracks it for close, types its errors. */
  #run<T>(action: string, operation: () => Promise<T>): Promise<T> {
    try {
      this.#assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    const promise = operation().catch((error: unknown) => {
      throw asStorageError(action, this.location, error);
    });
    this.#inFlight.add(promise);
    const forget = (): void => {
      this.#inFlight.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  }

  #assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }

  #assertWritable(): void {
    if (this.#options.readOnly) {
      throw new InvalidStoreError(
        'READ_ONLY',
        `${this.location} was opened read-only; writes are refused`,
      );
    }
  }

  /**
   * The log and lock of session `id`, remembered: they depend on the id and the directory alone,
   * so the id's encoding and the containment checks of its paths need not run again on each
   * append of a turn.
   */
  #appendTarget(id: string): AppendTarget {
    let target = this.#appendTargets.get(id);
    if (target === undefined) {
      if (this.#appendTargets.size >= MAX_REMEMBERED_PATHS) this.#appendTargets = new Map();
      const paths = sessionPaths(this.directory, id);
      target = { log: paths.log, lock: this.#lockTarget(id, paths) };
      this.#appendTargets.set(id, target);
    }
    return target;
  }

  #lockTarget(id: string, paths: SessionPaths): LockTarget {
    return {
      sessionId: id,
      name: paths.name,
      path: paths.lock,
      key: `${this.#directoryKey}/${paths.name}`,
    };
  }

  /** Throws unless `lock` still holds the session. */
  async #checkHolder(id: string, target: LockTarget, lock: SessionLock): Promise<void> {
    if (await holdsLock(this.#lockEnv, target, lock.owner.token)) return;
    const current = await readLock(this.#fs, target.path);
    if (current?.owner !== undefined) throw new LockedError(id, current.owner);
    throw new InvalidStoreError(
      'LOCK_NOT_HELD',
      `the lock of session '${shortId(id)}' is no longer held; lock it again`,
    );
  }

  async #failpoint(name: JsonlFailpoint): Promise<void> {
    if (this.#options.failpoint !== undefined) await this.#options.failpoint(name);
  }
}
