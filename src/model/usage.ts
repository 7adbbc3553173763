/**
 * Token usage in the log's terms: the spec reports nested counts per call, the log keeps flat
 * ones that sum across steps.
 */
import type { LanguageModelV3Usage } from '@ai-sdk/provider';
import type { JsonObject, TokenUsage } from '../core/index.js';

type CountKey = Exclude<keyof TokenUsage, 'raw'>;

/** Token counts being filled in (a writable `TokenUsage`); `raw` is per call, never summed. */
export type UsageCounts = { -readonly [K in CountKey]?: number } & { raw?: JsonObject };

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
  const text = usage.outputTokens?.text;
  if (isCount(text)) mapped.textTokens = text;
  const cached = usage.inputTokens?.cacheRead;
  if (isCount(cached)) mapped.cachedInputTokens = cached;
  const cacheWrite = usage.inputTokens?.cacheWrite;
  if (isCount(cacheWrite)) mapped.cacheWriteTokens = cacheWrite;
  const noCache = usage.inputTokens?.noCache;
  if (isCount(noCache)) mapped.noCacheTokens = noCache;
  const raw = rawUsage(usage.raw);
  if (raw !== undefined) mapped.raw = raw;
  return Object.keys(mapped).length === 0 ? undefined : mapped;
}

/** The provider's usage object as log JSON (it is parsed JSON, but may hold `undefined`). */
function rawUsage(raw: unknown): JsonObject | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  try {
    const json: unknown = JSON.parse(JSON.stringify(raw));
    return typeof json === 'object' && json !== null && !Array.isArray(json)
      ? (json as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}

function isCount(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * Adds `usage` into `total`, key by key (absent numbers leave the total as it is; `raw` is not
 * added).
 */
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
  'textTokens',
  'cachedInputTokens',
  'cacheWriteTokens',
  'noCacheTokens',
] as const satisfies readonly CountKey[];
