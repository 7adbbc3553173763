/**
 * Sessions as a tree: a subagent's session under the session whose tool call ran it (its
 * header's `metadata.subagentOf`), a fork under the session it was forked from
 * (`parentSession`). `ls --tree` draws it from headers alone, with usage and cost rolled up over
 * subagents; `show` names a session's children and its parent. Imported subagents (Claude Code)
 * carry the same link as the loop's own, so both hang the same way.
 */
import type { SummaryCost } from '../../agent/index.js';
import {
  isEventOfType,
  type Session,
  type SessionHeader,
  type UsageTotals,
} from '../../core/index.js';
import { subagentField, type TreeLink, treeLinkOf } from '../../core/tree-link.js';
import { inspectSession, NotFoundError, type SessionStore } from '../../store/index.js';
import { timeText } from '../render.js';
import { safeLine, table } from '../terminal.js';

/** What `ls --tree` needs of an `ls` row. */
export interface TreeRow {
  readonly id: string;
  readonly createdAt: number;
  readonly turns: number;
  readonly events: number;
  readonly usage: UsageTotals;
  readonly cost: SummaryCost;
  readonly lastActivity: number;
}

/** A row placed in the tree, with its own usage and that of its subagents below it summed. */
export interface PlacedRow<R extends TreeRow> {
  readonly row: R;
  readonly depth: number;
  readonly link: TreeLink | undefined;
  readonly children: string[];
  total: { usage: UsageTotals; cost: SummaryCost };
}

/** How `ls` writes a row's usage and cost. */
export interface UsageCells {
  used(usage: UsageTotals): string;
  cost(usage: UsageTotals, cost: SummaryCost): string;
}

/** `ls --tree --json`: each row with its tree `parent`, `link`, `children` and `total`. */
export function treeJson<R extends TreeRow>(placed: readonly PlacedRow<R>[]): object[] {
  return placed.map(({ row, link, children, total }) => ({
    ...row,
    parent: link?.parent ?? null,
    link: link?.link ?? null,
    children,
    total,
  }));
}

/**
 * `ls --tree` as a table. USED and COST are a session's own; TOTAL adds its subagents' (a fork's
 * copied prefix would count twice, so forks are not added).
 */
export function treeTable<R extends TreeRow>(
  placed: readonly PlacedRow<R>[],
  cells: UsageCells,
): string {
  return table(
    ['ID', 'TURNS', 'EVENTS', 'USED', 'COST', 'TOTAL', 'LAST ACTIVITY'],
    placed.map(({ row, depth, link, total }) => [
      `${'  '.repeat(depth)}${depth > 0 ? '└ ' : ''}${row.id}${link === undefined ? '' : ` (${link.link}${depth === 0 ? ` of ${link.parent}` : ''})`}`,
      String(row.turns),
      String(row.events),
      cells.used(row.usage),
      cells.cost(row.usage, row.cost),
      cells.cost(total.usage, total.cost),
      timeText(row.lastActivity),
    ]),
  );
}

/**
 * The rows depth first, roots in listing order and children under their parent oldest first; a
 * session whose parent is not listed (deleted, or past `--limit`) is a root that still names it.
 */
