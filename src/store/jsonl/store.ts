/**
 * The JSONL store: one append-only file per session in one directory.
 *
 * Durability: `create` publishes a fully written, fsynced file with `link()` (never clobbering)
 * and fsyncs the directory; `append` writes the whole batch (events and commit marker) with one
 * positional write, fdatasyncs, and only then resolves. Safety: one writer per file at a time
 * (a process-wide queue, plus the lock file across processes), the expected seq checked against
 * the file itself, and a failed fsync stops all further appends to that session.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import {
  PalimpsestError,
  type SessionEvent,
  type SessionHeader,
  validateHeader,
} from '../../core/index.js';
import type {
  AppendOptions,
  ListOptions,
  LoadedSession,
  LoadOptions,
  SessionLock,
  SessionPage,
  SessionStore,
  SessionSummary,
  TornTail,
} from '../contract.js';
import {
  AlreadyExistsError,
  ClosedError,
  ConflictError,
  InvalidStoreError,
  LockedError,
  type LockOwner,
  NotFoundError,
  StorageError,
} from '../errors.js';
import { isOwnerAlive } from '../lock-owner.js';
import { checkBatch, checkSessionId, pageOf } from '../store-rules.js';
import {
  commitBefore,
  DEFAULT_MAX_LINE_BYTES,
  encodeBatch,
  encodeHeaderLine,
  parseHeaderLine,
  readFirstLine,
} from './format.js';
import { errnoCode, type FsFacade, type FsFileHandle, type FsStats, nodeFs } from './fs.js';
import {
  acquireLock,
  holdsLock,
  type LockEnv,
  type LockTarget,
  readLock,
  releaseLock,
} from './lock.js';
import {
  contained,
  encodeSessionId,
  isLogFileName,
  LOG_SUFFIX,
  type SessionPaths,
  sessionPaths,
} from './paths.js';
import { heldLock, serialized } from './process-state.js';
import { scanLog } from './scan.js';

/**
 * Where the backend calls its failpoint hook. Crash tests kill the process at one of them (the
 * hook may never return); fault tests throw from one.
 */
export const JSONL_FAILPOINTS = [
  'create:after-temp-write',
  'create:after-temp-fsync',
  'create:after-link',
  'create:after-dir-fsync',
  'append:before-write',
  'append:mid-write',
  'append:after-write',
  'append:after-fsync',
  'truncate:after-truncate',
  'lock:after-acquire',
] as const;

/** A name from {@link JSONL_FAILPOINTS}. */
export type JsonlFailpoint = (typeof JSONL_FAILPOINTS)[number];

/** Options of {@link openJsonlStore}. */
export interface JsonlStoreOptions {
  /**
   * Largest line in bytes (without its `\n`), so the largest serialized event or header. Longer
   * lines are refused with `LimitExceededError`: on append before anything is written, on load
   * before the line is decoded. Default 64 MiB.
   */
  readonly maxLineBytes?: number;
  /**
   * Whether to fsync (default `true`). `false` keeps a kill -9 safe (the page cache survives) but
   * not a power cut; for tests and throwaway data only.
   */
  readonly fsync?: boolean;
  /** The file system (default: `node:fs/promises`). The seam for fault injection. */
  readonly fs?: FsFacade;
  /**
   * Called at each point named in {@link JSONL_FAILPOINTS}. When set, an append writes its
   * buffer in two halves with `'append:mid-write'` in between.
   */
  readonly failpoint?: (name: JsonlFailpoint) => void | Promise<void>;
  /** How long to wait for another process's in-flight append to release the lock (default 2000 ms). */
  readonly lockWaitMs?: number;
  /**
   * Whether a lock owner may still be running (default: pid, process start time and boot id on
   * this host). A power-loss simulation that "crashes" inside one process replaces it.
   */
  readonly isOwnerAlive?: (owner: LockOwner) => boolean;
}

interface ResolvedOptions {
  readonly maxLineBytes: number;
  readonly fsync: boolean;
  readonly fs: FsFacade;
  readonly failpoint: ((name: JsonlFailpoint) => void | Promise<void>) | undefined;
  readonly lockWaitMs: number;
  readonly ownerAlive: (owner: LockOwner) => boolean;
}

/** What a store knows about a log it has written to, checked against the file before each use. */
interface WriterState {
  readonly handle: FsFileHandle;
  readonly dev: number;
  readonly ino: number;
  /** Where the header line ends. */
  readonly headerEnd: number;
  size: number;
  nextSeq: number;
}

