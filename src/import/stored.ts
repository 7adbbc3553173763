/**
 * What the store holds that an import decides by: a session's events (to compare a re-import
 * with), and a fork's parent (to link a child file to).
 */
import type { SessionEvent, SessionHeader } from '../core/index.js';
import { NotFoundError, type SessionStore } from '../store/index.js';
import { everySession } from '../store/session/list-all.js';
import { type LinkResult, linkFork, type ParentCandidate } from './link.js';
import type { ForkSource, ImportedSession } from './source.js';

/**
 * Links a child file's sessions to its parent's import as the store holds it (a parent of the
 * same run is written first). A child the store already holds keeps what it was: a fork is
 * rebuilt with the same parent and seed length; one stored unlinked stays unlinked, since its
 * log cannot be rewritten.
 */
export async function linkInStore(
  store: SessionStore,
  sessions: readonly ImportedSession[],
  fork: ForkSource,
): Promise<LinkResult> {
  const id = (sessions[0] as ImportedSession).header.id;
  const stored = await storedHeader(store, id);
  const parent = stored?.parentSession;
  if (stored !== undefined && parent !== undefined && stored.seedLength !== undefined) {
    const events = await storedEvents(store, parent);
    return linkFork(sessions, fork, events === undefined ? [] : [{ id: parent, events }], {
      parent,
      seedLength: stored.seedLength,
    });
  }
  const candidates: ParentCandidate[] = [];
  const main = await storedEvents(store, fork.parent);
  if (main !== undefined) candidates.push({ id: fork.parent, events: main });
  // The copy may follow a branch the parent's file left, imported as `<parent>~<leaf>`.
  const { sessions: children } = await everySession(store, { parentSession: fork.parent });
  for (const { header } of children) {
    if (!header.id.startsWith(`${fork.parent}~`)) continue;
    const events = await storedEvents(store, header.id);
    if (events !== undefined) candidates.push({ id: header.id, events });
  }
  const result = linkFork(sessions, fork, candidates);
  if (stored === undefined || !result.linked) return result;
  return {
    linked: false,
    reason: 'earlier',
    detail: `'${id}' is in the store without a parent, imported before '${result.parent}' was`,
  };
}

async function storedHeader(store: SessionStore, id: string): Promise<SessionHeader | undefined> {
  return (await unlessMissing(store.summarize(id)))?.header;
}

/** The events the store holds for `id`, or `undefined` when it holds no such session. */
export async function storedEvents(
  store: SessionStore,
  id: string,
): Promise<readonly SessionEvent[] | undefined> {
  return (await unlessMissing(store.load(id)))?.events;
}

/** What `read` gives, or `undefined` when the store has no such session. */
async function unlessMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (NotFoundError.isInstance(error)) return undefined;
    throw error;
  }
}
