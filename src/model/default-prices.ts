/**
 * The price table palimpsest ships: the providers it supports, as their pricing pages published
 * them. Rates change; a table is data with dates, and a session records the rates that priced it.
 * Pass your own table for another provider, a negotiated rate or a change since this one.
 */
import type { ModelRates, PriceEntry, PriceTable } from './price-table.js';

function anthropic(
  input: number,
  output: number,
  longContext?: { input: number; output: number },
): ModelRates {
  // Anthropic prices cache reads at a tenth of input and writes at 1.25× (5 minutes) or 2× (1 hour).
  const tier = (base: number) => ({
    cacheRead: base / 10,
    cacheWrite: base * 1.25,
    cacheWrite1h: base * 2,
  });
  return {
    input,
    output,
    ...tier(input),
    ...(longContext === undefined
      ? {}
      : { longContext: { ...longContext, ...tier(longContext.input), aboveInputTokens: 200_000 } }),
  };
}

/** OpenAI's GPT-5 family reads the cache at a tenth of input; most of it writes for free. */
function openai(input: number, output: number, cacheWrite?: number): ModelRates {
  return {
    input,
    cacheRead: input / 10,
    output,
    ...(cacheWrite === undefined ? {} : { cacheWrite }),
  };
}

const entry = (
  provider: string,
  model: string,
  effectiveFrom: string,
  rates: ModelRates,
): PriceEntry => ({ provider, model, effectiveFrom, rates });

const SONNET_LONG = { input: 6, output: 22.5 };

/**
 * USD per million tokens for Anthropic, OpenAI, Google (Gemini API) and DeepSeek models, as
 * published on the providers' pricing pages. Batch, priority and regional rates, Google's
 * cache storage per hour and tool fees (web search, code execution) are not in it.
 *
 * @example
 * ```ts
 * import { DEFAULT_PRICES, priceAt } from 'palimpsest/agent';
 *
 * const sonnet = priceAt(DEFAULT_PRICES, 'anthropic.messages', 'claude-sonnet-4-5-20250929', Date.parse('2026-01-05'));
 * console.log(sonnet?.rates.cacheRead); // 0.3
 * ```
 */