/** Smallest accepted `maxLineBytes`: a header and a commit marker must fit. */
const MIN_LINE_BYTES = 64;
const LIST_CONCURRENCY = 16;
/** Writers kept open per store; a server with many sessions must not run out of descriptors. */
const MAX_OPEN_WRITERS = 64;

/**
 * Opens (creating it, mode 0700, if needed) a directory of JSONL session logs.
 *
 * @throws InvalidStoreError when the path exists but is not a directory, or an option is invalid.
 */
export async function openJsonlStore(
  directory: string,
  options: JsonlStoreOptions = {},
): Promise<JsonlStore> {
  const resolved = resolveOptions(options);
  const absolute = path.resolve(directory);
  const fs = resolved.fs;
  let stats: FsStats;
  try {
    try {
      stats = await fs.stat(absolute);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      await fs.mkdir(absolute, 0o700);
      stats = await fs.stat(absolute);
    }
  } catch (error) {
    throw new StorageError(`cannot open the session directory ${absolute}`, { cause: error });
  }
  if (!stats.isDirectory()) {
    throw new InvalidStoreError(`jsonl store path ${absolute} exists but is not a directory`);
  }
  return new JsonlStore(absolute, `${stats.dev}:${stats.ino}`, resolved);
}

function resolveOptions(options: JsonlStoreOptions): ResolvedOptions {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < MIN_LINE_BYTES) {
    throw new InvalidStoreError(
      `maxLineBytes must be an integer of at least ${MIN_LINE_BYTES}, found ${String(maxLineBytes)}`,
    );
  }
  const lockWaitMs = options.lockWaitMs ?? 2000;
  if (!Number.isFinite(lockWaitMs) || lockWaitMs < 0) {
    throw new InvalidStoreError(
      `lockWaitMs must be a non-negative number, found ${String(lockWaitMs)}`,
    );
  }
  return {
    maxLineBytes,
    fsync: options.fsync !== false,
    fs: options.fs ?? nodeFs,
    failpoint: options.failpoint,
    lockWaitMs,
    ownerAlive: options.isOwnerAlive ?? isOwnerAlive,
  };
}

/**
 * Sessions as JSONL files in one directory: `<encoded id>.jsonl` (the log) and
 * `<encoded id>.lock` (the writer lock). See the module documentation of `format.ts` for the
 * file format. Create instances with {@link openJsonlStore}.
 */
export class JsonlStore implements SessionStore {
  /** `jsonl:<absolute directory>` */
  readonly location: string;
  private readonly options: ResolvedOptions;
  private readonly fs: FsFacade;
  private readonly lockEnv: LockEnv;
  /** Open writers, least recently used first. */
  private readonly writers = new Map<string, WriterState>();
  /** Sessions whose writer an append is using right now (never closed under it). */
  private readonly busy = new Set<string>();
  /** Sessions whose fsync failed: appends are refused until the store is reopened. */
  private readonly poisoned = new Map<string, unknown>();
  private readonly locks = new Set<SessionLock>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  /** @internal use {@link openJsonlStore} */
  constructor(
    /** The absolute directory of the logs. */
    readonly directory: string,
    /** Device and inode of the directory: the process-wide identity of its files. */
    private readonly directoryKey: string,
    options: ResolvedOptions,
  ) {
    this.location = `jsonl:${directory}`;
    this.options = options;
    this.fs = options.fs;
    this.lockEnv = {
      fs: options.fs,
      directory,
      fsync: options.fsync,
      ownerAlive: options.ownerAlive,
    };
  }

  /** The path of a session's log (whether or not it exists). */
  pathOf(id: string): string {
    checkSessionId(id);
    return sessionPaths(this.directory, id).log;
  }

  create(header: SessionHeader): Promise<void> {
    return this.run(`create session in ${this.location}`, async () => {
      checkSessionId(header.id);
      // A header load would refuse is refused now, before a file exists.
      const valid = validateHeader(header);
      const line = encodeHeaderLine(valid, this.options.maxLineBytes);
      const paths = sessionPaths(this.directory, valid.id);
      const temp = contained(
        this.directory,
        `.${paths.name}.${randomBytes(8).toString('hex')}.tmp`,
      );
      const handle = await this.fs.open(temp, 'wx', 0o600);
      try {
        try {
          // The umask can only remove permission bits; chmod makes the mode exact.
          await handle.chmod(0o600);
          await writeAll(handle, line, 0, line.length, 0);
          await this.failpoint('create:after-temp-write');
          if (this.options.fsync) await handle.datasync();
        } finally {
          await handle.close();
        }
        await this.failpoint('create:after-temp-fsync');
        try {
          // link(), not rename(): it fails with EEXIST instead of replacing an existing log.
          await this.fs.link(temp, paths.log);
        } catch (error) {
          if (errnoCode(error) === 'EEXIST') throw new AlreadyExistsError(valid.id, this.location);
          throw error;
        }
        await this.failpoint('create:after-link');
      } finally {
        await unlinkQuietly(this.fs, temp);
      }
      await this.syncDirectory();
      await this.failpoint('create:after-dir-fsync');
    });
  }

