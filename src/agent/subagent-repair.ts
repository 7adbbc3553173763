/**
 * Crash repair across the subagent link. Opening a session repairs it alone: a parent whose
 * worker died mid-subagent gets `TOOL_OUTCOME_UNKNOWN` for the call (naming the child), while the
 * child, written by the same dead worker, still ends inside its turn. A resume of the parent's
 * turn repairs those children too, so both sides of the link say the same thing: interrupted.
 */
import { isEventOfType, type Session, TOOL_OUTCOME_UNKNOWN } from '../core/index.js';
import { LiveSession, LockedError, NotFoundError, openSession } from '../store/index.js';

/**
 * Opens (and so repairs: an open turn closed `interrupted`, durably) every child session that
 * turn `turn` of `session` was running when it was interrupted: the `child` of each of the
 * turn's `TOOL_OUTCOME_UNKNOWN` results. Returns the ids of the children it repaired. A child
 * that was never created (the crash came before it was), or that a live writer holds, is left
 * as it is; so is every child of a session that is not a `LiveSession` (no store to open them
 * in).
 */
export async function repairChildren(session: Session, turn: number): Promise<string[]> {
  if (!(session instanceof LiveSession)) return [];
  const repaired: string[] = [];
  for (const id of interruptedChildren(session, turn)) {
    let child: LiveSession;
    try {
      child = await openSession(session.store, id, { create: false });
    } catch (error) {
      if (NotFoundError.isInstance(error) || LockedError.isInstance(error)) continue;
      throw error;
    }
    await child.close();
    if (child.openReport.repairedEvents > 0) repaired.push(id);
  }
  return repaired;
}

/** The children named by the `TOOL_OUTCOME_UNKNOWN` results of turn `turn`, in log order. */
function interruptedChildren(session: Session, turn: number): string[] {
  const ids: string[] = [];
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'turn/start') && event.data.turn === turn) break;
    if (!isEventOfType(event, 'tool/result') || event.data.turn !== turn) continue;
    const { child, error } = event.data;
    if (child !== undefined && error?.code === TOOL_OUTCOME_UNKNOWN) ids.unshift(child.session);
  }
  return ids;
}
