/**
 * Fork: a new session that starts from a prefix of another.
 */
import { markAdmittedLog } from './admission.js';
import { isElidedChunk } from './elided.js';
import { describeValue, ForkError, truncate } from './errors.js';
import type { SessionEvent } from './events.js';
import { SESSION_FORMAT_VERSION, type SessionHeader } from './header.js';
import { randomId } from './host.js';
import { intField } from './read-data.js';
import { Session } from './session.js';

/** Options of {@link forkSession}. */
export interface ForkOptions {
  /** The child's id; a random UUID by default. */
  readonly id?: string;
  /** The child's clock (for `createdAt` and its appends); `Date.now` by default. */
  readonly clock?: () => number;
  /**
   * `refuse` (default): a boundary inside a turn is an `OPEN_TURN` error. `continue`: the child
   * ends inside that turn, for a caller that goes on at once with the turn's next step and its
   * `turn/end` (a child left open reads as a crashed session, and repair would close it).
   */
  readonly openTurn?: 'refuse' | 'continue';
}

/**
 * Creates a session seeded with `events[0..boundarySeq]` of `session` (inclusive; the whole log
 * by default). The child's header records `parentSession` and `seedLength`, and keeps the
 * parent's metadata and limits. The prefix goes through seed validation (contiguity and every
 * surface rule); events the parent already admitted are shared, frozen, rather than copied.
 *
 * @throws ForkError `INVALID_BOUNDARY` when the boundary is not the seq of an event of the
 *   session, `OPEN_TURN` when the prefix would end inside a turn that has not ended,
 *   `ELIDED_CHUNKS` when the prefix holds elided chunks (the session was loaded without the
 *   bodies of its finished chunks, which the child would have to store).
 */
export function forkSession(
  session: Session,
  boundarySeq?: number,
  options: ForkOptions = {},
): Session {
  const events = session.events;
  const boundary = boundarySeq ?? events.length - 1;
  if (
    !Number.isSafeInteger(boundary) ||
    boundary < -1 ||
    boundary >= events.length ||
    (boundary === -1 && boundarySeq !== undefined)
  ) {
    throw new ForkError(
      'INVALID_BOUNDARY',
      events.length === 0
        ? `fork boundary ${describeValue(boundarySeq)} is not an event of session '${session.id}', which is empty; omit the boundary to fork it`
        : `fork boundary must be the seq of an event of session '${session.id}' (0..${events.length - 1}), found ${describeValue(boundarySeq)}`,
      typeof boundarySeq === 'number' ? boundarySeq : undefined,
    );
  }
  // Still a log of admitted events, so the child skips their admission.
  const prefix = markAdmittedLog(events.slice(0, boundary + 1));
  const open = openTurnAtEnd(prefix);
  if (open !== undefined && options.openTurn !== 'continue') {
    throw new ForkError(
      'OPEN_TURN',
      `fork boundary seq ${boundary} ends inside turn ${open.turn}, opened at seq ${open.seq} and not ended by then; fork at a seq before that turn/start or after its turn/end`,
      boundary,
    );
  }
  if (session.elidedChunkCount > 0) {
    const stub = prefix.find(isElidedChunk);
    if (stub !== undefined) {
      throw new ForkError(
        'ELIDED_CHUNKS',
        `fork prefix up to seq ${boundary} holds elided assistant/chunk events (the first at seq ${stub.seq}) whose bodies were not loaded, so the child could not store them; load session '${truncate(session.id, 60)}' with its chunks in full to fork it`,
        boundary,
      );
    }
  }
  const clock = options.clock ?? Date.now;
  const id = options.id;
  const header: SessionHeader = {
    version: SESSION_FORMAT_VERSION,
    id: id ?? randomId(),
    createdAt: clock(),
    parentSession: session.id,
    seedLength: prefix.length,
    ...(session.header.metadata === undefined ? {} : { metadata: session.header.metadata }),
  };
  return Session.create({
    ...(id === undefined ? {} : { id }),
    header,
    seed: prefix,
    clock,
    limits: session.limits,
  });
}

function openTurnAtEnd(
  events: readonly SessionEvent[],
): { turn: number | string; seq: number } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as SessionEvent;
    if (event.type === 'turn/end') return undefined;
    if (event.type === 'turn/start')
      return { turn: intField(event, 'turn') ?? '?', seq: event.seq };
  }
  return undefined;
}
