/**
 * What one model call cost: its reported usage split by how each token is billed, priced at
 * the rates in effect.
 */
import type { TokenUsage } from '../core/index.js';
import type { ModelRates, TokenRates } from './price-table.js';

/** A call's tokens by how they are billed. The input kinds add up to the reported input. */
export interface TokenSplit {
  /** Input tokens neither read from nor written to a cache. */
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Output tokens, reasoning included. */
  readonly output: number;
  /** The part of `output` spent on reasoning, as the provider reported it. */
  readonly reasoning: number;
}

/** Money by token kind, in the price table's currency; `total` is their sum. */
export interface CostBreakdown {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Output other than reasoning billed apart. */
  readonly output: number;
  /** Reasoning billed at its own rate; 0 where the provider bills it as output. */
  readonly reasoning: number;
  readonly total: number;
}

export const NO_TOKENS: TokenSplit = {
  input: 0,
  cacheRead: 0,
  cacheWrite: 0,
  output: 0,
  reasoning: 0,
};
export const NO_COST: CostBreakdown = {
  input: 0,
  cacheRead: 0,
  cacheWrite: 0,
  output: 0,
  reasoning: 0,
  total: 0,
};

/**
 * Splits reported usage by billing kind. Usage follows the AI SDK's convention: `inputTokens`
 * counts every input token, the cached and cache-written ones included (the AI SDK's providers
 * and palimpsest's importers report it so).
 */
export function splitUsage(usage: TokenUsage): TokenSplit {
  const input = count(usage.inputTokens);
  const cacheRead = Math.min(count(usage.cachedInputTokens), input);
  const cacheWrite = Math.min(count(usage.cacheWriteTokens), input - cacheRead);
  const output = count(usage.outputTokens);
  return {
    input: input - cacheRead - cacheWrite,
    cacheRead,
    cacheWrite,
    output,
    reasoning: Math.min(count(usage.reasoningTokens), output),
  };
}

/** Prices a call's usage at `rates` (per million tokens), long-context tier and cache tiers applied. */
export function priceUsage(usage: TokenUsage, rates: ModelRates): CostBreakdown {
  return priceSplit(usage, splitUsage(usage), rates);
}

/** {@link priceUsage} of usage already split (`tokens` is `splitUsage(usage)`). */
export function priceSplit(
  usage: TokenUsage,
  tokens: TokenSplit,
  rates: ModelRates,
): CostBreakdown {
  const allInput = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  const tier: TokenRates =
    rates.longContext !== undefined && allInput > rates.longContext.aboveInputTokens
      ? rates.longContext
      : rates;
  const hour = Math.min(oneHourWrites(usage), tokens.cacheWrite);
  const writeRate = tier.cacheWrite ?? tier.input;
  const reasoningApart = tier.reasoning !== undefined;
  // Rounded to a millionth of a cent's millionth: float noise is not money.
  const input = round((tokens.input * tier.input) / 1_000_000);
  const cacheRead = round((tokens.cacheRead * (tier.cacheRead ?? tier.input)) / 1_000_000);
  const cacheWrite = round(
    ((tokens.cacheWrite - hour) * writeRate + hour * (tier.cacheWrite1h ?? writeRate)) / 1_000_000,
  );
  const output = round(
    ((reasoningApart ? tokens.output - tokens.reasoning : tokens.output) * tier.output) / 1_000_000,
  );
  const reasoning = round(
    (reasoningApart ? tokens.reasoning * (tier.reasoning ?? 0) : 0) / 1_000_000,
  );
  return {
    input,
    cacheRead,
    cacheWrite,
    output,
    reasoning,
    total: round(input + cacheRead + cacheWrite + output + reasoning),
  };
}

/** Adds two splits, or two breakdowns, field by field. */
export function addFields<T extends Record<keyof T, number>>(a: T, b: T): T {
  const sum = { ...a };
  for (const key of Object.keys(a) as Array<keyof T>) {
    (sum as Record<keyof T, number>)[key] = a[key] + b[key];
  }
  return sum;
}

function round(value: number): number {
  return Math.round(value * 1e12) / 1e12;
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Cache writes of Anthropic's 1-hour tier, from the provider's own usage object. */
function oneHourWrites(usage: TokenUsage): number {
  const creation = usage.raw?.cache_creation;
  if (typeof creation !== 'object' || creation === null || Array.isArray(creation)) return 0;
  return count(
    (creation as { ephemeral_1h_input_tokens?: unknown }).ephemeral_1h_input_tokens as
      | number
      | undefined,
  );
}
