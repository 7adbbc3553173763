/**
 * The session a store's `load` returns: one log, read as events.
 */

import { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import type { CorruptLogError } from './errors.js';
import type { TornTail } from './session-store.js';

/** What a load may carry besides its header and its events. */
export interface LoadExtras {
  /** See {@link LoadedSession.tornTail}. */
  readonly tornTail?: TornTail | undefined;
  /** See {@link LoadedSession.damage}. */
  readonly damage?: CorruptLogError | undefined;
}

/**
 * A session as stored, as `SessionStore.load` returns it. Its events are held once, in
 * {@link LoadedSession.log}; {@link LoadedSession.events} is a view of that log, so the two
 * never disagree. It is built only by its factories, never as an object literal: a backend
 * hands over the log it loaded with {@link LoadedSession.fromLog} (or plain events with
 * {@link LoadedSession.fromEvents}), and a store that wraps another and changes the events
 * it loaded builds a new one from its events, which replaces the log a session seeds from too.
 *
 * The events are fresh objects the caller owns, built as `JSON.parse` builds values (plain
 * objects and arrays, enumerable data properties only), so a session may adopt them with
 * `seedMode: 'parsed'`; stubs of elided chunks hold the shared marker of `elidedChunkData`.
 *
 * @example
 * ```ts
 * import type { SessionHeader } from 'palimpsest';
 * import { ElidedLog } from 'palimpsest/backend';
 * import { LoadedSession } from 'palimpsest/store';
 *
 * const header: SessionHeader = { version: 1, id: 'notes', createdAt: 0 };
 * const log = new ElidedLog();
 * log.push({ seq: 0, time: 1, type: 'turn/start', data: { turn: 1 } });
 * log.pushElided(2, 57); // a finished chunk, loaded without its body
 * const loaded = LoadedSession.fromLog(header, log);
 * console.log(loaded.events.length); // 2
 *
 * // A store that hides the chunk from its callers hands over a new load, log and all.
 * const filtered = LoadedSession.fromEvents(
 *   header,
 *   loaded.events.filter((event) => event.type !== 'assistant/chunk'),
 * );
 * console.log(filtered.log.length); // 1
 * ```
 */
export class LoadedSession {
  readonly header: SessionHeader;
  /**
   * The events in compact form: each elided chunk, and each text delta of a full load, is a
   * hole, not an object. Sealed: it never changes. Seed a session with it
   * (`Session.create({seed: loaded.log})`) to resume without building an object per chunk, as
   * `openSession` does.
   */
  readonly log: ElidedLog;
  /**
   * Present when the log ends with an incomplete final batch left by a crash. Its events are not
   * in `events`; a writer drops it with `SessionStore.discardTornTail`. Never present for a
   * store that commits each batch atomically (a database).
   */
  declare readonly tornTail?: TornTail;
  /**
   * Present only for a load with `salvage`, when the log is damaged: the error a plain load
   * rejects with. `events` then holds the acknowledged events before the damage (the intact
   * prefix, every one checked as a plain load checks it), and nothing after it.
   */
  declare readonly damage?: CorruptLogError;
  #events: readonly SessionEvent[] | undefined;

  private constructor(header: SessionHeader, log: ElidedLog, extras: LoadExtras) {
    log.seal();
    this.header = header;
    this.log = log;
    if (extras.tornTail !== undefined) this.tornTail = extras.tornTail;
    if (extras.damage !== undefined) this.damage = extras.damage;
  }

  /**
   * The load of `log`, which it seals: the log may not change afterwards.
   *
   * @param extras - a torn tail or salvaged damage the load found (any other field is ignored).
   */
  static fromLog(header: SessionHeader, log: ElidedLog, extras: LoadExtras = {}): LoadedSession {
    return new LoadedSession(header, log, extras);
  }

  /**
   * The load of `events` (in seq order from 0), held in a new log without holes; the array is
   * not kept, the events are.
   *
   * @param extras - a torn tail or salvaged damage the load found (any other field is ignored).
   */
  static fromEvents(
    header: SessionHeader,
    events: readonly SessionEvent[],
    extras: LoadExtras = {},
  ): LoadedSession {
    const log = new ElidedLog(events.length);
    for (const event of events) log.push(event);
    return new LoadedSession(header, log, extras);
  }

  /**
   * The events of {@link LoadedSession.log}, stubs of elided chunks included, in a frozen array
   * built on first read (with an object per chunk the log holds as a hole) and kept.
   */
  get events(): readonly SessionEvent[] {
    this.#events ??= Object.freeze(this.log.toEvents());
    return this.#events;
  }
}

/** Sessions longer than this grow their log as they are read: a recorded length is not trusted. */
const MAX_PREALLOCATED = 1 << 22;

/**
 * A log to load a session into, with room for the length its store recorded (within reason: a
 * damaged or hostile length sizes one allocation at most, and a longer log grows as it is read).
 * Growing a million slots run by run costs tens of milliseconds a load.
 */
export function logSizedFor(recordedLength: number | undefined): ElidedLog {
  const capacity =
    recordedLength !== undefined && Number.isSafeInteger(recordedLength) && recordedLength > 0
      ? Math.min(recordedLength, MAX_PREALLOCATED)
      : 0;
  return new ElidedLog(capacity);
}
