/**
 * Salvage: the intact prefix of a damaged session, copied into a new session a writer can go on
 * with. The damaged log is left exactly as it is, for a restore from backup or a closer look.
 */
import {
  SESSION_FORMAT_VERSION,
  Session,
  type SessionEvent,
  type SessionHeader,
  SessionValidationError,
} from '../../core/index.js';
import type { CorruptLogError } from '../contract/errors.js';
import type { SessionStore } from '../contract/session-store.js';
import { openSession } from './open-session.js';

/** Options of {@link salvageSession}. */
export interface SalvageOptions {
  /** The new session's id; a random UUID by default. */
  readonly id?: string;
  /** The clock of the new session (`createdAt`, repair events); `Date.now` by default. */
  readonly clock?: () => number;
}

/** What {@link salvageSession} found and did. */
export type SalvageResult =
  | {
      /** The log has no damage a load reports: nothing was created (fork it to copy it). */
      readonly kind: 'intact';
      readonly events: number;
    }
  | {
      /**
       * The damage is in the first batch after the header: no event is intact, nothing was
       * created.
       */
      readonly kind: 'nothing-intact';
      readonly damage: CorruptLogError;
    }
  | {
      readonly kind: 'salvaged';
      /** The new session, a fork of the damaged one at its intact prefix. */
      readonly id: string;
      /** Events copied: the acknowledged events before the damage. */
      readonly events: number;
      /** Events repair appended to the copy to close a turn the prefix ends inside. */
      readonly repairedEvents: number;
      /** What a plain load of the damaged session rejects with. */
      readonly damage: CorruptLogError;
    };

/**
 * Copies the intact prefix of a damaged session (the acknowledged events before the first damage,
 * each checked as a load checks it) into a new session whose header names the damaged one as its
 * parent, and repairs the copy as a writer's open would (a turn the prefix ends inside is closed).
 * The damaged session is not changed. A session without damage is left alone (`kind: 'intact'`),
 * and so is one whose first batch is damaged (`kind: 'nothing-intact'`): nothing is created.
 *
 * @example
 * ```ts
 * import { MemoryStore, salvageSession } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * await store.create({ version: 1, id: 'notes', createdAt: 0 });
 * const result = await salvageSession(store, 'notes');
 * console.log(result.kind); // 'intact'
 * ```
 *
 * @throws NotFoundError when there is no such session; CorruptLogError when the damage leaves
 *   nothing to read (a damaged header); AlreadyExistsError when `options.id` is taken.
 */
export async function salvageSession(
  store: SessionStore,
  id: string,
  options: SalvageOptions = {},
): Promise<SalvageResult> {
  const loaded = await store.load(id, { salvage: true });
  if (loaded.damage === undefined) return { kind: 'intact', events: loaded.events.length };
  const events = seedablePrefix(loaded.header, loaded.events);
  if (events.length === 0) return { kind: 'nothing-intact', damage: loaded.damage };
  const clock = options.clock ?? Date.now;
  const header: SessionHeader = {
    version: SESSION_FORMAT_VERSION,
    id: options.id ?? globalThis.crypto.randomUUID(),
    createdAt: clock(),
    parentSession: id,
    seedLength: events.length,
    ...(loaded.header.metadata === undefined ? {} : { metadata: loaded.header.metadata }),
  };
  await store.create(header);
  await store.append(header.id, events, { expectedSeq: 0 });
  const session = await openSession(store, header.id, { create: false, clock });
  const { repairedEvents } = session.openReport;
  await session.close();
  return {
    kind: 'salvaged',
    id: header.id,
    events: events.length,
    repairedEvents,
    damage: loaded.damage,
  };
}

/**
 * The longest prefix of `events` that seeds a session. The store checked every event's bytes;
 * this also holds the copy to the surface rules, which a log damaged in a way its checksums
 * cannot see (an event rewritten with a fresh checksum) could break. Validation stops at the first
 * event that breaks a rule, so one cut there is enough.
 */
function seedablePrefix(
  header: SessionHeader,
  events: readonly SessionEvent[],
): readonly SessionEvent[] {
  try {
    Session.create({ header, seed: events });
    return events;
  } catch (error) {
    if (!(error instanceof SessionValidationError) || error.seq === undefined) throw error;
    return events.slice(0, error.seq);
  }
}
