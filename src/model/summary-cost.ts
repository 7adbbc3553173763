/**
 * A session's cost from a store's summary (usage totals per model), for listings that must not
 * load whole logs: each model's totals at its base rates of one day.
 */
import type { UsageTotals } from '../core/index.js';
import { priceUsage } from './call-cost.js';
import { type PriceTable, priceAt } from './price-table.js';

/** What {@link summaryCost} found: the amount of the priced models, and the others. */
export interface SummaryCost {
  readonly amount: number;
  readonly currency: string;
  readonly unpricedModels: readonly string[];
}

/**
 * Prices per-model usage totals (`SessionStats.usageByModel`) at each model's rates on the day
 * of `time`. Per call details a summary does not keep are not applied: the long-context tier,
 * 1-hour cache writes, rates a session recorded. `sessionCost` prices call by call; for a
 * session without those, the two agree.
 *
 * @example
 * ```ts
 * import { DEFAULT_PRICES, summaryCost } from 'palimpsest/agent';
 *
 * const cost = summaryCost(
 *   { 'openai.chat:gpt-4o': { calls: 1, tokens: { inputTokens: 1_000_000, outputTokens: 0 } } },
 *   DEFAULT_PRICES,
 *   Date.parse('2026-01-01'),
 * );
 * console.log(cost.amount); // 2.5
 * ```
 */
export function summaryCost(
  byModel: Readonly<Record<string, UsageTotals>>,
  table: PriceTable,
  time: number,
): SummaryCost {
  let amount = 0;
  const unpricedModels: string[] = [];
  for (const [key, totals] of Object.entries(byModel)) {
    const colon = key.indexOf(':');
    const price =
      colon < 0 ? undefined : priceAt(table, key.slice(0, colon), key.slice(colon + 1), time);
    if (price === undefined) {
      unpricedModels.push(key);
      continue;
    }
    const { longContext: _perCall, ...base } = price.rates;
    amount += priceUsage(totals.tokens, base).total;
  }
  return { amount, currency: table.currency, unpricedModels };
}
