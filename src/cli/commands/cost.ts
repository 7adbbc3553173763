/**
 * `palimpsest cost ID…`: what sessions cost, by turn, by model or by surface entry (token rent),
 * rolled up over their forks and subagent children; and the price table `ls` and `cost` use.
 */
import { readFile } from 'node:fs/promises';
import {
  type CostTotals,
  checkPriceTable,
  DEFAULT_PRICES,
  type PriceTable,
  type SessionCost,
  sessionCost,
} from '../../agent/index.js';
import { isEventOfType, type Session } from '../../core/index.js';
import { inspectSession, type SessionStore } from '../../store/index.js';
import { everySession } from '../../store/session/list-all.js';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { safeLine, table } from '../terminal.js';

/** The `--by` views of `palimpsest cost`. */
const VIEWS = ['session', 'turn', 'model', 'entry'] as const;
type View = (typeof VIEWS)[number];

/** The price table of `--prices FILE` (a JSON price table), else the shipped one. */
export async function priceTableOption(file: string | undefined): Promise<PriceTable> {
  if (file === undefined) return DEFAULT_PRICES;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CliError(
      `--prices: cannot read ${safeLine(file, 200)} (${String(code)})`,
      EXIT.notFound,
    );
  }
  try {
    return checkPriceTable(JSON.parse(text));
  } catch (error) {
    throw new CliError(
      `--prices: ${safeLine(file, 200)} is not a price table: ${safeLine((error as Error).message, 300)}`,
      EXIT.invalid,
    );
  }
}

/** A session's cost, and those of the forks and subagent children under it. */
interface CostTree {
  readonly cost: SessionCost;
  readonly children: readonly CostTree[];
  /** How it hangs off its parent. */
  readonly link?: 'fork' | 'subagent';
}

/** `palimpsest cost ID… [--by session|turn|model|entry] [--prices FILE]` (`--json`: the library's figures). */
export async function costCommand(
  context: CliContext,
  ids: readonly string[],
  options: { by?: string; prices?: string },
): Promise<number> {
  const view = (options.by ?? 'session') as View;
  if (!VIEWS.includes(view)) {
    throw new CliError(
      `--by expects one of ${VIEWS.join(', ')}, found ${safeLine(String(options.by), 40)}`,
      EXIT.usage,
    );
  }
  const prices = await priceTableOption(options.prices);
  const trees = await context.withReader(async (store) => {
    const out: CostTree[] = [];
    for (const id of ids)
      out.push(await costTree(store, await inspectSession(store, id), prices, new Set()));
    return out;
  });
  const calls = trees.reduce((sum, tree) => sum + rolledUp(tree).calls, 0);
  if (context.json) {
    context.terminal.json(trees.map(treeJson));
  } else {
    for (const tree of trees) printTree(context, tree, view);
  }
  if (calls === 0) {
    context.terminal.note('no model call reported usage: there is nothing to price');
    return EXIT.unchanged;
  }
  return EXIT.ok;
}

/** The session and, under it, its forks and the child sessions its tool calls ran in. */
async function costTree(
  store: SessionStore,
  session: Session,
  prices: PriceTable,
  seen: Set<string>,
  link?: CostTree['link'],
): Promise<CostTree> {
  const id = session.header.id;
  seen.add(id);
  const cost = sessionCost(session, { prices });
  const children: CostTree[] = [];
  const forks = (await everySession(store, { parentSession: id })).sessions.map((s) => s.header.id);
  const subagents = childSessions(session);
  for (const [childId, childLink] of [
    ...forks.map((fork) => [fork, 'fork'] as const),
    ...subagents.map((child) => [child, 'subagent'] as const),
  ]) {
    if (seen.has(childId)) continue;
    let child: Session;
    try {
      child = await inspectSession(store, childId);
    } catch {
      continue; // A child that cannot be read is not priced; its parent still is.
    }
    children.push(await costTree(store, child, prices, seen, childLink));
  }
  return { cost, children, ...(link === undefined ? {} : { link }) };
}

