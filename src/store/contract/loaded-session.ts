/**
 * How a backend hands over a load it built as an {@link ElidedLog}: with the compact log for
 * sessions to seed from, and `events` built from it only when someone reads them.
 */

import { ElidedLog } from '../../core/elided-log.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';

import type { LoadedSession } from './session-store.js';

/** What a load may carry besides its header and events. */
export type LoadExtras = Pick<LoadedSession, 'tornTail' | 'damage'>;

/**
 * The loaded session of `log`. A load without holes gets a plain `events` array; one with holes
 * (elided chunks, held deltas) keeps `log`, and its `events` are built on first read, once.
 */
export function loadedSession(
  header: SessionHeader,
  log: ElidedLog,
  extras: LoadExtras = {},
): LoadedSession {
  const present: LoadExtras = {
    ...(extras.tornTail === undefined ? {} : { tornTail: extras.tornTail }),
    ...(extras.damage === undefined ? {} : { damage: extras.damage }),
  };
  if (log.holeCount === 0) return { header, events: log.toEvents(), ...present };
  let events: SessionEvent[] | undefined;
  return {
    header,
    log,
    get events(): SessionEvent[] {
      events ??= log.toEvents();
      return events;
    },
    ...present,
  };
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
