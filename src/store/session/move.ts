/**
 * Moving a session from one store to another without a moment where a crash could lose it:
 * what archive (to a `jsonl:` archive directory) and restore (back) are. The copy is written and
 * made durable in the target, read back and compared event by event, and only then is the
 * session deleted from the source. A move a crash interrupted is finished by running it again.
 */
import {
  InvalidArgumentError,
  type JsonValue,
  jsonEqual,
  type SessionEvent,
} from '../../core/index.js';
import { checkJson } from '../../core/json.js';
import {
  AlreadyExistsError,
  LockedError,
  NotFoundError,
  StorageError,
} from '../contract/errors.js';
import type { LoadedSession } from '../contract/loaded-session.js';
import type { SessionLock, SessionStore } from '../contract/session-store.js';
import { EncryptedStore } from '../encryption/store.js';

/** Options of {@link moveSession}. */
export interface MoveOptions {
  /** Events per append to the target (default 1000). */
  readonly batchSize?: number;
}

/** What {@link moveSession} did. */
export interface MoveReport {
  readonly id: string;
  /** Events moved. */
  readonly events: number;
  /**
   * Events the target already held from a move a crash interrupted (0 for a fresh move); the
   * move appended only the rest.
   */
  readonly resumed: number;
}

/**
 * Moves session `id` from store `from` to store `to`: holds the session's writer lock in both,
 * copies the header and every committed event (a torn final batch is not acknowledged data and
 * is not copied), reads the copy back and compares it with the original, releases the locks,
 * and deletes the session from `from`. A crash at any point leaves the session whole in `from`,
 * in `to`, or in both; running the move again finishes it (a partial copy in `to` is completed,
 * a whole one only checked). Archive is a move into a `jsonl:` archive store, restore the move
 * back.
 *
 * An `EncryptedStore` on either side is moved through the store it wraps: the sealed payloads
 * move as they are and the session's key stays in its vault, so the archived copy reads with the
 * same keys (deleting through the encrypted store would shred the key the copy needs).
 *
 * Rejects with `InvalidArgumentError` when `to` is `from`, `LockedError` when a live writer holds the session (nothing is copied, or, when
 * the writer took it between the copy and the delete, the copy is removed again), `NotFoundError`
 * when `from` has no such session, `AlreadyExistsError` when `to` holds a different session of
 * that id (neither is touched), and `StorageError` when the copy does not read back as written
 * (the original stays).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { MemoryStore, moveSession } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * const archive = new MemoryStore();
 * const session = Session.create({ id: 'old' });
 * session.append('turn/start', { turn: 1 });
 * await store.create(session.header);
 * await store.append('old', session.events, { expectedSeq: 0 });
 * const report = await moveSession(store, 'old', archive);
 * console.log(report.events); // 1
 * console.log((await store.list()).sessions.length); // 0
 * console.log((await archive.load('old')).events[0]?.type); // 'turn/start'
 * ```
 */
export async function moveSession(
  from: SessionStore,
  id: string,
  to: SessionStore,
  options: MoveOptions = {},
): Promise<MoveReport> {
  if (from instanceof EncryptedStore) return moveSession(from.inner, id, to, options);
  if (to instanceof EncryptedStore) return moveSession(from, id, to.inner, options);
  const batchSize = options.batchSize ?? 1000;
  if (from === to) {
    throw new InvalidArgumentError(
      `expected a target store other than the source, found ${to.location} as both`,
    );
  }
  let report: MoveReport;
  const fromLock = await from.lock(id);
  try {
    const source = await from.load(id);
    const toLock = await to.lock(id);
    try {
      const resumed = await copyInto(to, source, toLock, batchSize);
      await checkCopy(to, source);
      report = { id, events: source.events.length, resumed };
    } finally {
      await toLock.release();
    }
  } finally {
    await fromLock.release();
  }
  try {
    await from.delete(id);
  } catch (error) {
    // A writer took the session between the copy and the delete: it may append, so the copy is
    // no longer the session; it goes, and the session stays where it was.
    if (LockedError.isInstance(error)) await to.delete(id);
    throw error;
  }
  return report;
}

/** Writes what `to` lacks of `source`; returns how many events it held already. */
async function copyInto(
  to: SessionStore,
  source: LoadedSession,
  lock: SessionLock,
  batchSize: number,
): Promise<number> {
  const { header, events } = source;
  const existing = await loadIfPresent(to, header.id);
  let start = 0;
  if (existing === undefined) {
    await to.create(header);
  } else {
    if (existing.tornTail !== undefined) {
      await to.discardTornTail(header.id, existing.tornTail, lock);
    }
    if (!sameHeader(existing, source) || !isPrefix(existing.events, events)) {
      throw new AlreadyExistsError(header.id, to.location);
    }
    start = existing.events.length;
  }
  for (let at = start; at < events.length; at += batchSize) {
    await to.append(header.id, events.slice(at, at + batchSize), { expectedSeq: at });
  }
  return start;
}

/** Reads the copy back and compares it with the original, header and every event. */
async function checkCopy(to: SessionStore, source: LoadedSession): Promise<void> {
  const copy = await to.load(source.header.id);
  const same =
    sameHeader(copy, source) &&
    copy.events.length === source.events.length &&
    isPrefix(copy.events, source.events);
  if (!same) {
    throw new StorageError(`move session '${source.header.id.slice(0, 80)}' to ${to.location}`, {
      cause: new Error(
        `the copy reads back as ${copy.events.length} event(s) that differ from the ${source.events.length} written; the session was left in place`,
      ),
    });
  }
}

async function loadIfPresent(store: SessionStore, id: string): Promise<LoadedSession | undefined> {
  try {
    return await store.load(id);
  } catch (error) {
    if (NotFoundError.isInstance(error)) return undefined;
    throw error;
  }
}

function sameHeader(a: LoadedSession, b: LoadedSession): boolean {
  return jsonEqual(checkJson(a.header), checkJson(b.header));
}

/** Whether every event of `prefix` equals the event of `events` at its place. */
function isPrefix(prefix: readonly SessionEvent[], events: readonly SessionEvent[]): boolean {
  if (prefix.length > events.length) return false;
  return prefix.every((event, i) => sameEvent(event, events[i] as SessionEvent));
}

function sameEvent(a: SessionEvent, b: SessionEvent): boolean {
  return (
    a.seq === b.seq &&
    a.time === b.time &&
    a.type === b.type &&
    jsonEqual(a.data as JsonValue, b.data as JsonValue) &&
    jsonEqual(envelope(a.surfaceOp), envelope(b.surfaceOp)) &&
    jsonEqual(envelope(a.sourceEventSeqs), envelope(b.sourceEventSeqs))
  );
}

/** An optional envelope field as JSON (`null` when absent). */
function envelope(value: unknown): JsonValue {
  return value === undefined ? null : checkJson(value);
}
