/**
 * How a backend hands over a load it built as an {@link ElidedLog}: with the compact log for
 * sessions to seed from, and `events` built from it only when someone reads them.
 */
import type { ElidedLog, SessionEvent, SessionHeader } from '../core/index.js';
import type { LoadedSession } from './contract.js';

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
