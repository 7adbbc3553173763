/**
 * The file-system facade of the JSONL backend. Every file operation the backend performs goes
 * through this small interface, so tests can inject faults (a failing fdatasync, a short write,
 * ENOSPC) and a power-loss simulator can keep durable and volatile images of each file; the
 * production code has no test switches. The helpers below are the backend's few compound file
 * operations over it.
 */

import {
  fdatasync,
  constants as fsConstants,
  write as fsWrite,
  lstatSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as fsp from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { NotFoundError, UnsafeFileError } from '../contract/errors.js';

/** The subset of `fs.Stats` the backend reads. Node's `Stats` satisfies it. */
export interface FsStats {
  readonly size: number;
  /** Last modification, epoch ms (may be fractional). */
  readonly mtimeMs: number;
  readonly dev: number;
  readonly ino: number;
  /**
   * Creation, epoch ms, where the file system records it (0 or absent where it does not): tells
   * a directory from an earlier one, since deleted, whose inode number it reuses.
   */
  readonly birthtimeMs?: number;
  /** Type and permission bits. */
  readonly mode: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

/**
 * Flags the backend opens files with: `'r'` read-only (also directories, to fsync them), `'r+'`
 * read-write without creating (positional appends; `'a'` is never used because Linux ignores
 * the position of writes to files opened for appending), `'wx'` create exclusively.
 */
export type FsOpenFlags = 'r' | 'r+' | 'wx';

/** An open file. Errors are Node-style, with an errno `code` such as `'ENOENT'`. */
export interface FsFileHandle {
  /** Reads up to `length` bytes at `position` into `buffer[offset..]`; resolves to bytes read. */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /** Writes `buffer[offset..offset+length]` at `position`; resolves to bytes written (may be short). */
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  stat(): Promise<FsStats>;
  truncate(length: number): Promise<void>;
  /** `fdatasync(2)`: the data and the metadata needed to read it back (the size) are durable. */
  datasync(): Promise<void>;
  /** `fsync(2)`; used on directories, to make their entries durable. */
  sync(): Promise<void>;
  chmod(mode: number): Promise<void>;
  /**
   * Sets the file's access and modification times (`futimens(2)`), epoch ms: how a writer
   * refreshes its lock. A facade without it cannot heartbeat, and its locks say so.
   */
  touch?(timeMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The failure of an operation on a temporary file, told as a failure on the file it stands
 * for: the temp name means nothing to a reader (and is gone by the time they look), the
 * session's log or lock file does. The original error is the `cause`.
 */
export function asFailureOn(error: unknown, temp: string, file: string): unknown {
  if (!(error instanceof Error) || !error.message.includes(temp)) return error;
  const renamed = new Error(error.message.split(temp).join(file), { cause: error });
  const code = errnoCode(error);
  return code === undefined ? renamed : Object.assign(renamed, { code });
}

/**
 * What is at a path that `link()` found taken, when it is not a regular file: a dangling
 * symbolic link (the name exists, nothing is behind it) or something else unsafe. `undefined`
 * for a regular file (a session or lock that exists), and for an entry removed since the link
 * found it (a lock released in between: the caller tries again).
 */
export async function unsafeEntry(
  fs: FsFacade,
  path: string,
): Promise<UnsafeFileError | undefined> {
  try {
    const stats = await fs.stat(path);
    if (stats.isFile()) return undefined;
    return new UnsafeFileError(
      path,
      stats.isDirectory() ? 'a directory' : 'something other than a regular file',
    );
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') {
      // Nothing behind the name: a dangling link if the name is still listed, else it is gone.
      const names = await fs.readdir(dirname(path)).catch(() => undefined);
      if (names !== undefined && !names.includes(basename(path))) return undefined;
      return new UnsafeFileError(path, 'a symbolic link that points to nothing');
    }
    return undefined;
  }
}

/** The file operations of the JSONL backend. Errors are Node-style, with an errno `code`. */
export interface FsFacade {
  open(path: string, flags: FsOpenFlags, mode?: number): Promise<FsFileHandle>;
  /** Creates `newPath` as a hard link; fails with `EEXIST` instead of replacing anything. */
  link(existingPath: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(oldPath: string, newPath: string): Promise<void>;
  /** Creates the directory and any missing parents with `mode`; an existing directory is fine. */
  mkdir(path: string, mode: number): Promise<void>;
  /** Names of the entries of a directory. */
  readdir(path: string): Promise<string[]>;
  stat(path: string): Promise<FsStats>;
}

/** The largest write made synchronously (see `NodeFileHandle.write`). */
const SYNC_WRITE_BYTES = 256 * 1024;

class NodeFileHandle implements FsFileHandle {
  constructor(private readonly handle: FileHandle) {}

  async read(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ): Promise<number> {
    return (await this.handle.read(buffer, offset, length, position)).bytesRead;
  }

  // Writes and data syncs sit on every append's path. A batch of a turn (tens of KiB) is copied
  // into the page cache in about 13 µs, while a round trip through libuv's thread pool costs
  // about 80 µs on the benchmark machine: such writes are made synchronously. Larger ones go to
  // the pool (the callback API on the raw descriptor, which skips the promise API's per-call
  // bookkeeping), so a big import never holds the event loop for long.
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    if (length <= SYNC_WRITE_BYTES) {
      try {
        return Promise.resolve(writeSync(this.handle.fd, buffer, offset, length, position));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise((resolve, reject) => {
      fsWrite(this.handle.fd, buffer, offset, length, position, (error, written) =>
        error === null ? resolve(written) : reject(error),
      );
    });
  }

  stat(): Promise<FsStats> {
    return this.handle.stat();
  }

  touch(timeMs: number): Promise<void> {
    const time = timeMs / 1000;
    return this.handle.utimes(time, time);
  }

  truncate(length: number): Promise<void> {
    return this.handle.truncate(length);
  }

  datasync(): Promise<void> {
    return new Promise((resolve, reject) => {
      fdatasync(this.handle.fd, (error) => (error === null ? resolve() : reject(error)));
    });
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  chmod(mode: number): Promise<void> {
    return this.handle.chmod(mode);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

// Opening never blocks (O_NONBLOCK: a FIFO opens at once, and is then refused by its type), and
// a path that is written is never followed (O_NOFOLLOW: a log swapped for a symbolic link would
// otherwise receive appends wherever it points). O_NONBLOCK does nothing to regular files.
const OPEN_FLAGS: Record<FsOpenFlags, number> = {
  r: fsConstants.O_RDONLY | fsConstants.O_NONBLOCK,
  'r+': fsConstants.O_RDWR | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK,
  wx: fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW,
};

/**
 * The real file system (`node:fs/promises`). Only regular files (and, read-only, directories:
 * the store's own, to fsync it) are opened; anything else is an `UnsafeFileError`.
 */
export const nodeFs: FsFacade = {
  async open(path, flags, mode) {
    let handle: FileHandle;
    try {
      handle = await fsp.open(path, OPEN_FLAGS[flags], mode);
    } catch (error) {
      if (errnoCode(error) === 'ELOOP') throw new UnsafeFileError(path, 'a symbolic link');
      throw error;
    }
    try {
      const stats = await handle.stat();
      if (!(stats.isFile() || (flags === 'r' && stats.isDirectory()))) {
        throw new UnsafeFileError(path, kindOf(stats));
      }
      // Read-only opens follow links so that a store directory may be one; a file may not.
      if (stats.isFile() && flags === 'r' && lstatSync(path).isSymbolicLink()) {
        throw new UnsafeFileError(path, 'a symbolic link');
      }
      return new NodeFileHandle(handle);
    } catch (error) {
      await handle.close();
      throw error;
    }
  },
  link: (existingPath, newPath) => fsp.link(existingPath, newPath),
  unlink: (path) => fsp.unlink(path),
  rename: (oldPath, newPath) => fsp.rename(oldPath, newPath),
  async mkdir(path, mode) {
    await fsp.mkdir(path, { recursive: true, mode });
  },
  readdir: (path) => fsp.readdir(path),
  // A path stat answers from the kernel's inode and dentry caches in microseconds; done
  // synchronously it saves every append a round trip through libuv's thread pool, which costs
  // more than the call itself.
  stat: async (path) => statSync(path),
};

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a directory';
  return 'something other than a regular file';
}

/** The errno code of a Node-style error, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** Writes `length` bytes of `buffer` from `offset` at `position`, looping on short writes. */
export async function writeAll(
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

/** Removes a temp file that may be gone already (or was never linked); nothing to report. */
export async function unlinkQuietly(fs: FsFacade, file: string): Promise<void> {
  try {
    await fs.unlink(file);
  } catch {
    // See above.
  }
}

/** Makes the entries of `directory` durable (after a link or an unlink). */
export async function syncDirectory(fs: FsFacade, directory: string): Promise<void> {
  const handle = await fs.open(directory, 'r');
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

/** Opens the log of session `id`; a missing file is the session's `NotFoundError`. */
export async function openExisting(
  fs: FsFacade,
  location: string,
  id: string,
  file: string,
  flags: 'r' | 'r+',
): Promise<FsFileHandle> {
  let handle: FsFileHandle;
  try {
    handle = await fs.open(file, flags);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw new NotFoundError(id, location);
    throw error;
  }
  // A read-only open admits a directory (the store's own, for fsync); a session's log is a file.
  const stats = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!stats.isFile()) {
    await handle.close();
    throw new UnsafeFileError(
      file,
      stats.isDirectory() ? 'a directory' : 'something other than a regular file',
    );
  }
  return handle;
}

/** Stats the log of session `id`; a missing file is the session's `NotFoundError`. */
export async function statExisting(
  fs: FsFacade,
  location: string,
  id: string,
  file: string,
): Promise<FsStats> {
  try {
    return await fs.stat(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw new NotFoundError(id, location);
    throw error;
  }
}