function childSessions(session: Session): string[] {
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

/** A tree's own calls plus its children's, a fork's inherited prefix left out. */
function rolledUp(tree: CostTree): { calls: number; amount: number; unpriced: number } {
  const own = tree.link === 'fork' ? minus(tree.cost.total, tree.cost.inherited) : tree.cost.total;
  return tree.children.map(rolledUp).reduce(
    (sum, child) => ({
      calls: sum.calls + child.calls,
      amount: sum.amount + child.amount,
      unpriced: sum.unpriced + child.unpriced,
    }),
    { calls: own.calls, amount: own.cost.total, unpriced: own.unpricedCalls },
  );
}

function minus(a: CostTotals, b: CostTotals): CostTotals {
  return {
    calls: a.calls - b.calls,
    unpricedCalls: a.unpricedCalls - b.unpricedCalls,
    tokens: a.tokens,
    cost: { ...a.cost, total: a.cost.total - b.cost.total },
  };
}

function treeJson(tree: CostTree): unknown {
  const total = rolledUp(tree);
  return {
    ...tree.cost,
    ...(tree.link === undefined ? {} : { link: tree.link }),
    rolledUp: { calls: total.calls, unpricedCalls: total.unpriced, cost: total.amount },
    children: tree.children.map(treeJson),
  };
}

function printTree(context: CliContext, tree: CostTree, view: View, depth = 0): void {
  const { cost } = tree;
  const out = context.terminal.out;
  const indent = '  '.repeat(depth);
  const total = rolledUp(tree);
  const kind = tree.link === undefined ? 'session' : tree.link;
  out.write(
    `${indent}${kind} ${safeLine(cost.sessionId, 120)}: ${amount(cost.total, cost.currency)} over ${cost.total.calls} call(s)` +
      (tree.link === 'fork' && cost.inherited.calls > 0
        ? ` (${cost.inherited.calls} inherited from its parent, not counted again)`
        : '') +
      (tree.children.length === 0
        ? ''
        : `; with its ${tree.children.length} child session(s): ${money(total.amount, cost.currency)}`) +
      '\n',
  );
  if (depth === 0) printView(context, cost, view);
  if (cost.unpricedModels.length > 0) {
    context.terminal.note(
      `no price for ${cost.unpricedModels.map((m) => safeLine(m, 80)).join(', ')}: their ${cost.total.unpricedCalls} call(s) are not in the amounts (pass --prices FILE)`,
    );
  }
  for (const child of tree.children) printTree(context, child, view, depth + 1);
}

function printView(context: CliContext, cost: SessionCost, view: View): void {
  const out = context.terminal.out;
  const c = (value: number) => money(value, cost.currency);
  const kinds = (totals: CostTotals) => [
    count(totals.tokens.input),
    count(totals.tokens.cacheRead),
    count(totals.tokens.cacheWrite),
    count(totals.tokens.output),
    amount(totals, cost.currency),
  ];
  const head = ['INPUT', 'CACHE READ', 'CACHE WRITE', 'OUTPUT', 'COST'];
  if (view === 'session') {
    out.write(
      `${table(
        ['', ...head],
        [
          ['total', ...kinds(cost.total)],
          ['compaction', ...kinds(cost.compaction)],
        ],
      )}\n`,
    );
  } else if (view === 'turn') {
    out.write(
      `${table(
        ['TURN', 'CALLS', ...head],
        cost.turns.map((t) => [String(t.turn), String(t.calls), ...kinds(t)]),
      )}\n`,
    );
  } else if (view === 'model') {
    const rows = Object.entries(cost.byModel).map(([model, t]) => [
      safeLine(model, 60),
      String(t.calls),
      ...kinds(t),
    ]);
    out.write(`${table(['MODEL', 'CALLS', ...head], rows)}\n`);
  } else {
    const rows = cost.rent.entries
      .slice(0, 20)
      .map((entry) => [
        String(entry.seq),
        entry.onSurface ? 'yes' : 'no',
        String(entry.calls),
        count(Math.round(entry.input + entry.cacheRead + entry.cacheWrite)),
        c(entry.cost),
        safeLine(entry.label, 70),
      ]);
    out.write(`${table(['SEQ', 'ON SURFACE', 'CALLS', 'INPUT TOKENS', 'RENT', 'ENTRY'], rows)}\n`);
    const saved = cost.rewrites.filter((rewrite) => rewrite.calls > 0);
    for (const rewrite of saved) {
      out.write(
        `${rewrite.cause} at #${rewrite.seq} saved ${count(Math.round(rewrite.savedTokens))} input tokens (${c(rewrite.savedCost)}) over the ${rewrite.calls} call(s) after it\n`,
      );
    }
    out.write("Rent spreads each call's reported input over its request by estimated tokens.\n");
  }
}

/** Totals' amount: `unpriced` when no call of them had rates, `+?` when some had none. */
function amount(totals: CostTotals, currency: string): string {
  if (totals.calls > 0 && totals.unpricedCalls === totals.calls) return 'unpriced';
  return `${money(totals.cost.total, currency)}${totals.unpricedCalls > 0 ? ' +?' : ''}`;
}

/** An amount with enough digits to tell small calls apart. */
export function money(amount: number, currency: string): string {
  const digits = amount !== 0 && Math.abs(amount) < 0.01 ? 6 : 4;
  return `${amount.toFixed(digits)} ${currency}`;
}

function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