export function placeRows<R extends TreeRow>(
  rows: readonly R[],
  headers: ReadonlyMap<string, SessionHeader>,
): PlacedRow<R>[] {
  const listed = new Set(rows.map((row) => row.id));
  const links = new Map<string, TreeLink | undefined>();
  const under = new Map<string, R[]>();
  const roots: R[] = [];
  for (const row of rows) {
    const header = headers.get(row.id);
    const link = header === undefined ? undefined : treeLinkOf(header);
    links.set(row.id, link);
    if (link === undefined || !listed.has(link.parent) || link.parent === row.id) roots.push(row);
    else under.set(link.parent, [...(under.get(link.parent) ?? []), row]);
  }
  const out: PlacedRow<R>[] = [];
  const seen = new Set<string>();
  const visit = (row: R, depth: number): PlacedRow<R> => {
    seen.add(row.id);
    const node: PlacedRow<R> = {
      row,
      depth,
      link: links.get(row.id),
      children: [],
      total: { usage: row.usage, cost: row.cost },
    };
    out.push(node);
    for (const child of under.get(row.id) ?? []) {
      if (seen.has(child.id)) continue;
      node.children.push(child.id);
      const placed = visit(child, depth + 1);
      if (placed.link?.link === 'subagent') {
        node.total = {
          usage: addTotals(node.total.usage, placed.total.usage),
          cost: addCosts(node.total.cost, placed.total.cost),
        };
      }
    }
    return node;
  };
  // Children in the order they were created (a step's calls in call order); roots as listed.
  for (const children of under.values()) {
    children.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  for (const root of roots) visit(root, 0);
  // A cycle of links (only a hand-edited store has one) leaves its rows unvisited: list them.
  for (const row of rows) if (!seen.has(row.id)) visit(row, 0);
  return out;
}

function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  const tokens: Record<string, number> = { ...a.tokens };
  for (const [name, value] of Object.entries(b.tokens)) tokens[name] = (tokens[name] ?? 0) + value;
  return { calls: a.calls + b.calls, tokens };
}

function addCosts(a: SummaryCost, b: SummaryCost): SummaryCost {
  const unpricedModels = [...new Set([...a.unpricedModels, ...b.unpricedModels])];
  // Another currency cannot be added: its models count as unpriced in the sum.
  if (a.currency !== b.currency && b.amount !== 0) {
    return { ...a, unpricedModels: [...unpricedModels, `(${b.currency} amounts)`] };
  }
  return { amount: a.amount + b.amount, currency: a.currency, unpricedModels };
}

/** One child session a session's tool calls ran, as `show` names it. */
export interface ChildSummary {
  readonly callId: string;
  readonly tool: string;
  readonly session: string;
  /** How the child's last turn ended (`completed`, `interrupted`...), `open`, or `missing`. */
  readonly status: string;
}

/** The children named by the `tool/call` events of `session`, each with its own state in `store`. */
export async function childSessions(
  store: SessionStore,
  session: Session,
): Promise<ChildSummary[]> {
  const out: ChildSummary[] = [];
  for (const event of session.events) {
    if (!isEventOfType(event, 'tool/call') || event.data.child === undefined) continue;
    const { callId, name, child } = event.data;
    out.push({
      callId,
      tool: name,
      session: child.session,
      status: await statusOf(store, child.session),
    });
  }
  return out;
}

async function statusOf(store: SessionStore, id: string): Promise<string> {
  let child: Session;
  try {
    child = await inspectSession(store, id, { repair: false, chunks: 'elide' });
  } catch (error) {
    if (NotFoundError.isInstance(error)) return 'missing';
    return `unreadable (${error instanceof Error ? error.message : String(error)})`;
  }
  for (let seq = child.seq - 1; seq >= 0; seq--) {
    const event = child.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'turn/end')) return event.data.reason.kind;
    if (event.type === 'turn/start') return 'open';
  }
  return 'no turn';
}

/** `show`'s lines about the tree: the parent a subagent's session hangs off, and its children. */
export function treeLines(header: SessionHeader, children: readonly ChildSummary[]): string[] {
  const lines: string[] = [];
  const link = treeLinkOf(header);
  if (link?.link === 'subagent') {
    const call = subagentField(header, 'toolCallId');
    lines.push(
      `subagent of ${safeLine(link.parent, 120)}${call === undefined ? '' : ` (call ${safeLine(call, 80)})`}`,
    );
  }
  for (const child of children) {
    lines.push(
      safeLine(
        `subagent ${child.tool} (call ${child.callId}) → ${child.session}: ${child.status}`,
        300,
      ),
    );
  }
  return lines;
}
