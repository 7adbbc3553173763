/**
 * The durable writer of the JSONL store, every write to a log: the creation and removal of a log
 * file, the open write handles of its sessions (a bounded LRU,
 * each checked against the file before use), the next-seq probe, the append of one framed batch
 * with its rollback, and the truncation of a torn tail. Its one invariant: a batch either is
 * durable when `append` resolves, or no byte of it remains; and once an fsync has failed, the
 * session is never written again by this store (PostgreSQL's fsyncgate: the kernel may have
 * dropped the dirty pages, so a later "successful" fsync would prove nothing).
 *
 * The caller serializes the operations of one session and holds its lock (but for `create`, where
 * the link decides).
 */

import { randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '../../core/index.js';
import {
  AlreadyExistsError,
  ConflictError,
  CorruptLogError,
  InvalidStoreError,
  NotFoundError,
  StorageError,
} from '../contract/errors.js';
import type { TornBytes } from '../contract/session-store.js';
import { shortId } from '../contract/store-rules.js';
import { commitBefore } from './format.js';
import {
  asFailureOn,
  errnoCode,
  type FsFacade,
  type FsFileHandle,
  type FsStats,
  openExisting,
  statExisting,
  syncDirectory,
  unlinkQuietly,
  unsafeEntry,
  writeAll,
} from './fs.js';
import { parseHeaderLine } from './header.js';
import { readFirstLine } from './line-reader.js';
import type { JsonlFailpoint } from './options.js';
import { contained, type SessionPaths } from './paths.js';
import { scanLog } from './scan.js';

/** What the writer needs of the store's options. */
export interface WriterOptions {
  /** The store's location, for errors. */
  readonly location: string;
  readonly fs: FsFacade;
  readonly maxLineBytes: number;
  readonly fsync: boolean;
  readonly failpoint: ((name: JsonlFailpoint) => void | Promise<void>) | undefined;
  /** Write handles kept open; a server with many sessions must not run out of descriptors. */
  readonly maxOpenWriters?: number;
}

/** What the writer knows about a log it has written to, checked against the file before each use. */
interface WriterState {
  readonly handle: FsFileHandle;
  readonly dev: number;
  readonly ino: number;
  /** Where the header line ends. */
  readonly headerEnd: number;
  size: number;
  nextSeq: number;
}

const DEFAULT_MAX_OPEN_WRITERS = 64;

/** The write side of one JSONL store. */
export class JsonlWriter {
  readonly #options: WriterOptions;
  readonly #maxOpen: number;
  /** Open writers, least recently used first. */
  readonly #writers = new Map<string, WriterState>();
  /** Sessions whose writer an append is using right now (never closed under it). */
  readonly #busy = new Set<string>();
  /** Sessions whose fsync failed: appends are refused until the store is reopened. */
  readonly #poisoned = new Map<string, unknown>();

  constructor(options: WriterOptions) {
    this.#options = options;
    this.#maxOpen = options.maxOpenWriters ?? DEFAULT_MAX_OPEN_WRITERS;
  }

  /** Sessions with an open write handle, least recently used first. */
  get openSessions(): readonly string[] {
    return [...this.#writers.keys()];
  }

  /** Throws the `StorageError` of a session an fsync failed for (or a failed undo). */
  assertNotPoisoned(id: string): void {
    if (!this.#poisoned.has(id)) return;
    throw new StorageError(
      `an fsync of session '${shortId(id)}' failed (or a failed append could not be undone), so ${this.#options.location} refuses to write to it until the store is reopened`,
      { cause: this.#poisoned.get(id) },
    );
  }

  /**
   * Publishes a new log whose only line is `line` (the header): written to a temp file, made
   * durable, linked into place as `paths.log`, then the directory made durable. `link()`, not
   * `rename()`: it fails with `EEXIST` instead of replacing an existing log (`AlreadyExistsError`).
   */
  async create(id: string, directory: string, paths: SessionPaths, line: Buffer): Promise<void> {
    const { fs, location } = this.#options;
    const temp = await this.#writeTemp(directory, paths, line, 'create');
    try {
      try {
        await fs.link(temp, paths.log);
      } catch (error) {
        if (errnoCode(error) === 'EEXIST') {
          // A dangling link where the log belongs is not a session that exists.
          throw (await unsafeEntry(fs, paths.log)) ?? new AlreadyExistsError(id, location);
        }
        throw error;
      }
      await this.#failpoint('create:after-link');
    } catch (error) {
      throw asFailureOn(error, temp, paths.log);
    } finally {
      await unlinkQuietly(fs, temp);
    }
    await this.#syncDirectory(directory);
    await this.#failpoint('create:after-dir-fsync');
  }

  /**
   * Replaces the log of session `id` with `content` (a header line and whole batches): written
   * to a temp file, made durable, renamed over the log, then the directory made durable. A crash
   * leaves the old log or the new one; the old file is unlinked, its bytes no longer any file's.
   */
  async replace(
    id: string,
    directory: string,
    paths: SessionPaths,
    content: Buffer,
  ): Promise<void> {
    this.assertNotPoisoned(id);
    await this.drop(id);
    await this.#removeStaleTemps(directory, paths);
    const temp = await this.#writeTemp(directory, paths, content, 'replace');
    try {
      await this.#options.fs.rename(temp, paths.log);
    } catch (error) {
      await unlinkQuietly(this.#options.fs, temp);
      throw asFailureOn(error, temp, paths.log);
    }
    await this.#syncDirectory(directory);
    await this.#failpoint('replace:after-rename');
  }

  /**
   * Removes the temp files a process killed while it replaced (or created) this log left: under
   * the session's lock, no other write of it is under way. They hold a log that never took the
   * old one's place, and must not outlive it.
   */
  async #removeStaleTemps(directory: string, paths: SessionPaths): Promise<void> {
    const { fs } = this.#options;
    const prefix = `.${paths.name}.`;
    const names = await fs.readdir(directory);
    for (const name of names) {
      if (name.startsWith(prefix) && /^[0-9a-f]{16}\.tmp$/.test(name.slice(prefix.length))) {
        await unlinkQuietly(fs, contained(directory, name));
      }
    }
  }

  /** Writes `content` to a new temp file beside the log, durable (with fsync on), mode 0600. */
  async #writeTemp(
    directory: string,
    paths: SessionPaths,
    content: Buffer,
    operation: 'create' | 'replace',
  ): Promise<string> {
    const { fs } = this.#options;
    const temp = contained(directory, `.${paths.name}.${randomBytes(8).toString('hex')}.tmp`);
    let handle: FsFileHandle;
    try {
      handle = await fs.open(temp, 'wx', 0o600);
    } catch (error) {
      throw asFailureOn(error, temp, paths.log);
    }
    try {
      try {
        // The umask can only remove permission bits; chmod makes the mode exact.
        await handle.chmod(0o600);
        await writeAll(handle, content, 0, content.length, 0);
        await this.#failpoint(`${operation}:after-temp-write`);
        if (this.#options.fsync) await handle.datasync();
      } finally {
        await handle.close();
      }
      await this.#failpoint(`${operation}:after-temp-fsync`);
    } catch (error) {
      await unlinkQuietly(fs, temp);
      throw asFailureOn(error, temp, paths.log);
    }
    return temp;
  }

  /** Removes the log `file` of session `id`, its write handle closed first, and makes it durable. */
  async remove(id: string, directory: string, file: string): Promise<void> {
    await this.drop(id);
    try {
      await this.#options.fs.unlink(file);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') throw new NotFoundError(id, this.#options.location);
      throw error;
    }
    await this.#syncDirectory(directory);
  }

  /**
   * Appends the framed `batch` of `count` events at the end of the log `file` if its next seq is
   * `expectedSeq` (a `ConflictError` otherwise; `batch` undefined checks only that). Resolves
   * once the batch is durable; on failure no byte of it remains.
   */
  async append(
    id: string,
    file: string,
    expectedSeq: number,
    batch: Buffer | undefined,
    count: number,
  ): Promise<void> {
    this.assertNotPoisoned(id);
    this.#busy.add(id);
    try {
      const writer = await this.#writerFor(id, file);
      if (expectedSeq !== writer.nextSeq) throw new ConflictError(id, expectedSeq, writer.nextSeq);
      if (batch !== undefined) await this.#writeBatch(id, writer, batch, count);
    } finally {
      this.#busy.delete(id);
      await this.#trim();
    }
  }

  /**
   * Truncates the log `file` back to `tail.offset` if it still ends exactly with the tail and
   * `tail.offset` ends a committed batch of `committedSeq` events (else `InvalidArgumentError`:
   * the tail is not one a load of this log reported). A log that changed since is left alone.
   */
  async discardTail(
    id: string,
    file: string,
    committedSeq: number,
    tail: TornBytes | undefined,
  ): Promise<void> {
    this.assertNotPoisoned(id);
    await this.drop(id);
    if (tail === undefined || tail.size === 0) return;
    const { fs, location } = this.#options;
    const handle = await openExisting(fs, location, id, file, 'r+');
    try {
      const size = (await handle.stat()).size;
      if (size !== tail.offset + tail.size) return;
      await this.#checkCommitBoundary(handle, file, tail.offset, committedSeq);
      await handle.truncate(tail.offset);
      await this.#datasync(id, handle);
      await this.#failpoint('truncate:after-truncate');
    } finally {
      await handle.close();
    }
  }

  /** Closes the write handle of a session, if open. */
  async drop(id: string): Promise<void> {
    const writer = this.#writers.get(id);
    if (writer === undefined) return;
    this.#writers.delete(id);
    await writer.handle.close().catch(() => undefined);
  }

  /** Closes every write handle. */
  async closeAll(): Promise<void> {
    for (const id of [...this.#writers.keys()]) await this.drop(id);
  }

  /**
   * The writer state of a session, checked against the file: a file replaced since (another
   * device or inode) is reopened, one that grew or shrank (another writer, a repair) is probed
   * again for its next seq.
   */
  async #writerFor(id: string, file: string): Promise<WriterState> {
    let stats: FsStats;
    try {
      stats = await statExisting(this.#options.fs, this.#options.location, id, file);
    } catch (error) {
      await this.drop(id);
      throw error;
    }
    let writer = this.#writers.get(id);
    if (writer !== undefined && (writer.dev !== stats.dev || writer.ino !== stats.ino)) {
      await this.drop(id);
      writer = undefined;
    }
    if (writer !== undefined) {
      // Most recently used goes last, so trimming closes the idlest first.
      this.#writers.delete(id);
      this.#writers.set(id, writer);
      if (writer.size === stats.size) return writer;
    }
    if (writer === undefined) {
      writer = await this.#open(id, file);
    }
    try {
      writer.size = (await writer.handle.stat()).size;
      writer.nextSeq = await this.#probeNextSeq(id, file, writer);
    } catch (error) {
      await this.drop(id);
      throw error;
    }
    return writer;
  }

  async #open(id: string, file: string): Promise<WriterState> {
    const { fs, location, maxLineBytes } = this.#options;
    const handle = await openExisting(fs, location, id, file, 'r+');
    try {
      const stats = await handle.stat();
      const first = await readFirstLine(handle, file, maxLineBytes);
      if (first === undefined) {
        // Scanning gives the precise error (empty file, incomplete header, over-long line).
        await scanLog(handle, { file, expectedId: id, maxLineBytes });
        throw new CorruptLogError({ file, reason: 'the log has no complete header line' });
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
      this.#writers.set(id, writer);
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
  async #probeNextSeq(id: string, file: string, writer: WriterState): Promise<number> {
    if (writer.size === writer.headerEnd) return 0;
    if (writer.size > writer.headerEnd) {
      const count = await commitBefore(writer.handle, writer.size, writer.headerEnd);
      if (count !== undefined) return count;
    }
    const scan = await scanLog(writer.handle, {
      file,
      expectedId: id,
      maxLineBytes: this.#options.maxLineBytes,
    });
    if (scan.tornTail !== undefined) {
      throw new InvalidStoreError(
        'TORN_TAIL',
        `the log of session '${shortId(id)}' ends with a torn tail (${scan.tornTail.reason}); open it with openSession to repair it first`,
      );
    }
    return scan.log.length;
  }

  async #writeBatch(id: string, writer: WriterState, buffer: Buffer, count: number): Promise<void> {
    const start = writer.size;
    try {
      await this.#failpoint('append:before-write');
      if (this.#options.failpoint === undefined) {
        await writeAll(writer.handle, buffer, 0, buffer.length, start);
      } else {
        const half = Math.floor(buffer.length / 2);
        await writeAll(writer.handle, buffer, 0, half, start);
        await this.#failpoint('append:mid-write');
        await writeAll(writer.handle, buffer, half, buffer.length - half, start + half);
      }
      await this.#failpoint('append:after-write');
    } catch (error) {
      return this.#rollBack(id, writer, start, error, false);
    }
    if (this.#options.fsync) {
      try {
        await writer.handle.datasync();
      } catch (error) {
        return this.#rollBack(id, writer, start, error, true);
      }
    }
    writer.size = start + buffer.length;
    writer.nextSeq += count;
    await this.#failpoint('append:after-fsync');
  }

  /**
   * Undoes a failed append: truncates the file back to where the batch began, so no partial
   * bytes remain, and throws. A failed fsync (of the batch or of the rollback) poisons the
   * session (see the module documentation).
   */
  async #rollBack(
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
      if (this.#options.fsync) await writer.handle.datasync();
    } catch (rollbackError) {
      cause = new AggregateError(
        [error, rollbackError],
        'the append failed, then rolling it back failed too',
      );
      poison = true;
    }
    await this.drop(id);
    if (poison) this.#poisoned.set(id, cause);
    throw new StorageError(
      `append to session '${shortId(id)}' failed${cause === error ? `; the log was rolled back to ${start} bytes` : ''}`,
      { cause },
    );
  }

  async #datasync(id: string, handle: FsFileHandle): Promise<void> {
    if (!this.#options.fsync) return;
    try {
      await handle.datasync();
    } catch (error) {
      this.#poisoned.set(id, error);
      throw error;
    }
  }

  /** Checks that `offset` ends the header line or a commit marker of `committedSeq` events. */
  async #checkCommitBoundary(
    handle: FsFileHandle,
    file: string,
    offset: number,
    committedSeq: number,
  ): Promise<void> {
    const first = await readFirstLine(handle, file, this.#options.maxLineBytes);
    if (first !== undefined) {
      const count =
        offset === first.end
          ? 0
          : offset > first.end
            ? await commitBefore(handle, offset, first.end)
            : undefined;
      if (count === committedSeq) return;
    }
    throw new InvalidArgumentError(
      `the torn tail passed for ${file} does not start where a committed batch of ${committedSeq} events ends; load the session again`,
    );
  }

  /** Closes the least recently used idle writers beyond the limit. */
  async #trim(): Promise<void> {
    for (const id of [...this.#writers.keys()]) {
      if (this.#writers.size <= this.#maxOpen) return;
      if (!this.#busy.has(id)) await this.drop(id);
    }
  }

  async #syncDirectory(directory: string): Promise<void> {
    if (this.#options.fsync) await syncDirectory(this.#options.fs, directory);
  }

  async #failpoint(name: JsonlFailpoint): Promise<void> {
    if (this.#options.failpoint !== undefined) await this.#options.failpoint(name);
  }
}
