/**
 * A session's cost with everything that hangs off it in its store: its forks and the subagent
 * sessions its tool calls ran in, each priced, rolled up without counting a fork's copied prefix
 * twice.
 */
import { isEventOfType, type Session } from '../core/index.js';
import {
  type CostTotals,
  type SessionCost,
  type SessionCostOptions,
  sessionCost,
} from '../model/index.js';
import { inspectSession, type SessionStore } from '../store/index.js';
import { everySession } from '../store/session/list-all.js';

/** A session's cost, its children's, and their sum. */
export interface CostTree {
  readonly cost: SessionCost;
  /** How it hangs off its parent (absent at the root). */
  readonly link?: 'fork' | 'subagent';
  readonly children: readonly CostTree[];
  /** Its own calls (a fork's inherited prefix left out) and its children's, summed. */
  readonly rolledUp: {
    readonly calls: number;
    readonly unpricedCalls: number;
    readonly cost: number;
  };
  /** Children named by the log that could not be read (deleted, damaged): not in `rolledUp`. */
  readonly unreadable: readonly string[];
}

/**
 * Prices session `id` of `store` and, under it, every fork (`header.parentSession`) and every
 * subagent session its tool calls ran in (`tool/call.child`), recursively, each once.
 *
 * @example
 * ```ts
 * import { costTree, runTurn } from 'palimpsest/agent';
 * import { MemoryStore, openSession } from 'palimpsest/store';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const store = new MemoryStore();
 * const session = await openSession(store, 'parent');
 * await runTurn({ session, model: scriptedModel([{ text: 'Hi.' }]), input: 'Hello' });
 * await session.close();
 * const tree = await costTree(store, 'parent');
 * console.log(tree.rolledUp.calls); // 1
 * ```
 */
export async function costTree(
  store: SessionStore,
  id: string,
  options: SessionCostOptions = {},
): Promise<CostTree> {
  return priceTree(store, await inspectSession(store, id), options, new Set());
}

async function priceTree(
  store: SessionStore,
  session: Session,
  options: SessionCostOptions,
  seen: Set<string>,
  link?: CostTree['link'],
): Promise<CostTree> {
  const id = session.header.id;
  seen.add(id);
  const cost = sessionCost(session, options);
  const forks = (await everySession(store, { parentSession: id })).sessions.map((s) => s.header.id);
  const children: CostTree[] = [];
  const unreadable: string[] = [];
  // Subagents first: a fork copies the calls that ran them, and they hang under the session
  // that ran them, not under its fork.
  for (const [childId, childLink] of [
    ...subagentSessions(session).map((child) => [child, 'subagent'] as const),
    ...forks.map((fork) => [fork, 'fork'] as const),
  ]) {
    if (seen.has(childId)) continue;
    let child: Session;
    try {
      child = await inspectSession(store, childId);
    } catch {
      unreadable.push(childId);
      continue;
    }
    children.push(await priceTree(store, child, options, seen, childLink));
  }
  const own = link === 'fork' ? minus(cost.total, cost.inherited) : cost.total;
  const rolledUp = children.reduce(
    (sum, child) => ({
      calls: sum.calls + child.rolledUp.calls,
      unpricedCalls: sum.unpricedCalls + child.rolledUp.unpricedCalls,
      cost: sum.cost + child.rolledUp.cost,
    }),
    { calls: own.calls, unpricedCalls: own.unpricedCalls, cost: own.cost.total },
  );
  return { cost, ...(link === undefined ? {} : { link }), children, rolledUp, unreadable };
}

function subagentSessions(session: Session): string[] {
  const ids = new Set<string>();
  for (let seq = 0; seq < session.seq; seq++) {
    if (session.eventType(seq) !== 'tool/call') continue;
    const event = session.event(seq);
    if (
      event !== undefined &&
      isEventOfType(event, 'tool/call') &&
      event.data.child !== undefined
    ) {
      ids.add(event.data.child.session);
    }
  }
  return [...ids];
}

function minus(a: CostTotals, b: CostTotals): CostTotals {
  return {
    calls: a.calls - b.calls,
    unpricedCalls: a.unpricedCalls - b.unpricedCalls,
    tokens: a.tokens,
    cost: { ...a.cost, total: a.cost.total - b.cost.total },
  };
}
