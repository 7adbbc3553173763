/**
 * Retention over a live store: the candidates a plan ranks (read from the listing, sizes measured
 * where the store does not know them), and the plan applied session by session, each deleted or
 * moved to an archive store whole or not at all.
 */
import { isElidedChunkData } from '../../core/elided.js';
import { PalimpsestError } from '../../core/index.js';
import { LockedError, NotFoundError } from '../contract/errors.js';
import type { LoadedSession } from '../contract/loaded-session.js';
import type { DamagedSession, SessionStore } from '../contract/session-store.js';
import { EncryptedStore } from '../encryption/store.js';
import { everySession } from './list-all.js';
import { moveSession } from './move.js';
import type { PlannedRemoval, RetentionCandidate, RetentionPlan } from './retention.js';

/** Options of {@link retentionCandidates}. */
export interface CandidateOptions {
  /**
   * Measure the sessions whose size the store does not report (a database store) by reading
   * them: the bytes their events take as JSON, with finished chunks counted from their stubs.
   * Only a size policy needs it. Default `false` (such sessions count 0 bytes).
   */
  readonly measure?: boolean;
}

/** Every session of the store as a {@link RetentionCandidate}, and those it found damaged. */
export async function retentionCandidates(
  store: SessionStore,
  options: CandidateOptions = {},
): Promise<{ candidates: RetentionCandidate[]; damaged: DamagedSession[] }> {
  const { sessions, damaged } = await everySession(store);
  const candidates: RetentionCandidate[] = [];
  for (const { header, updatedAt, sizeBytes } of sessions) {
    const size = sizeBytes ?? (options.measure === true ? await measure(store, header.id) : 0);
    // Deleted since the listing: nothing left to plan.
    if (size === undefined) continue;
    candidates.push({
      id: header.id,
      ...(header.parentSession === undefined ? {} : { parentSession: header.parentSession }),
      lastActivity: updatedAt ?? header.createdAt,
      sizeBytes: size,
    });
  }
  return { candidates, damaged };
}

/**
 * The JSON bytes of a session's header and events as stored (an encrypted session's sealed
 * form, read without its key, so a shredded one is measured too), with finished chunks as
 * stubs; `undefined` for a session deleted since the listing.
 */
async function measure(store: SessionStore, id: string): Promise<number | undefined> {
  const stored = store instanceof EncryptedStore ? store.inner : store;
  let loaded: LoadedSession;
  try {
    loaded = await stored.load(id, { elideFinishedChunks: true });
  } catch (error) {
    if (NotFoundError.isInstance(error)) return undefined;
    throw error;
  }
  let bytes = Buffer.byteLength(JSON.stringify(loaded.header));
  for (const event of loaded.events) {
    bytes += isElidedChunkData(event.data)
      ? event.data.elided.bytes
      : Buffer.byteLength(JSON.stringify(event));
  }
  return bytes;
}

/** What {@link applyRetention} does with each session the plan removes. */
export type RetentionAction =
  | { readonly kind: 'delete' }
  /** Moves each session to `archive` (a `jsonl:` archive directory's store, typically). */
  | { readonly kind: 'archive'; readonly archive: SessionStore };

/** A session {@link applyRetention} left in place, and why. */
export interface RetentionSkip {
  readonly id: string;
  /** The error's code: `LOCKED` (a live writer holds it), `NOT_FOUND` (gone already), or other. */
  readonly code: string;
  readonly message: string;
}

/** What {@link applyRetention} did. */
export interface RetentionOutcome {
  /** Sessions removed (deleted or archived), oldest first. */
  readonly removed: readonly PlannedRemoval[];
  /** Sessions held by a live writer, or deleted meanwhile: left alone, as they were. */
  readonly skipped: readonly RetentionSkip[];
  /** Sessions whose removal failed otherwise; each is whole where it was (or in the archive). */
  readonly failed: readonly RetentionSkip[];
}

/**
 * Removes the sessions of `plan` from `store`, oldest first: each is deleted, or moved to the
 * archive store ({@link moveSession}), whole or not at all. A session a live writer holds is
 * skipped and reported, as is one deleted meanwhile; any other failure is reported in `failed`
 * and the next session is tried.
 *
 * @example
 * ```ts
 * import { applyRetention, MemoryStore, planRetention, retentionCandidates } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * await store.create({ version: 1, id: 'a', createdAt: 1 });
 * await store.create({ version: 1, id: 'b', createdAt: 2 });
 * const { candidates } = await retentionCandidates(store);
 * const plan = planRetention(candidates, { keep: 0 }, Date.now());
 * const outcome = await applyRetention(store, plan, { kind: 'delete' });
 * console.log(outcome.removed.length); // 2
 * console.log((await store.list()).sessions.length); // 0
 * ```
 */
export async function applyRetention(
  store: SessionStore,
  plan: RetentionPlan,
  action: RetentionAction,
): Promise<RetentionOutcome> {
  const removed: PlannedRemoval[] = [];
  const skipped: RetentionSkip[] = [];
  const failed: RetentionSkip[] = [];
  for (const session of plan.remove) {
    try {
      if (action.kind === 'delete') {
        // The store's delete takes the session out of any search index it keeps.
        await store.delete(session.id);
      } else await moveSession(store, session.id, action.archive);
      removed.push(session);
    } catch (error) {
      const skip = {
        id: session.id,
        code: PalimpsestError.isInstance(error) ? error.code : 'ERROR',
        message: error instanceof Error ? error.message : String(error),
      };
      if (LockedError.isInstance(error) || NotFoundError.isInstance(error)) skipped.push(skip);
      else failed.push(skip);
    }
  }
  return { removed, skipped, failed };
}
