/**
 * The single-writer lock of a JSONL session: a file `<name>.lock` next to the log, holding the
 * owner record (pid, host, process start time, boot id, random token).
 *
 * - The record is written to a temp file first and published with `link()`, which fails with
 *   `EEXIST` instead of replacing anything: a lock file is never visible half-written, and two
 *   takers can never both succeed.
 * - A lock whose owner is dead (`kill -9`, a reboot, a reused pid) is taken over by renaming it
 *   to a unique name, then checking the renamed file is the very lock judged stale. A live taker
 *   that slipped in between gets its lock put back.
 * - Appends and deletes by a process that does not hold the lock take it *transiently*, for the
 *   duration of the write. A transient holder is waited for (briefly); a `lock()` holder is not.
 */
import { randomBytes } from 'node:crypto';
import { LockedError, type LockOwner } from '../errors.js';
import { currentOwner, parseOwner } from '../lock-owner.js';
import { errnoCode, type FsFacade, type FsFileHandle } from './fs.js';
import { readFully } from './line-reader.js';
import { contained } from './paths.js';
import { forgetHeld, heldLock, recordHeld } from './process-state.js';

/** An unreadable lock younger than this may be a write in progress; older ones are stale. */
export const UNREADABLE_LOCK_STALE_MS = 10_000;
/** Largest lock record read; owner records are a few hundred bytes. */
const MAX_LOCK_BYTES = 4096;
/** A takeover race makes the loop try again; give up after this many rounds. */
const MAX_ROUNDS = 1000;

/** What the lock functions need from the store. */
export interface LockEnv {
  readonly fs: FsFacade;
  /** The store's directory (absolute). */
  readonly directory: string;
  /** Whether to fsync lock records. */
  readonly fsync: boolean;
  /** Whether a lock owner may still be running. */
  readonly ownerAlive: (owner: LockOwner) => boolean;
}

/** One session's lock file. */
export interface LockTarget {
  readonly sessionId: string;
  /** Encoded id (the file-name stem). */
  readonly name: string;
  /** Absolute path of the lock file. */
  readonly path: string;
  /** Process-wide key of the session's files. */
  readonly key: string;
}

/** A lock file's content as read. */
export interface LockRecord {
  readonly raw: Buffer;
  readonly owner: LockOwner | undefined;
  readonly transient: boolean;
  readonly mtimeMs: number;
}

/**
 * Takes the lock. Waits up to `waitMs` for a transient holder; a dead holder's lock is taken
 * over; a live `lock()` holder gives `LockedError` at once.
 */
export async function acquireLock(
  env: LockEnv,
  target: LockTarget,
  options: { readonly transient: boolean; readonly waitMs: number },
): Promise<LockOwner> {
  const held = heldLock(target.key);
  if (held !== undefined && !held.transient) throw new LockedError(target.sessionId, held.owner);
  const deadline = Date.now() + options.waitMs;
  let delay = 1;
  let last: LockOwner | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const owner = currentOwner();
    if (await publish(env, target, owner, options.transient)) {
      recordHeld(target.key, { owner, transient: options.transient });
      return owner;
    }
    const found = await readLock(env.fs, target.path);
    if (found === undefined) continue; // released in between
    last = found.owner ?? last;
    const stale =
      found.owner === undefined
        ? Date.now() - found.mtimeMs > UNREADABLE_LOCK_STALE_MS
        : !env.ownerAlive(found.owner);
    if (stale) {
      await takeOver(env, target, found);
      continue;
    }
    const waitable = found.owner === undefined || found.transient;
    if (!waitable || Date.now() >= deadline) {
      throw new LockedError(target.sessionId, found.owner ?? unknownOwner(found.mtimeMs));
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
  throw new LockedError(target.sessionId, last ?? unknownOwner(Date.now()));
}

/** Removes the lock file if it still holds `token`. Idempotent. */
export async function releaseLock(env: LockEnv, target: LockTarget, token: string): Promise<void> {
  forgetHeld(target.key, token);
  const found = await readLock(env.fs, target.path);
  if (found?.owner?.token !== token) return;
  try {
    await env.fs.unlink(target.path);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
}

/** Whether the lock file currently holds `token`. */
export async function holdsLock(env: LockEnv, target: LockTarget, token: string): Promise<boolean> {
  const found = await readLock(env.fs, target.path);
  return found?.owner?.token === token;
}

/** Reads a lock file; `undefined` when there is none. */
export async function readLock(fs: FsFacade, path: string): Promise<LockRecord | undefined> {
  let handle: FsFileHandle;
  try {
    handle = await fs.open(path, 'r');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat();
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_LOCK_BYTES));
    const read = await readFully(handle, buffer, 0);
    const raw = buffer.subarray(0, read);
    let value: unknown;
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch {
      value = undefined;
    }
    const transient =
      typeof value === 'object' &&
      value !== null &&
      (value as { transient?: unknown }).transient === true;
    return { raw, owner: parseOwner(value), transient, mtimeMs: stats.mtimeMs };
  } finally {
    await handle.close();
  }
}

/** Writes the owner record to a temp file and links it into place; false if a lock exists. */
async function publish(
  env: LockEnv,
  target: LockTarget,
  owner: LockOwner,
  transient: boolean,
): Promise<boolean> {
  const temp = contained(
    env.directory,
    `.${target.name}.lock.${randomBytes(8).toString('hex')}.tmp`,
  );
  const record = Buffer.from(
    `${JSON.stringify(transient ? { ...owner, transient } : owner)}\n`,
    'utf8',
  );
  const handle = await env.fs.open(temp, 'wx', 0o600);
  try {
    try {
      await handle.chmod(0o600);
      await writeAll(handle, record);
      // A transient lock matters only while this process runs; a `lock()` record is made
      // durable so that after a power cut its boot id, not the 10 s rule, marks it stale.
      if (!transient && env.fsync) await handle.datasync();
    } finally {
      await handle.close();
    }
    await env.fs.link(temp, target.path);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await unlinkQuietly(env.fs, temp);
  }
}

/**
 * Removes a stale lock: rename it away under a unique name, then make sure the renamed file is
 * the one judged stale. If another taker replaced it in between, its lock is put back (`link`
 * never replaces a newer one) and the session is reported locked.
 */
async function takeOver(env: LockEnv, target: LockTarget, judged: LockRecord): Promise<void> {
  const aside = contained(
    env.directory,
    `${target.name}.lock.stale.${randomBytes(8).toString('hex')}`,
  );
  try {
    await env.fs.rename(target.path, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return; // someone else removed it; try again
    throw error;
  }
  const moved = await readLock(env.fs, aside);
  if (moved === undefined) return; // a concurrent taker already removed it; try again
  if (moved.raw.equals(judged.raw)) {
    await unlinkQuietly(env.fs, aside);
    return;
  }
  try {
    await env.fs.link(aside, target.path);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  } finally {
    await unlinkQuietly(env.fs, aside);
  }
  throw new LockedError(target.sessionId, moved.owner ?? unknownOwner(moved.mtimeMs));
}

async function writeAll(handle: FsFileHandle, data: Buffer): Promise<void> {
  let written = 0;
  while (written < data.length) {
    const count = await handle.write(data, written, data.length - written, written);
    if (count <= 0) throw new Error('write made no progress');
    written += count;
  }
}

async function unlinkQuietly(fs: FsFacade, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch {
    // Best effort: a leftover temp file is harmless (list ignores dot files).
  }
}

/** The owner reported for a lock file that holds no readable record. */
function unknownOwner(since: number): LockOwner {
  return { pid: 0, host: 'unknown', since, token: '' };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
