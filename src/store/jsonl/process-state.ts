/**
 * State shared by every JSONL store of this process: the per-file operation queues and the
 * writer locks the process holds. Two store instances on one directory (or two copies of this
 * module, loaded twice by a bundler) must still never interleave writes to one file, so the state
 * lives on `globalThis` under a registered symbol, keyed by the directory's device and inode
 * (and birth time) rather than its path string (a symlinked path names the same files).
 */
import type { LockOwner } from '../contract/errors.js';

/** A writer lock this process holds. */
export interface HeldLock {
  readonly owner: LockOwner;
  /** Taken for one append or delete only, not by `lock()`. */
  readonly transient: boolean;
}

interface ProcessState {
  readonly queues: Map<string, Promise<void>>;
  readonly held: Map<string, HeldLock>;
}

const STATE_KEY = Symbol.for('palimpsest.store.jsonl.process-state.v1');

function state(): ProcessState {
  const holder = globalThis as { [STATE_KEY]?: ProcessState };
  holder[STATE_KEY] ??= { queues: new Map(), held: new Map() };
  return holder[STATE_KEY];
}

/**
 * Runs `operation` after every operation queued earlier under `key` has settled, so operations
 * on one file never interleave within this process (appends of two store instances included).
 */
export function serialized<T>(key: string, operation: () => Promise<T>): Promise<T> {
  const queues = state().queues;
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(operation);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** The lock this process holds on `key`, if any. */
export function heldLock(key: string): HeldLock | undefined {
  return state().held.get(key);
}

/** Records that this process holds the lock on `key`. */
export function recordHeld(key: string, lock: HeldLock): void {
  state().held.set(key, lock);
}

/** Forgets the lock on `key` if it is the one with `token`. */
export function forgetHeld(key: string, token: string): void {
  const held = state().held;
  if (held.get(key)?.owner.token === token) held.delete(key);
}
