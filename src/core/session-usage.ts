/**
 * What a session's model calls used, from the log alone: the usage providers reported on each
 * `assistant/message` and on each compaction's `compaction/end`, totalled per model, with the
 * part a fork inherited from its parent apart, and a cost when the caller gives prices.
 */
import type { JsonValue } from './json.js';
import type { Session } from './session.js';

/**
 * Token counts summed over calls. Every numeric field a provider reported is summed under its
 * own name (`inputTokens`, `outputTokens`, `cachedInputTokens`, `reasoningTokens`...), so a new
 * field is totalled without a change here.
 */
export interface UsageTotals {
  /** Model calls that reported usage. */
  readonly calls: number;
  /** The summed fields, by name. */
  readonly tokens: Readonly<Record<string, number>>;
}

/** Prices in a currency unit per million tokens; the key is `provider:model` or `model`. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  /** For `cachedInputTokens`, which are then not charged at `input`; `input` when absent. */
  readonly cachedInput?: number;
}

/** Options of {@link sessionUsage}. */
export interface SessionUsageOptions {
  /** Prices per model, for {@link SessionUsage.cost}. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
}

/** What {@link sessionUsage} found. */
export interface SessionUsage {
  /** Every call the log records, the inherited prefix included. */
  readonly total: UsageTotals;
  /** Per model (`provider:model`; `compaction` for summaries whose model the log does not name). */
  readonly byModel: Readonly<Record<string, UsageTotals>>;
  /** The agent's own steps (`assistant/message`). */
  readonly steps: UsageTotals;
  /** Summaries written by compaction (`compaction/end`). */
  readonly compaction: UsageTotals;
  /**
   * The part of `total` in the prefix a fork copied from its parent (`header.seedLength`
   * events): subtract it when adding a fork to its parent.
   */
  readonly inherited: UsageTotals;
  /** With prices: the cost of `total`, and the models that had no price (not counted). */
  readonly cost?: { readonly amount: number; readonly unpricedModels: readonly string[] };
}

/**
 * Totals the token usage a session's log records.
 *
 * @example
 * ```ts
 * import { Session, sessionUsage } from 'palimpsest';
 *
 * const session = Session.create({ id: 'usage-example' });
 * session.append(
 *   'assistant/message',
 *   {
 *     turn: 1,
 *     step: 1,
 *     finishReason: 'stop',
 *     usage: { inputTokens: 1200, outputTokens: 300 },
 *     message: {
 *       id: 'a1',
 *       role: 'assistant',
 *       content: [{ type: 'text', text: 'Hello.' }],
 *       source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' },
 *     },
 *   },
 *   { surfaceOp: 'append', sourceEventSeqs: [] },
 * );
 * const usage = sessionUsage(session, {
 *   prices: { 'deepseek:deepseek-chat': { input: 0.27, output: 1.1 } },
 * });
 * console.log(usage.total.tokens.inputTokens); // 1200
 * console.log(usage.cost?.amount); // 0.000654
 * ```
 */
export function sessionUsage(session: Session, options: SessionUsageOptions = {}): SessionUsage {
  const total = new Tally();
  const steps = new Tally();
  const compaction = new Tally();
  const inherited = new Tally();
  const byModel = new Map<string, Tally>();
  const seedLength = session.header.seedLength ?? 0;
  for (const event of session.events) {
    const usage = reportedUsage(event);
    if (usage === undefined) continue;
    const isStep = event.type === 'assistant/message';
    const data = event.data as { message?: { source?: JsonValue } };
    const model = isStep ? modelKey(data.message?.source) : 'compaction';
    total.add(usage);
    (isStep ? steps : compaction).add(usage);
    if (event.seq < seedLength) inherited.add(usage);
    const perModel = byModel.get(model) ?? new Tally();
    byModel.set(model, perModel);
    perModel.add(usage);
  }
  const models = Object.fromEntries([...byModel].map(([key, tally]) => [key, tally.totals()]));
  return {
    total: total.totals(),
    byModel: models,
    steps: steps.totals(),
    compaction: compaction.totals(),
    inherited: inherited.totals(),
    ...(options.prices === undefined ? {} : { cost: costOf(models, options.prices) }),
  };
}

/** The event types whose events may carry reported usage. */
export const USAGE_EVENT_TYPES: readonly string[] = ['assistant/message', 'compaction/end'];

/**
 * The usage totals of `events` exactly as {@link sessionUsage} counts its `total`, for a reader
 * that has only some events of a log, not a session (a store summarizing a session reads just
 * the events of {@link USAGE_EVENT_TYPES}, and of no other type).
 *
 * @example
 * ```ts
 * import { usageTotals } from 'palimpsest/backend';
 *
 * const totals = usageTotals([
 *   { type: 'assistant/message', data: { usage: { inputTokens: 10, outputTokens: 2 } } },
 *   { type: 'compaction/end', data: { usage: { inputTokens: 5 } } },
 *   { type: 'tool/result', data: { usage: { inputTokens: 99 } } }, // not a model call
 * ]);
 * console.log(totals); // { calls: 2, tokens: { inputTokens: 15, outputTokens: 2 } }
 * ```
 */
export function usageTotals(
  events: Iterable<{ readonly type: string; readonly data: JsonValue }>,
): UsageTotals {
  const total = new Tally();
  for (const event of events) {
    const usage = reportedUsage(event);
    if (usage !== undefined) total.add(usage);
  }
  return total.totals();
}

/** The usage a model-call event reports, if it is one that carries usage. */
function reportedUsage(event: {
  readonly type: string;
  readonly data: JsonValue;
}): { readonly [key: string]: JsonValue } | undefined {
  if (!USAGE_EVENT_TYPES.includes(event.type)) return undefined;
  const usage = (event.data as { usage?: JsonValue } | null)?.usage;
  return isObject(usage) ? usage : undefined;
}

class Tally {
  private calls = 0;
  private readonly sums: Record<string, number> = Object.create(null);

  add(usage: { readonly [key: string]: JsonValue }): void {
    this.calls += 1;
    for (const [name, value] of Object.entries(usage)) {
      if (typeof value === 'number' && Number.isFinite(value)) {
        this.sums[name] = (this.sums[name] ?? 0) + value;
      }
    }
  }

  totals(): UsageTotals {
    return { calls: this.calls, tokens: { ...this.sums } };
  }
}

function isObject(value: JsonValue | undefined): value is { readonly [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function modelKey(source: JsonValue | undefined): string {
  if (!isObject(source)) return 'unknown';
  const { provider, model } = source as { provider?: JsonValue; model?: JsonValue };
  const name = typeof model === 'string' ? model : 'unknown';
  return typeof provider === 'string' ? `${provider}:${name}` : name;
}

function costOf(
  models: Readonly<Record<string, UsageTotals>>,
  prices: Readonly<Record<string, ModelPrice>>,
): { amount: number; unpricedModels: string[] } {
  let amount = 0;
  const unpricedModels: string[] = [];
  for (const [key, totals] of Object.entries(models)) {
    const price = prices[key] ?? prices[key.slice(key.indexOf(':') + 1)];
    if (price === undefined) {
      unpricedModels.push(key);
      continue;
    }
    const { inputTokens = 0, outputTokens = 0, cachedInputTokens = 0 } = totals.tokens;
    const cached = Math.min(cachedInputTokens, inputTokens);
    amount +=
      ((inputTokens - cached) * price.input +
        cached * (price.cachedInput ?? price.input) +
        outputTokens * price.output) /
      1_000_000;
  }
  return { amount, unpricedModels };
}
