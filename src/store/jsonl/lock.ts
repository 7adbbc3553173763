/**
 * The single-writer lock of a JSONL session: a file `<name>.lock` next to the log, holding the
 * owner record (pid, host, process start time, boot id, random token).
 *
 * - The record is written to a temp file first and published with `link()`, which fails with
 *   `EEXIST` instead of replacing anything: a lock file is never visible half-written, and two
 *   takers can never both succeed.
 * - A holder refreshes its lock file's mtime every `heartbeatMs` (a heartbeat of the store's
 *   `LockClock`, which never keeps the process alive, stopped on release). Every time here (an
 *   owner's `since`, the mtime a heartbeat writes, staleness, the wait for a lock) is that
 *   clock's. A lock is stale by the rule of `lock-owner.ts`: on this host when its process is
 *   gone, from another host when its mtime is older than `staleMs`.
 * - A stale lock is taken over by renaming it to a unique name, then checking the renamed file
 *   is the very lock judged stale. A live taker that slipped in between gets its lock put back.
 * - Appends and deletes by a process that does not hold the lock take it *transiently*, for the
 *   duration of the write. A transient holder is waited for (briefly); a `lock()` holder is not.
 */
import { randomBytes } from 'node:crypto';
import { LockedError, type LockHolderState, type LockOwner } from '../contract/errors.js';
import {
  currentOwner,
  forgetToken,
  judgeHolder,
  type LockTiming,
  parseOwner,
} from '../contract/lock-owner.js';
import {
  asFailureOn,
  errnoCode,
  type FsFacade,
  type FsFileHandle,
  unlinkQuietly,
  unsafeEntry,
  writeAll,
} from './fs.js';
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
  /** Whether a lock owner on this host may still be running. */
  readonly ownerAlive: (owner: LockOwner) => boolean;
  /** How often held locks are refreshed, and when another host's lock is stale. */
  readonly timing: LockTiming;
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
  const { clock } = env.timing;
  const held = heldLock(target.key);
  if (held !== undefined && !held.transient) {
    const now = clock.now();
    throw new LockedError(target.sessionId, held.owner, {
      basis: 'running',
      refreshedAt: now,
      staleMs: env.timing.staleMs,
      judgedAt: now,
    });
  }
  const deadline = clock.now() + options.waitMs;
  let delay = 1;
  let last: LockedError | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const owner = await publish(env, target, options.transient);
    if (owner !== undefined) {
      recordHeld(target.key, { owner, transient: options.transient });
      startHeartbeat(env, target, owner);
      return owner;
    }
    const found = await readLock(env.fs, target.path);
    if (found === undefined) continue; // released in between
    const holder = judgeLock(env, found);
    if (holder === undefined) {
      await takeOver(env, target, found);
      continue;
    }
    last = lockedBy(target, found, holder);
    const waitable = found.owner === undefined || found.transient;
    if (!waitable || clock.now() >= deadline) throw last;
    await clock.sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
  throw last ?? new LockedError(target.sessionId, unknownOwner(clock.now()));
}

/**
 * Whether a lock file must be respected: its holder's state, or `undefined` when it is stale.
 * An unreadable record (a lock being written, or damage) is judged by its age alone.
 */
export function judgeLock(env: LockEnv, found: LockRecord): LockHolderState | undefined {
  const now = env.timing.clock.now();
  if (found.owner === undefined) {
    return now - found.mtimeMs > UNREADABLE_LOCK_STALE_MS
      ? undefined
      : {
          basis: 'fresh',
          refreshedAt: found.mtimeMs,
          staleMs: UNREADABLE_LOCK_STALE_MS,
          judgedAt: now,
        };
  }
  return judgeHolder(found.owner, found.mtimeMs, env.timing.staleMs, env.ownerAlive, now);
}

/** The `LockedError` for a lock file judged live. */
export function lockedBy(
  target: LockTarget,
  found: LockRecord,
  holder: LockHolderState | undefined,
): LockedError {
  return new LockedError(target.sessionId, found.owner ?? unknownOwner(found.mtimeMs), holder);
}

/** What {@link breakLock} removed: the lock as it was, and whether its holder counted as live. */
export interface BrokenLock {
  readonly owner: LockOwner;
  readonly refreshedAt: number;
  readonly wasLive: boolean;
}

/**
 * Removes a session's lock on an operator's request: a stale one always; a live one (its owner
 * runs on this host, or its heartbeat is fresh) only with `force`, else `LockedError`.
 * `undefined` when there is no lock.
 */
export async function breakLock(
  env: LockEnv,
  target: LockTarget,
  force: boolean,
): Promise<BrokenLock | undefined> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = await readLock(env.fs, target.path);
    if (found === undefined) return undefined;
    const holder = judgeLock(env, found);
    if (holder !== undefined && !force) throw lockedBy(target, found, holder);
    if (await takeOver(env, target, found)) {
      // A lock of this very process, forced: it no longer holds the session.
      const token = found.owner?.token;
      if (token !== undefined && heldLock(target.key)?.owner.token === token) {
        forgetHeld(target.key, token);
        stopHeartbeat(token);
        forgetToken(token);
      }
      return {
        owner: found.owner ?? unknownOwner(found.mtimeMs),
        refreshedAt: Math.max(found.mtimeMs, found.owner?.since ?? 0),
        wasLive: holder !== undefined,
      };
    }
  }
  return undefined;
}

