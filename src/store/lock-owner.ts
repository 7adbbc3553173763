/**
 * Identity and liveness of lock owners, shared by the file and database locks. A lock records
 * who took it (pid, host, the process's start time and the kernel boot id); a later opener on
 * the same host can then tell a live holder from one that was killed, even if the pid has since
 * been reused by another process.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { LockOwner } from './errors.js';

/** The owner record for a lock taken now by this process. */
export function currentOwner(): LockOwner {
  const start = processStartTicks(process.pid);
  const boot = bootId();
  return {
    pid: process.pid,
    host: hostname(),
    since: Date.now(),
    token: randomUUID(),
    ...(start === undefined ? {} : { processStart: start }),
    ...(boot === undefined ? {} : { bootId: boot }),
  };
}

/**
 * Whether the owner may still be running. Owners on other hosts are assumed alive (their
 * liveness cannot be checked from here); on this host a dead pid, a different boot or a pid now
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
  const { pid, host, since, token, processStart, bootId: boot } = record;
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
  };
}

/**
 * The owner a stored lock record names, if it may still be running: a record that is not one
 * (damaged, foreign) or whose owner is gone leaves the lock stale.
 */
export function liveOwnerOf(
  json: string,
  alive: (owner: LockOwner) => boolean = isOwnerAlive,
): LockOwner | undefined {
  let owner: LockOwner | undefined;
  try {
    owner = parseOwner(JSON.parse(json));
  } catch {
    return undefined;
  }
  return owner !== undefined && alive(owner) ? owner : undefined;
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
