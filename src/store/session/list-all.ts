/**
 * Every session of a store, page by page: what `ls`, `verify --all` and the viewer's session list
 * read.
 */
import type { DamagedSession, SessionStore, SessionSummary } from '../contract/session-store.js';

/** Every session of a store, and every one it found damaged, following the list's cursor. */
export async function everySession(
  store: SessionStore,
  options: { readonly parentSession?: string } = {},
): Promise<{ sessions: SessionSummary[]; damaged: DamagedSession[] }> {
  const sessions: SessionSummary[] = [];
  const damaged: DamagedSession[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(cursor === undefined ? { ...options } : { ...options, cursor });
    sessions.push(...page.sessions);
    damaged.push(...(page.damaged ?? []));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { sessions, damaged };
}
