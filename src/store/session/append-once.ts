/**
 * An append batch that may be sent again: what a writer does when it cannot know whether its
 * last append committed (its process was killed, the connection dropped at COMMIT, the call
 * timed out).
 */
import { jsonEqual, type SessionEvent } from '../../core/index.js';
import { ConflictError } from '../contract/errors.js';
import type { AppendOptions, SessionStore } from '../contract/session-store.js';

/** What {@link appendOnce} did with the batch. */
export interface AppendOnceResult {
  /**
   * `true` when the store already held this exact batch at these seqs (an earlier send
   * committed it) and nothing was written; `false` when this call appended it.
   */
  readonly repeated: boolean;
}

/**
 * Appends `events` at `options.expectedSeq` once, however many times it is sent. A batch's seqs
 * and content are its identity: a send that finds the store already holding exactly these
 * events at exactly these seqs resolves with `repeated: true` and writes nothing, so a writer
 * that lost the acknowledgement of a committed batch resends it and is told it landed. Any other
 * conflict (another writer's events at those seqs, a store that is behind `expectedSeq`) is the
 * store's `ConflictError`, unchanged. The writer must hold the session's lock, as for
 * {@link SessionStore.append}; after a crash, take the lock and drop a torn tail
 * ({@link SessionStore.discardTornTail}) before resending.
 *
 * The comparison loads the session only when the append conflicts, so the common path costs
 * what `append` costs.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { appendOnce, MemoryStore } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * await store.create({ version: 1, id: 's1', createdAt: 0 });
 * const session = Session.create({ id: 's1' });
 * session.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Ship it.' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * await appendOnce(store, 's1', session.events, { expectedSeq: 0 });
 * // The acknowledgement was lost; the writer sends the batch again.
 * const again = await appendOnce(store, 's1', session.events, { expectedSeq: 0 });
 * console.log(again.repeated); // true
 * console.log((await store.load('s1')).events.length); // 1
 * ```
 */
export async function appendOnce(
  store: SessionStore,
  id: string,
  events: readonly SessionEvent[],
  options: AppendOptions,
): Promise<AppendOnceResult> {
  try {
    await store.append(id, events, options);
    return { repeated: false };
  } catch (error) {
    if (!(error instanceof ConflictError) || events.length === 0) throw error;
    if (error.actualSeq < options.expectedSeq + events.length) throw error;
    const { events: stored } = await store.load(id);
    const start = stored.findIndex((event) => event.seq === options.expectedSeq);
    if (start < 0 || !sameEvents(stored.slice(start, start + events.length), events)) throw error;
    return { repeated: true };
  }
}

function sameEvents(stored: readonly SessionEvent[], sent: readonly SessionEvent[]): boolean {
  return (
    stored.length === sent.length &&
    stored.every((event, index) => jsonEqual(event, sent[index] ?? null))
  );
}