export const DEFAULT_PRICES: PriceTable = {
  name: 'palimpsest-2026-12',
  currency: 'USD',
  source:
    'platform.claude.com/docs/en/about-claude/pricing and its model pages, openai.com/api/pricing (the GPT-5.2 to 5.6 rates as GitHub lists them in docs.github.com data/tables/copilot/models-and-pricing.yml), ai.google.dev/gemini-api/docs/pricing, api-docs.deepseek.com/quick_start/pricing',
  entries: [
    // The 2026 models. A model's first entry is dated at its release where the provider's model
    // page gives the date, else at the release of the model it followed: no call predates its
    // model, so an early date prices no call wrongly, while a late one would leave calls unpriced.
    ...(['claude-fable-5-1', 'claude-mythos-5-1'] as const).map((model) =>
      entry('anthropic', model, '2026-06-09', {
        input: 10,
        output: 50,
        cacheRead: 0.25,
        cacheWrite: 12.5,
        cacheWrite1h: 20,
      }),
    ),
    ...(['claude-fable-5', 'claude-mythos-5'] as const).map((model) =>
      entry('anthropic', model, '2026-06-09', {
        input: 10,
        output: 50,
        cacheRead: 1,
        cacheWrite: 12.5,
        cacheWrite1h: 20,
      }),
    ),
    // Opus 5.5 and Sonnet 5.5 read the cache at a twentieth of input, not a tenth.
    entry('anthropic', 'claude-opus-5-5', '2026-07-24', {
      input: 4,
      output: 20,
      cacheRead: 0.2,
      cacheWrite: 5,
      cacheWrite1h: 8,
    }),
    entry('anthropic', 'claude-opus-5', '2026-07-24', anthropic(5, 25)),
    entry('anthropic', 'claude-opus-4-8', '2026-02-05', anthropic(5, 25)),
    entry('anthropic', 'claude-opus-4-7', '2026-02-05', anthropic(5, 25)),
    entry('anthropic', 'claude-opus-4-6', '2026-02-05', anthropic(5, 25)),
    entry('anthropic', 'claude-sonnet-5-5', '2026-06-30', anthropic(2, 10)),
    entry('anthropic', 'claude-sonnet-5-5', '2026-10-07', { ...anthropic(2, 10), cacheRead: 0.1 }),
    entry('anthropic', 'claude-sonnet-5', '2026-06-30', anthropic(2, 10)),
    entry('anthropic', 'claude-sonnet-4-6', '2026-02-05', anthropic(3, 15)),
    // Haiku 5.5 bills a request whose prompt (cache reads and writes included) passes 100,000
    // tokens at five times its rates, output included.
    entry('anthropic', 'claude-haiku-5-5', '2026-10-07', {
      ...anthropic(0.1, 0.5),
      cacheRead: 0.01,
      longContext: { ...anthropic(0.5, 2.5), cacheRead: 0.05, aboveInputTokens: 100_000 },
    }),
    entry('anthropic', 'claude-opus-4-5', '2025-11-24', anthropic(5, 25)),
    entry('anthropic', 'claude-opus-4-1', '2025-08-05', anthropic(15, 75)),
    entry('anthropic', 'claude-opus-4', '2025-05-22', anthropic(15, 75)),
    entry('anthropic', 'claude-sonnet-4-5', '2025-09-29', anthropic(3, 15, SONNET_LONG)),
    entry('anthropic', 'claude-sonnet-4', '2025-05-22', anthropic(3, 15, SONNET_LONG)),
    entry('anthropic', 'claude-3-7-sonnet', '2025-02-24', anthropic(3, 15)),
    entry('anthropic', 'claude-haiku-4-5', '2025-10-15', anthropic(1, 5)),
    entry('anthropic', 'claude-3-5-haiku', '2024-11-04', anthropic(0.8, 4)),
    // OpenAI does not charge cache writes; cached input is a tenth (GPT-5) or a quarter of input.
    // GPT-5.4 and later bill a request past 272,000 input tokens (Luna: 200,000) at the long
    // context rates; the GPT-5.6 family charges cache writes.
    ...(['gpt-5.2', 'gpt-5.2-codex', 'gpt-5.3-codex'] as const).map((model) =>
      entry('openai', model, '2025-11-13', { input: 1.75, cacheRead: 0.175, output: 14 }),
    ),
    entry('openai', 'gpt-5.4', '2025-11-13', {
      ...openai(2.5, 15),
      longContext: { ...openai(5, 22.5), aboveInputTokens: 272_000 },
    }),
    entry('openai', 'gpt-5.4-mini', '2025-11-13', openai(0.75, 4.5)),
    entry('openai', 'gpt-5.4-nano', '2025-11-13', openai(0.2, 1.25)),
    entry('openai', 'gpt-5.5', '2025-11-13', {
      ...openai(5, 30),
      longContext: { ...openai(10, 45), aboveInputTokens: 272_000 },
    }),
    entry('openai', 'gpt-5.6-sol', '2025-11-13', {
      ...openai(5, 30, 6.25),
      longContext: { ...openai(10, 45, 12.5), aboveInputTokens: 272_000 },
    }),
    entry('openai', 'gpt-5.6-terra', '2025-11-13', {
      ...openai(2, 12, 2.5),
      longContext: { ...openai(4, 18, 5), aboveInputTokens: 272_000 },
    }),
    entry('openai', 'gpt-5.6-luna', '2025-11-13', {
      ...openai(0.2, 1.2, 0.25),
      longContext: { ...openai(0.4, 1.8, 0.5), aboveInputTokens: 200_000 },
    }),
    entry('openai', 'gpt-5.1', '2025-11-13', { input: 1.25, cacheRead: 0.125, output: 10 }),
    ...(['gpt-5-codex', 'gpt-5.1-codex', 'gpt-5.1-codex-max'] as const).map((model) =>
      entry('openai', model, '2025-08-07', openai(1.25, 10)),
    ),
    entry('openai', 'gpt-5.1-codex-mini', '2025-08-07', openai(0.25, 2)),
    entry('openai', 'gpt-5', '2025-08-07', { input: 1.25, cacheRead: 0.125, output: 10 }),
    entry('openai', 'gpt-5-mini', '2025-08-07', { input: 0.25, cacheRead: 0.025, output: 2 }),
    entry('openai', 'gpt-5-nano', '2025-08-07', { input: 0.05, cacheRead: 0.005, output: 0.4 }),
    entry('openai', 'gpt-4.1', '2025-04-14', { input: 2, cacheRead: 0.5, output: 8 }),
    entry('openai', 'gpt-4.1-mini', '2025-04-14', { input: 0.4, cacheRead: 0.1, output: 1.6 }),
    entry('openai', 'gpt-4.1-nano', '2025-04-14', { input: 0.1, cacheRead: 0.025, output: 0.4 }),
    entry('openai', 'gpt-4o', '2024-10-01', { input: 2.5, cacheRead: 1.25, output: 10 }),
    entry('openai', 'gpt-4o-mini', '2024-07-18', { input: 0.15, cacheRead: 0.075, output: 0.6 }),
    entry('openai', 'o3', '2025-06-10', { input: 2, cacheRead: 0.5, output: 8 }),
    entry('openai', 'o4-mini', '2025-04-16', { input: 1.1, cacheRead: 0.275, output: 4.4 }),
    ...(['gemini-3-pro', 'gemini-3.1-pro'] as const).map((model) =>
      entry('google', model, '2025-11-18', {
        input: 2,
        cacheRead: 0.2,
        output: 12,
        longContext: { input: 4, cacheRead: 0.4, output: 18, aboveInputTokens: 200_000 },
      }),
    ),
    entry('google', 'gemini-3.5-flash', '2025-11-18', { input: 1.5, cacheRead: 0.15, output: 9 }),
    entry('google', 'gemini-2.5-pro', '2025-06-17', {
      input: 1.25,
      cacheRead: 0.125,
      output: 10,
      longContext: { input: 2.5, cacheRead: 0.25, output: 15, aboveInputTokens: 200_000 },
    }),
    entry('google', 'gemini-2.5-flash', '2025-06-17', { input: 0.3, cacheRead: 0.03, output: 2.5 }),
    entry('google', 'gemini-2.5-flash-lite', '2025-07-22', {
      input: 0.1,
      cacheRead: 0.01,
      output: 0.4,
    }),
    // DeepSeek changed its prices twice in September 2025: each session prices at its own date.
    entry('deepseek', 'deepseek-chat', '2025-02-09', { input: 0.27, cacheRead: 0.07, output: 1.1 }),
    entry('deepseek', 'deepseek-reasoner', '2025-02-09', {
      input: 0.55,
      cacheRead: 0.14,
      output: 2.19,
    }),
    ...(['deepseek-chat', 'deepseek-reasoner'] as const).flatMap((model) => [
      entry('deepseek', model, '2025-09-05', { input: 0.56, cacheRead: 0.07, output: 1.68 }),
      entry('deepseek', model, '2025-09-29', { input: 0.28, cacheRead: 0.028, output: 0.42 }),
    ]),
  ],
};
