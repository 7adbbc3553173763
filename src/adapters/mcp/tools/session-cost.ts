/**
 * `session_cost`: what a session's model calls used and cost, by model, with the compaction
 * summaries and a fork's inherited prefix apart (`sessionCost` and `sessionUsage`).
 */
import { z } from 'zod';
import { sessionUsage } from '../../../core/index.js';
import { type CostTotals, sessionCost } from '../../../model/session-cost.js';
import { serverTool } from '../server-tool.js';
import { sessionArgument } from './shared.js';

const tokens = z.object({
  input: z.number().describe('input neither read from nor written to a cache'),
  cacheRead: z.number(),
  cacheWrite: z.number(),
  output: z.number().describe('reasoning included'),
  reasoning: z.number(),
});

const totals = z.object({
  calls: z.number().int(),
  unpricedCalls: z.number().int().describe('calls without known rates: not in cost'),
  cost: z.number(),
  tokens,
});

type Totals = z.infer<typeof totals>;

/** The `session_cost` tool. */
export const sessionCostTool = serverTool({
  name: 'session_cost',
  title: 'Session cost and usage',
  description:
    "Totals a session's token usage and its cost at the recorded or shipped prices: the whole session, each model, the compaction summaries, and the prefix a fork inherited from its parent (subtract it when adding a fork to its parent).",
  input: { session: sessionArgument },
  output: {
    session: z.string(),
    currency: z.string(),
    total: totals,
    byModel: z.record(z.string(), totals).describe('by provider:model'),
    compaction: totals,
    inherited: totals,
    turns: z.number().int().describe('turns with model calls'),
    unpricedModels: z.array(z.string()),
    reportedTokens: z
      .record(z.string(), z.number())
      .describe('every usage field the providers reported, summed'),
  },
  async run(args, context) {
    const session = await context.sessions.load(args.session);
    const cost = sessionCost(session);
    const usage = sessionUsage(session);
    const byModel = Object.fromEntries(
      Object.entries(cost.byModel).map(([model, value]) => [model, totalsOf(value)]),
    );
    const money = (amount: number): string => `${amount.toFixed(4)} ${cost.currency}`;
    const lines = [
      `Session ${session.id}: ${cost.total.calls} model call(s) over ${cost.turns.length} turn(s), ${money(cost.total.cost.total)}.`,
      ...Object.entries(byModel).map(
        ([model, value]) =>
          `- ${model}: ${value.calls} call(s), ${money(value.cost)}, ${tokenText(value)}`,
      ),
    ];
    if (cost.compaction.calls > 0) {
      lines.push(
        `compaction summaries: ${cost.compaction.calls} call(s), ${money(cost.compaction.cost.total)}`,
      );
    }
    if (cost.inherited.calls > 0) {
      lines.push(
        `inherited from the parent session: ${cost.inherited.calls} call(s), ${money(cost.inherited.cost.total)}`,
      );
    }
    if (cost.unpricedModels.length > 0) {
      lines.push(
        `no prices known for: ${cost.unpricedModels.join(', ')} (their tokens are counted, not their cost)`,
      );
    }
    return {
      text: lines.join('\n'),
      structured: {
        session: session.id,
        currency: cost.currency,
        total: totalsOf(cost.total),
        byModel,
        compaction: totalsOf(cost.compaction),
        inherited: totalsOf(cost.inherited),
        turns: cost.turns.length,
        unpricedModels: [...cost.unpricedModels],
        reportedTokens: { ...usage.total.tokens },
      },
    };
  },
});

function totalsOf(value: CostTotals): Totals {
  return {
    calls: value.calls,
    unpricedCalls: value.unpricedCalls,
    cost: value.cost.total,
    tokens: { ...value.tokens },
  };
}

function tokenText(value: Totals): string {
  const { input, cacheRead, cacheWrite, output } = value.tokens;
  return `tokens in ${input} (+${cacheRead} cache read, ${cacheWrite} cache write), out ${output}`;
}
