/**
 * Identity and liveness of lock owners, and the rule that decides whether a lock is stale,
 * shared by every backend's lock (a file, a row, a lease). A lock records who took it (pid,
 * host, the process's start time and the kernel boot id) and how often it is refreshed:
 *
 * - an owner on this host is judged at once by its process: a dead pid, a reused pid or another
 *   boot means it is gone, whatever its heartbeat says; a lock a process took and no longer holds
 *   (its release failed, say on a full disk) is gone too, to that same process;
 * - an owner on another host cannot be checked from here: it is live while it refreshes the lock
 *   (its heartbeat), and stale once the lock was not refreshed for {@link LOCK_STALE_MS}.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { InvalidArgumentError } from '../../core/index.js';
import type { LockHolderState, LockOwner } from './errors.js';
import { type LockClock, systemLockClock } from './lock-clock.js';

/** How often a live writer refreshes its lock by default, ms. */
export const LOCK_HEARTBEAT_MS = 5_000;
/**
 * A lock whose owner runs on another host is stale once it was not refreshed for this long, ms
 * (six missed heartbeats: a writer stalled by a slow disk or a busy database is not taken over).
 */
export const LOCK_STALE_MS = 30_000;

/**
 * How often a writer refreshes its locks, when another host's lock is stale, and the clock both
 * are measured by.
 */
export interface LockTiming {
  readonly heartbeatMs: number;
  readonly staleMs: number;
  readonly clock: LockClock;
}

/** The default {@link LockTiming}. */
export const DEFAULT_LOCK_TIMING: LockTiming = {
  heartbeatMs: LOCK_HEARTBEAT_MS,
  staleMs: LOCK_STALE_MS,
  clock: systemLockClock,
};

/**
 * Checks lock timing options (`lockHeartbeatMs`, `lockStaleMs`) and fills in the defaults. The
 * stale bound must leave room for at least two heartbeats, so one late refresh never loses a
 * live writer its lock.
 */
export function resolveLockTiming(options: {
  readonly lockHeartbeatMs?: number | undefined;
  readonly lockStaleMs?: number | undefined;
  readonly lockClock?: LockClock | undefined;
}): LockTiming {
  const heartbeatMs = options.lockHeartbeatMs ?? LOCK_HEARTBEAT_MS;
  const staleMs = options.lockStaleMs ?? LOCK_STALE_MS;
  if (!Number.isSafeInteger(heartbeatMs) || heartbeatMs < 1) {
    throw new InvalidArgumentError(
      `lockHeartbeatMs must be a positive integer, found ${String(heartbeatMs)}`,
    );
  }
  if (!Number.isSafeInteger(staleMs) || staleMs < 2 * heartbeatMs) {
    throw new InvalidArgumentError(
      `lockStaleMs must be an integer of at least twice lockHeartbeatMs (${2 * heartbeatMs}), found ${String(staleMs)}`,
    );
  }
  return { heartbeatMs, staleMs, clock: options.lockClock ?? systemLockClock };
}

/**
 * The owner record for a lock taken now by this process. Its token is registered as held by
 * this process until {@link forgetToken}, before the lock is published: a concurrent reader in
 * this process must never judge a lock being taken here as one this process has lost.
 */
export function currentOwner(heartbeatMs?: number, now: number = Date.now()): LockOwner {
  const start = processStartTicks(process.pid);
  const boot = bootId();
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    since: now,
    token: randomUUID(),
    ...(start === undefined ? {} : { processStart: start }),
    ...(boot === undefined ? {} : { bootId: boot }),
    ...(heartbeatMs === undefined ? {} : { heartbeatMs }),
  };
  heldTokens().add(owner.token);
  return owner;
}

/** Marks a lock of this process as no longer held (released, or never published). */
export function forgetToken(token: string): void {
  heldTokens().delete(token);
}

const TOKENS_KEY = Symbol.for('palimpsest.store.lock-tokens.v1');

/**
 * The tokens of the locks this process holds, on `globalThis`: shared by every store instance
 * and by every copy of this module a bundler may load.
 */
function heldTokens(): Set<string> {
  const holder = globalThis as { [TOKENS_KEY]?: Set<string> };
  holder[TOKENS_KEY] ??= new Set();
  return holder[TOKENS_KEY];
}

/**
 * Whether a lock must be respected, by the rule of this module's documentation: the holder's
 * state when it must, `undefined` when the lock is stale and may be taken over.
 *
 * @param refreshedAt when the lock was last refreshed (a file's mtime, a row's heartbeat field).
 * @param alive the liveness check of owners on this host (replaceable for crash simulations).
 * @param now the time the lock is judged at (the store's {@link LockClock}).
 */
export function judgeHolder(
  owner: LockOwner,
  refreshedAt: number,
  staleMs: number,
  alive: (owner: LockOwner) => boolean = isOwnerAlive,
  now: number = Date.now(),
): LockHolderState | undefined {
  const last = Math.max(refreshedAt, owner.since);
  if (owner.host === hostname()) {
    if (isOrphanOfThisProcess(owner) || !alive(owner)) return undefined;
    return { basis: 'running', refreshedAt: last, staleMs, judgedAt: now };
  }
  return now - last > staleMs
    ? undefined
    : { basis: 'fresh', refreshedAt: last, staleMs, judgedAt: now };
}

/** A lock this very process took and no longer holds: nothing will ever release it. */
function isOrphanOfThisProcess(owner: LockOwner): boolean {
  if (owner.pid !== process.pid || heldTokens().has(owner.token)) return false;
  const start = processStartTicks(process.pid);
  return owner.processStart === undefined || start === undefined || owner.processStart === start;
}

/**
 * Whether the owner may still be running, by its process. Owners on other hosts are assumed
 * alive (their liveness cannot be checked from here: {@link judgeHolder} asks their heartbeat
 * instead); on this host a dead pid, a different boot or a pid now
 * used by a process that started at another time means the owner is gone.
 */
export function isOwnerAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  const boot = bootId();
  if (owner.bootId !== undefined && boot !== undefined && owner.bootId !== boot) return false;
  if (!pidExists(owner.pid)) return false;
  if (owner.processStart !== undefined) {
    const start = processStartTicks(owner.pid);
    if (start !== undefined && start !== owner.processStart) return false;
  }
  return true;
}

/** Parses a stored owner record; `undefined` when it is not one. */
export function parseOwner(value: unknown): LockOwner | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const { pid, host, since, token, processStart, bootId: boot, heartbeatMs } = record;
  if (
    typeof pid !== 'number' ||
    !Number.isSafeInteger(pid) ||
    typeof host !== 'string' ||
    typeof since !== 'number' ||
    typeof token !== 'string'
  ) {
    return undefined;
  }
  return {
    pid,
    host,
    since,
    token,
    ...(typeof processStart === 'number' ? { processStart } : {}),
    ...(typeof boot === 'string' ? { bootId: boot } : {}),
    ...(typeof heartbeatMs === 'number' ? { heartbeatMs } : {}),
  };
}

/** Parses a stored owner record's JSON; `undefined` when it is not one (damaged, foreign). */
export function parseOwnerJson(json: string): LockOwner | undefined {
  try {
    return parseOwner(JSON.parse(json));
  } catch {
    return undefined;
  }
}

function pidExists(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the pid exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), on Linux. */
function processStartTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

let cachedBootId: string | null | undefined;

function bootId(): string | undefined {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId ?? undefined;
}