/** Removes the lock file if it still holds `token`. Idempotent. */
export async function releaseLock(env: LockEnv, target: LockTarget, token: string): Promise<void> {
  stopHeartbeat(token);
  forgetHeld(target.key, token);
  // From here a lock file that still names this token is an orphan of this process (if the
  // unlink below fails, say on a full disk): a later taker in this process takes it over.
  forgetToken(token);
  const found = await readLock(env.fs, target.path);
  if (found?.owner?.token !== token) return;
  try {
    await env.fs.unlink(target.path);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
}

/**
 * Releases a transient lock without failing the operation it protected: the write is already
 * durable (or already failed with its own error), and a leftover lock of this live process is
 * judged stale once the process exits.
 */
export async function releaseQuietly(
  env: LockEnv,
  target: LockTarget,
  token: string,
): Promise<void> {
  try {
    await releaseLock(env, target, token);
  } catch {
    // See above.
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
    return await readRecord(handle);
  } finally {
    await handle.close();
  }
}

async function readRecord(handle: FsFileHandle): Promise<LockRecord> {
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
}

/**
 * Writes a new owner record to a temp file and links it into place; `undefined` if a lock
 * exists. The record promises a heartbeat only when the file system can refresh the lock.
 */
async function publish(
  env: LockEnv,
  target: LockTarget,
  transient: boolean,
): Promise<LockOwner | undefined> {
  const temp = contained(
    env.directory,
    `.${target.name}.lock.${randomBytes(8).toString('hex')}.tmp`,
  );
  let handle: FsFileHandle;
  try {
    handle = await env.fs.open(temp, 'wx', 0o600);
  } catch (error) {
    throw asFailureOn(error, temp, target.path);
  }
  const owner = currentOwner(
    handle.touch === undefined ? undefined : env.timing.heartbeatMs,
    env.timing.clock.now(),
  );
  let published = false;
  try {
    const record = Buffer.from(
      `${JSON.stringify(transient ? { ...owner, transient } : owner)}\n`,
      'utf8',
    );
    try {
      await handle.chmod(0o600);
      await writeAll(handle, record, 0, record.length, 0);
      // A transient lock matters only while this process runs; a `lock()` record is made
      // durable so that after a power cut its boot id, not the 10 s rule, marks it stale.
      if (!transient && env.fsync) await handle.datasync();
    } finally {
      await handle.close();
    }
    await env.fs.link(temp, target.path);
    published = true;
    return owner;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') {
      // A dangling link where the lock belongs would read as "no lock" forever.
      const unsafe = await unsafeEntry(env.fs, target.path);
      if (unsafe !== undefined) throw unsafe;
      return undefined;
    }
    throw asFailureOn(error, temp, target.path);
  } finally {
    if (!published) forgetToken(owner.token);
    await unlinkQuietly(env.fs, temp);
  }
}

/** How to stop the heartbeat of each lock this module holds, by token. */
const heartbeats = new Map<string, () => void>();
/** Tokens whose lock file a heartbeat found replaced: the lock was taken over or broken. */
const lost = new Set<string>();

/**
 * Refreshes the lock file's mtime every `heartbeatMs` of the store's clock while the lock is
 * held. The clock's heartbeat never keeps a process alive, and it is stopped on release; a
 * refresh that fails is skipped (the next one tries again; same-host openers judge by pid anyway).
 */
function startHeartbeat(env: LockEnv, target: LockTarget, owner: LockOwner): void {
  if (owner.heartbeatMs === undefined) return;
  let running = false;
  const stop = env.timing.clock.every(owner.heartbeatMs, () => {
    if (running) return;
    running = true;
    refresh(env, target, owner.token)
      .catch(() => undefined)
      .finally(() => {
        running = false;
      });
  });
  heartbeats.set(owner.token, stop);
}

function stopHeartbeat(token: string): void {
  heartbeats.get(token)?.();
  heartbeats.delete(token);
  lost.delete(token);
}

/** Touches the lock file if it still holds `token` (checked on the very file touched). */
async function refresh(env: LockEnv, target: LockTarget, token: string): Promise<void> {
  if (!heartbeats.has(token)) return;
  let handle: FsFileHandle;
  try {
    handle = await env.fs.open(target.path, 'r');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') markLost(token);
    throw error;
  }
  try {
    const found = await readRecord(handle);
    if (found.owner?.token !== token) {
      markLost(token);
      return;
    }
    await handle.touch?.(env.timing.clock.now());
  } finally {
    await handle.close();
  }
}

function markLost(token: string): void {
  if (!heartbeats.has(token)) return;
  lost.add(token);
  heartbeats.get(token)?.();
}

/** Whether a heartbeat found the lock with `token` taken over or broken by someone else. */
export function wasLost(token: string): boolean {
  return lost.has(token);
}

/**
 * Removes a stale lock: rename it away under a unique name, then make sure the renamed file is
 * the one judged stale (true once removed). If another taker replaced it in between, its lock
 * is put back (`link` never replaces a newer one) and the session is reported locked.
 */
async function takeOver(env: LockEnv, target: LockTarget, judged: LockRecord): Promise<boolean> {
  const aside = contained(
    env.directory,
    `${target.name}.lock.stale.${randomBytes(8).toString('hex')}`,
  );
  try {
    await env.fs.rename(target.path, aside);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false; // someone else removed it; try again
    throw error;
  }
  const moved = await readLock(env.fs, aside);
  if (moved === undefined) return false; // a concurrent taker already removed it; try again
  if (moved.raw.equals(judged.raw)) {
    await unlinkQuietly(env.fs, aside);
    return true;
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

/** The owner reported for a lock file that holds no readable record. */
function unknownOwner(since: number): LockOwner {
  return { pid: 0, host: 'unknown', since, token: '' };
}
