/**
 * `palimpsest cost ID…`: what sessions cost, by turn, by model or by surface entry (token rent),
 * rolled up over their forks and subagent children; and the price table `ls` and `cost` use.
 */
import { readFile } from 'node:fs/promises';
import {
  type CostTotals,
  type CostTree,
  checkPriceTable,
  costTree,
  DEFAULT_PRICES,
  type PriceTable,
  type SessionCost,
} from '../../agent/index.js';
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
    for (const id of ids) out.push(await costTree(store, id, { prices }));
    return out;
  });
  const calls = trees.reduce((sum, tree) => sum + tree.rolledUp.calls, 0);
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

function treeJson(tree: CostTree): unknown {
  return {
    ...tree.cost,
    ...(tree.link === undefined ? {} : { link: tree.link }),
    rolledUp: tree.rolledUp,
    ...(tree.unreadable.length === 0 ? {} : { unreadable: tree.unreadable }),
    children: tree.children.map(treeJson),
  };
}

function printTree(context: CliContext, tree: CostTree, view: View, depth = 0): void {
  const { cost } = tree;
  const out = context.terminal.out;
  const indent = '  '.repeat(depth);
  const kind = tree.link === undefined ? 'session' : tree.link;
  out.write(
    `${indent}${kind} ${safeLine(cost.sessionId, 120)}: ${amount(cost.total, cost.currency)} over ${cost.total.calls} call(s)` +
      (tree.link === 'fork' && cost.inherited.calls > 0
        ? ` (${cost.inherited.calls} inherited from its parent, not counted again)`
        : '') +
      (tree.children.length === 0
        ? ''
        : `; with its ${tree.children.length} child session(s): ${money(tree.rolledUp.cost, cost.currency)}`) +
      '\n',
  );
  if (depth === 0) printView(context, cost, view);
  if (cost.unpricedModels.length > 0) {
    context.terminal.note(
      `no price for ${cost.unpricedModels.map((m) => safeLine(m, 80)).join(', ')}: their ${cost.total.unpricedCalls} call(s) are not in the amounts (pass --prices FILE)`,
    );
  }
  if (tree.unreadable.length > 0) {
    context.terminal.note(
      `could not read ${tree.unreadable.map((id) => safeLine(id, 80)).join(', ')}, linked from ${safeLine(cost.sessionId, 80)}: not in the amounts`,
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
