/**
 * The options of the JSONL store: what a caller may set, the failpoints crash and fault tests
 * hook into, and the checked, defaulted form the store and its writer run with.
 */
import { InvalidArgumentError } from '../../core/index.js';
import type { LockOwner } from '../contract/errors.js';
import type { LockClock } from '../contract/lock-clock.js';
import { isOwnerAlive, type LockTiming, resolveLockTiming } from '../contract/lock-owner.js';
import { DEFAULT_MAX_LINE_BYTES } from './format.js';
import { type FsFacade, nodeFs } from './fs.js';

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
  'replace:after-temp-write',
  'replace:after-temp-fsync',
  'replace:after-rename',
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
  /**
   * Open for reading only (default `false`): the directory is not created, no lock or temporary
   * file is ever made, and every write is refused with `InvalidStoreError`.
   */
  readonly readOnly?: boolean;
  /** How long to wait for another process's in-flight append to release the lock (default 2000 ms). */
  readonly lockWaitMs?: number;
  /**
   * Whether a lock owner on this host may still be running (default: pid, process start time and
   * boot id). A power-loss simulation that "crashes" inside one process replaces it.
   */
  readonly isOwnerAlive?: (owner: LockOwner) => boolean;
  /** How often a held lock's file is refreshed (its mtime), ms (default 5000). */
  readonly lockHeartbeatMs?: number;
  /**
   * A lock whose owner runs on another host is stale, and taken over, once its file was not
   * refreshed for this long, ms (default 30000; at least twice `lockHeartbeatMs`).
   */
  readonly lockStaleMs?: number;
  /**
   * The clock of locks and heartbeats (default: the machine's clock and timers): when a lock was
   * taken, the mtime a heartbeat writes and when it fires, when another host's lock is stale, and
   * how long a writer waits for a lock. A test moves it by hand instead of waiting.
   */
  readonly lockClock?: LockClock;
  /**
   * Called by `delete` after it removed a session's log, with the session's id, before the
   * delete resolves. `openStore` passes one that takes the session out of the search index file
   * beside the logs. Without one, `delete` removes that file whole (it is a cache, built again
   * by the next search), so no word of a deleted session outlives its log on disk.
   */
  readonly onSessionDeleted?: (id: string) => Promise<void>;
}

/** The options as the store runs with them. */
export interface ResolvedOptions {
  readonly maxLineBytes: number;
  readonly fsync: boolean;
  readonly fs: FsFacade;
  readonly failpoint: ((name: JsonlFailpoint) => void | Promise<void>) | undefined;
  readonly lockWaitMs: number;
  readonly ownerAlive: (owner: LockOwner) => boolean;
  readonly lockTiming: LockTiming;
  readonly readOnly: boolean;
  readonly onSessionDeleted: ((id: string) => Promise<void>) | undefined;
}

/** Smallest accepted `maxLineBytes`: a header and a commit marker must fit. */
const MIN_LINE_BYTES = 64;

/** Checks and defaults the options; `InvalidArgumentError` for a bad one. */
export function resolveOptions(options: JsonlStoreOptions): ResolvedOptions {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < MIN_LINE_BYTES) {
    throw new InvalidArgumentError(
      `maxLineBytes must be an integer of at least ${MIN_LINE_BYTES}, found ${String(maxLineBytes)}`,
    );
  }
  const lockWaitMs = options.lockWaitMs ?? 2000;
  if (!Number.isFinite(lockWaitMs) || lockWaitMs < 0) {
    throw new InvalidArgumentError(
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
    lockTiming: resolveLockTiming(options),
    readOnly: options.readOnly === true,
    onSessionDeleted: options.onSessionDeleted,
  };
}
