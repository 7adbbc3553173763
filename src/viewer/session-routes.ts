/**
 * The server's answers for the session panel: what `palimpsest verify` finds of a session, the
 * tree of sessions around it (forks and subagents, from the store's headers), and a session's
 * messages for the branch diff. An HTML export embeds the first two as they were when written.
 */
import { verifyStoredSession } from '../agent/session-verify.js';
import { isSurfaceEligibleType, type SessionHeader } from '../core/index.js';
import { subagentField, treeLinkOf } from '../core/tree-link.js';
import {
  CorruptLogError,
  FormatVersionError,
  NotFoundError,
  requireReadable,
  type SessionStore,
} from '../store/index.js';
import { everySession } from '../store/session/list-all.js';
import {
  type BranchMessages,
  type SessionTree,
  type SessionTreeNode,
  TREE_NODE_LIMIT,
  type VerifyStatus,
} from './protocol.js';

/**
 * Runs `palimpsest verify`'s checks on session `id`, its hash chain included when it has one. A
 * log damaged before its last batch is a failed check; a session that does not exist throws
 * `NotFoundError`.
 */
export async function verifyStatus(store: SessionStore, id: string): Promise<VerifyStatus> {
  const checkedAt = Date.now();
  try {
    const verdict = await verifyStoredSession(store, id, { integrity: 'when-chained' });
    return {
      ok: verdict.ok,
      problems: verdict.problems,
      notes: verdict.notes,
      integrity: verdict.integrity === undefined ? 'none' : 'checked',
      events: verdict.events,
      checkedAt,
    };
  } catch (error) {
    if (!CorruptLogError.isInstance(error) && !FormatVersionError.isInstance(error)) throw error;
    return {
      ok: false,
      problems: [`${error.code}: ${error.message}`],
      notes: [],
      integrity: 'none',
      events: 0,
      checkedAt,
    };
  }
}

/**
 * The tree that holds session `id`, from its topmost ancestor the store still has: forks under
 * the session they were forked from, subagents under the session whose call ran them, children
 * oldest first. Built from the store's listing (headers only).
 */
export async function sessionTree(store: SessionStore, id: string): Promise<SessionTree> {
  const { sessions } = await everySession(store);
  const headers = new Map(sessions.map((summary) => [summary.header.id, summary.header]));
  if (!headers.has(id)) throw new NotFoundError(id, store.location);
  const under = new Map<string, SessionHeader[]>();
  for (const header of headers.values()) {
    const link = treeLinkOf(header);
    if (link === undefined || !headers.has(link.parent) || link.parent === header.id) continue;
    under.set(link.parent, [...(under.get(link.parent) ?? []), header]);
  }
  for (const children of under.values()) {
    children.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  // Up to the topmost ancestor the store holds; a cycle of links (a hand-edited store) stops it.
  let top = headers.get(id) as SessionHeader;
  const climbed = new Set([top.id]);
  for (let link = treeLinkOf(top); link !== undefined; link = treeLinkOf(top)) {
    const parent = headers.get(link.parent);
    if (parent === undefined || climbed.has(parent.id)) break;
    climbed.add(parent.id);
    top = parent;
  }
  const budget = { left: TREE_NODE_LIMIT, omitted: 0 };
  const seen = new Set<string>();
  const node = (header: SessionHeader, root: boolean): SessionTreeNode => {
    seen.add(header.id);
    budget.left--;
    const children: SessionTreeNode[] = [];
    for (const child of under.get(header.id) ?? []) {
      if (seen.has(child.id)) continue;
      if (budget.left <= 0) budget.omitted++;
      else children.push(node(child, false));
    }
    const link = treeLinkOf(header);
    const toolCallId = subagentField(header, 'toolCallId');
    return {
      id: header.id,
      link: root ? null : (link?.link ?? null),
      createdAt: header.createdAt,
      ...(link?.link === 'fork' && header.seedLength !== undefined
        ? { seedLength: header.seedLength }
        : {}),
      ...(link?.link === 'subagent' && toolCallId !== undefined ? { toolCallId } : {}),
      children,
    };
  };
  const parent = treeLinkOf(top)?.parent;
  return {
    root: node(top, true),
    ...(parent !== undefined && !headers.has(parent) ? { missingParent: parent } : {}),
    omitted: budget.omitted,
  };
}

/** Session `id`'s messages (its surface-eligible events, in log order), for the branch diff. */
export async function branchMessages(store: SessionStore, id: string): Promise<BranchMessages> {
  const loaded = await store.load(id, { elideFinishedChunks: true });
  requireReadable(loaded, store.location);
  return {
    header: loaded.header,
    events: loaded.events.filter((event) => isSurfaceEligibleType(event.type)),
  };
}
