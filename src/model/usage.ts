/**
 * Token usage in the log's terms: the spec reports nested counts per call, the log keeps flat
 * ones that sum across steps.
 */
import type { LanguageModelV3Usage } from '@ai-sdk/provider';
import type { TokenUsage } from '../core/index.js';

/** Token counts being filled in (a writable `TokenUsage`). */
export type UsageCounts = { -readonly [K in keyof TokenUsage]?: number };

/** Maps the spec's nested usage to the flat usage the log keeps (absent numbers omitted). */
export function mapUsage(usage: LanguageModelV3Usage | undefined): TokenUsage | undefined {
  if (usage === undefined) return undefined;
  const input = usage.inputTokens?.total;
  const output = usage.outputTokens?.total;
  const mapped: UsageCounts = {};
  if (isCount(input)) mapped.inputTokens = input;
  if (isCount(output)) mapped.outputTokens = output;
  if (isCount(input) && isCount(output)) mapped.totalTokens = input + output;
  const reasoning = usage.outputTokens?.reasoning;
  if (isCount(reasoning)) mapped.reasoningTokens = reasoning;
  const cached = usage.inputTokens?.cacheRead;
  if (isCount(cached)) mapped.cachedInputTokens = cached;
  return Object.keys(mapped).length === 0 ? undefined : mapped;
}

function isCount(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Adds `usage` into `total`, key by key (absent numbers leave the total as it is). */
export function addUsage(total: UsageCounts, usage: TokenUsage | undefined): void {
  if (usage === undefined) return;
  for (const key of USAGE_KEYS) {
    const value = usage[key];
    if (value !== undefined) total[key] = (total[key] ?? 0) + value;
  }
}

const USAGE_KEYS = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'reasoningTokens',
  'cachedInputTokens',
] as const;