  append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    return this.run(`append to session '${short(id)}'`, async () => {
      checkSessionId(id);
      checkBatch(id, events, options);
      const expectedSeq = options.expectedSeq;
      // Serialize (and check every line's size) before touching anything.
      const buffer =
        events.length === 0
          ? undefined
          : encodeBatch(id, events, expectedSeq + events.length, this.options.maxLineBytes);
      const paths = sessionPaths(this.directory, id);
      const target = this.lockTarget(id, paths);
      await serialized(target.key, async () => {
        this.assertOpen();
        this.assertNotPoisoned(id);
        // A process that does not hold the session's lock takes it for this one append, so
        // two processes can never write to one file at the same time.
        const held = heldLock(target.key);
        const transient =
          held === undefined || held.transient
            ? await acquireLock(this.lockEnv, target, {
                transient: true,
                waitMs: this.options.lockWaitMs,
              })
            : undefined;
        this.busy.add(id);
        try {
          const writer = await this.writerFor(id, paths.log);
          if (expectedSeq !== writer.nextSeq)
            throw new ConflictError(id, expectedSeq, writer.nextSeq);
          if (buffer !== undefined) await this.writeBatch(id, writer, buffer, events.length);
        } finally {
          this.busy.delete(id);
          if (transient !== undefined) await releaseQuietly(this.lockEnv, target, transient.token);
          await this.trimWriters();
        }
      });
    });
  }

  load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    return this.run(`load session '${short(id)}'`, async () => {
      checkSessionId(id);
      const file = sessionPaths(this.directory, id).log;
      const handle = await this.openExisting(id, file, 'r');
      try {
        const scan = await scanLog(handle, {
          file,
          expectedId: id,
          maxLineBytes: this.options.maxLineBytes,
          elideFinishedChunks: options.elideFinishedChunks === true,
        });
        return scan.tornTail === undefined
          ? { header: scan.header, events: scan.events }
          : { header: scan.header, events: scan.events, tornTail: scan.tornTail };
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * Sessions newest first. Reads only each log's header line and its last few bytes (for the
   * event count), never a whole log. A file whose header is damaged, of another format version,
   * or names another session is left out (`load` reports what is wrong with it).
   */
  list(options: ListOptions = {}): Promise<SessionPage> {
    return this.run(`list sessions in ${this.location}`, async () => {
      pageOf([], options); // refuse a bad limit or cursor before reading anything
      const names = (await this.fs.readdir(this.directory)).filter(isLogFileName);
      const summaries: SessionSummary[] = [];
      for (let i = 0; i < names.length; i += LIST_CONCURRENCY) {
        const found = await Promise.all(
          names.slice(i, i + LIST_CONCURRENCY).map((name) => this.summarize(name)),
        );
        for (const summary of found) if (summary !== undefined) summaries.push(summary);
      }
      return pageOf(summaries, options);
    });
  }

  delete(id: string): Promise<void> {
    return this.run(`delete session '${short(id)}'`, async () => {
      checkSessionId(id);
      const paths = sessionPaths(this.directory, id);
      const target = this.lockTarget(id, paths);
      await serialized(target.key, async () => {
        this.assertOpen();
        await this.statExisting(id, paths.log);
        // Taking the lock makes a live writer's hold a LockedError and clears a stale one.
        const owner = await acquireLock(this.lockEnv, target, {
          transient: true,
          waitMs: this.options.lockWaitMs,
        });
        try {
          await this.dropWriter(id);
          try {
            await this.fs.unlink(paths.log);
          } catch (error) {
            if (errnoCode(error) === 'ENOENT') throw new NotFoundError(id, this.location);
            throw error;
          }
          await this.syncDirectory();
        } finally {
          await releaseQuietly(this.lockEnv, target, owner.token);
        }
      });
    });
  }

  lock(id: string): Promise<SessionLock> {
    return this.run(`lock session '${short(id)}'`, async () => {
      checkSessionId(id);
      const target = this.lockTarget(id, sessionPaths(this.directory, id));
      const owner = await acquireLock(this.lockEnv, target, {
        transient: false,
        waitMs: this.options.lockWaitMs,
      });
      let released: Promise<void> | undefined;
      const handle: SessionLock = {
        sessionId: id,
        owner,
        release: () => {
          released ??= (async () => {
            this.locks.delete(handle);
            try {
              await releaseLock(this.lockEnv, target, owner.token);
            } catch (error) {
              throw new StorageError(`release the lock of session '${short(id)}'`, {
                cause: error,
              });
            }
          })();
          return released;
        },
      };
      this.locks.add(handle);
      try {
        await this.failpoint('lock:after-acquire');
      } catch (error) {
        await handle.release();
        throw error;
      }
      return handle;
    });
  }

  discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    return this.run(`discard the torn tail of session '${short(id)}'`, async () => {
      checkSessionId(id);
      if (lock.sessionId !== id) {
        throw new InvalidStoreError(
          `the lock passed to discardTornTail is for session '${short(lock.sessionId)}', not '${short(id)}'`,
        );
      }
      if (!isByteCount(tail.offset) || !isByteCount(tail.size)) {
        throw new InvalidStoreError(
          `torn tail of session '${short(id)}' has an invalid offset or size`,
        );
      }
      const paths = sessionPaths(this.directory, id);
      const target = this.lockTarget(id, paths);
      await serialized(target.key, async () => {
        this.assertOpen();
        this.assertNotPoisoned(id);
        if (!(await holdsLock(this.lockEnv, target, lock.owner.token))) {
          const current = await readLock(this.fs, target.path);
          if (current?.owner !== undefined) throw new LockedError(id, current.owner);
          throw new InvalidStoreError(
            `the lock of session '${short(id)}' is no longer held; lock it again`,
          );
        }
        await this.dropWriter(id);
        const handle = await this.openExisting(id, paths.log, 'r+');
        try {
          const size = (await handle.stat()).size;
          // A log that changed since it was loaded is left alone; the next load looks again.
          if (tail.size === 0 || size !== tail.offset + tail.size) return;
          await this.checkCommitBoundary(handle, paths.log, tail.offset);
          await handle.truncate(tail.offset);
          await this.datasync(id, handle);
          await this.failpoint('truncate:after-truncate');
        } finally {
          await handle.close();
        }
      });
    });
  }

  /** Waits for running operations, closes files and releases the locks taken through this store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    for (const id of [...this.writers.keys()]) await this.dropWriter(id);
    for (const lock of [...this.locks]) await lock.release().catch(() => undefined);
  }

  // ---------------------------------------------------------------------------------------------

  /** Runs one public operation: refuses after close, tracks it for close, types its errors. */
  private run<T>(what: string, operation: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError(`store ${this.location}`));
    const promise = operation().catch((error: unknown) => {
      throw PalimpsestError.isInstance(error)
        ? error
        : new StorageError(`${what} failed`, { cause: error });
    });
    this.inFlight.add(promise);
    const forget = (): void => {
      this.inFlight.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  }

  private assertOpen(): void {
    if (this.closed) throw new ClosedError(`store ${this.location}`);
  }

  private assertNotPoisoned(id: string): void {
    if (!this.poisoned.has(id)) return;
    throw new StorageError(
      `an fsync of session '${short(id)}' failed (or a failed append could not be undone), so ${this.location} refuses to write to it until the store is reopened`,
      { cause: this.poisoned.get(id) },
    );
  }

  private lockTarget(id: string, paths: SessionPaths): LockTarget {
    return {
      sessionId: id,
      name: paths.name,
      path: paths.lock,
      key: `${this.directoryKey}/${paths.name}`,
    };
  }

  private async failpoint(name: JsonlFailpoint): Promise<void> {
    if (this.options.failpoint !== undefined) await this.options.failpoint(name);
  }

  private async openExisting(id: string, file: string, flags: 'r' | 'r+'): Promise<FsFileHandle> {
    try {
      return await this.fs.open(file, flags);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') throw new NotFoundError(id, this.location);
      throw error;
    }
  }

  private async statExisting(id: string, file: string): Promise<FsStats> {
    try {
      return await this.fs.stat(file);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') throw new NotFoundError(id, this.location);
      throw error;
    }
  }

  /**
   * The writer state of a session, checked against the file: a file replaced since (another
   * device or inode) is reopened, one that grew or shrank (another writer, a repair) is probed
   * again for its next seq.
   */
  private async writerFor(id: string, file: string): Promise<WriterState> {
    let stats: FsStats;
    try {
      stats = await this.statExisting(id, file);
    } catch (error) {
      await this.dropWriter(id);
      throw error;
    }
    let writer = this.writers.get(id);
    if (writer !== undefined && (writer.dev !== stats.dev || writer.ino !== stats.ino)) {
      await this.dropWriter(id);
      writer = undefined;
    }
    if (writer !== undefined) {
      // Most recently used goes last, so trimming closes the idlest first.
      this.writers.delete(id);
      this.writers.set(id, writer);
      if (writer.size === stats.size) return writer;
    }
    if (writer === undefined) {
      writer = await this.openWriter(id, file);
    }
    try {
      writer.size = (await writer.handle.stat()).size;
      writer.nextSeq = await this.probeNextSeq(id, file, writer);
    } catch (error) {
      await this.dropWriter(id);
      throw error;
    }
    return writer;
  }

  private async openWriter(id: string, file: string): Promise<WriterState> {
    const handle = await this.openExisting(id, file, 'r+');
    try {
      const stats = await handle.stat();
      const first = await readFirstLine(handle, file, this.options.maxLineBytes);
      if (first === undefined) {
        // Scanning gives the precise error (empty file, incomplete header, over-long line).
        await scanLog(handle, { file, expectedId: id, maxLineBytes: this.options.maxLineBytes });
        throw new InvalidStoreError(`the log ${file} has no complete header line`);
      }
      parseHeaderLine(first.bytes, file, id);
      const writer: WriterState = {
        handle,
        dev: stats.dev,
        ino: stats.ino,
        headerEnd: first.end,
        size: stats.size,
        nextSeq: 0,
      };
      this.writers.set(id, writer);
      return writer;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * The next seq of a log: the count of the commit marker it ends with (a few bytes read), or,
   * when it does not end with one, a full scan to tell a torn tail (refused: appending after it
   * would bury the damage) from corruption (a `CorruptLogError`).
   */
  private async probeNextSeq(id: string, file: string, writer: WriterState): Promise<number> {
    if (writer.size === writer.headerEnd) return 0;
    if (writer.size > writer.headerEnd) {
      const count = await commitBefore(writer.handle, writer.size, writer.headerEnd);
      if (count !== undefined) return count;
    }
    const scan = await scanLog(writer.handle, {
      file,
      expectedId: id,
      maxLineBytes: this.options.maxLineBytes,
    });
    if (scan.tornTail !== undefined) {
      throw new InvalidStoreError(
        `the log of session '${short(id)}' ends with a torn tail (${scan.tornTail.reason}); open it with openSession to repair it first`,
      );
    }
    return scan.events.length;
  }

  private async writeBatch(
    id: string,
    writer: WriterState,
    buffer: Buffer,
    count: number,
  ): Promise<void> {
    const start = writer.size;
    try {
      await this.failpoint('append:before-write');
      if (this.options.failpoint === undefined) {
        await writeAll(writer.handle, buffer, 0, buffer.length, start);
      } else {
        const half = Math.floor(buffer.length / 2);
        await writeAll(writer.handle, buffer, 0, half, start);
        await this.failpoint('append:mid-write');
        await writeAll(writer.handle, buffer, half, buffer.length - half, start + half);
      }
      await this.failpoint('append:after-write');
    } catch (error) {
      return this.rollBack(id, writer, start, error, false);
    }
    if (this.options.fsync) {
      try {
        await writer.handle.datasync();
      } catch (error) {
        return this.rollBack(id, writer, start, error, true);
      }
    }
    writer.size = start + buffer.length;
    writer.nextSeq += count;
    await this.failpoint('append:after-fsync');
  }

  /**
   * Undoes a failed append: truncates the file back to where the batch began, so no partial
   * bytes remain, and throws. A failed fsync (of the batch or of the rollback) poisons the
   * session: the kernel may have dropped dirty pages, so a later "successful" fsync would prove
   * nothing (PostgreSQL's fsyncgate).
   */
  private async rollBack(
    id: string,
    writer: WriterState,
    start: number,
    error: unknown,
    fsyncFailed: boolean,
  ): Promise<never> {
    let cause = error;
    let poison = fsyncFailed;
    try {
      await writer.handle.truncate(start);
      if (this.options.fsync) await writer.handle.datasync();
    } catch (rollbackError) {
      cause = new AggregateError(
        [error, rollbackError],
        'the append failed, then rolling it back failed too',
      );
      poison = true;
    }
    await this.dropWriter(id);
    if (poison) this.poisoned.set(id, cause);
    throw new StorageError(
      `append to session '${short(id)}' failed${cause === error ? `; the log was rolled back to ${start} bytes` : ''}`,
      { cause },
    );
  }

  private async datasync(id: string, handle: FsFileHandle): Promise<void> {
    if (!this.options.fsync) return;
    try {
      await handle.datasync();
    } catch (error) {
      this.poisoned.set(id, error);
      throw error;
    }
  }

  /** Checks that `offset` is where the header line or a commit marker line ends. */
  private async checkCommitBoundary(
    handle: FsFileHandle,
    file: string,
    offset: number,
  ): Promise<void> {
    const first = await readFirstLine(handle, file, this.options.maxLineBytes);
    if (
      first !== undefined &&
      (offset === first.end ||
        (offset > first.end && (await commitBefore(handle, offset, first.end)) !== undefined))
    ) {
      return;
    }
    throw new InvalidStoreError(
      `the torn tail passed for ${file} does not start where a committed batch ends; load the session again`,
    );
  }

  /** Closes the least recently used idle writers beyond {@link MAX_OPEN_WRITERS}. */
  private async trimWriters(): Promise<void> {
    for (const id of [...this.writers.keys()]) {
      if (this.writers.size <= MAX_OPEN_WRITERS) return;
      if (!this.busy.has(id)) await this.dropWriter(id);
    }
  }

  private async dropWriter(id: string): Promise<void> {
    const writer = this.writers.get(id);
    if (writer === undefined) return;
    this.writers.delete(id);
    await writer.handle.close().catch(() => undefined);
  }

  private async syncDirectory(): Promise<void> {
    if (!this.options.fsync) return;
    const handle = await this.fs.open(this.directory, 'r');
    try {
      await handle.sync();
    } catch (error) {
      // Windows cannot fsync a directory (and does not need to); elsewhere it is a real failure.
      if (
        !(
          process.platform === 'win32' &&
          ['EPERM', 'EISDIR', 'EINVAL'].includes(errnoCode(error) ?? '')
        )
      )
        throw error;
    } finally {
      await handle.close();
    }
  }

  private async summarize(name: string): Promise<SessionSummary | undefined> {
    const file = contained(this.directory, name);
    let handle: FsFileHandle;
    try {
      handle = await this.fs.open(file, 'r');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined; // deleted since readdir
      throw error;
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) return undefined;
      let header: SessionHeader;
      let headerEnd: number;
      try {
        const first = await readFirstLine(handle, file, this.options.maxLineBytes);
        if (first === undefined) return undefined;
        header = parseHeaderLine(first.bytes, file, undefined);
        headerEnd = first.end;
      } catch (error) {
        if (PalimpsestError.isInstance(error)) return undefined; // damaged, foreign version, over-long
        throw error;
      }
      if (`${encodeSessionId(header.id)}${LOG_SUFFIX}` !== name) return undefined;
      const count =
        stats.size === headerEnd ? 0 : await commitBefore(handle, stats.size, headerEnd);
      return {
        header,
        updatedAt: Math.floor(stats.mtimeMs),
        sizeBytes: stats.size,
        ...(count === undefined ? {} : { eventCount: count }),
      };
    } finally {
      await handle.close();
    }
  }
}

/** Writes `length` bytes of `buffer` from `offset` at `position`, looping on short writes. */
async function writeAll(
  handle: FsFileHandle,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<void> {
  let written = 0;
  while (written < length) {
    const count = await handle.write(
      buffer,
      offset + written,
      length - written,
      position + written,
    );
    if (count <= 0) throw new Error(`write made no progress after ${written} of ${length} bytes`);
    written += count;
  }
}

async function unlinkQuietly(fs: FsFacade, file: string): Promise<void> {
  try {
    await fs.unlink(file);
  } catch {
    // The temp file is already gone (or was never linked); nothing to clean.
  }
}

/**
 * Releases a transient lock without failing the operation it protected: the write is already
 * durable (or already failed with its own error), and a leftover lock of this live process is
 * judged stale once the process exits.
 */
async function releaseQuietly(env: LockEnv, target: LockTarget, token: string): Promise<void> {
  try {
    await releaseLock(env, target, token);
  } catch {
    // See above.
  }
}

function isByteCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
