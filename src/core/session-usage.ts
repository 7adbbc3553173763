/**
 * What a session's model calls used, from the log alone: the usage providers reported on each
 * `assistant/message` and on each compaction's `compaction/end`, totalled per model, with the
 * part a fork inherited from its parent apart. What it cost is `sessionCost`'s (`palimpsest/agent`).
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
 * const usage = sessionUsage(session);
 * console.log(usage.total.tokens.inputTokens); // 1200
 * ```
 */
export function sessionUsage(session: Session): SessionUsage {
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
    const model = usageModel(event);
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

/**
 * The usage totals of `events` per model (`provider:model`), counted as {@link usageTotals}
 * counts them: what a store's summary gives, so a listing can price a session without loading it.
 *
 * @example
 * ```ts
 * import { usageTotalsByModel } from 'palimpsest/backend';
 *
 * const byModel = usageTotalsByModel([
 *   {
 *     type: 'assistant/message',
 *     data: { usage: { inputTokens: 10 }, message: { source: { provider: 'openai.chat', model: 'gpt-4o' } } },
 *   },
 * ]);
 * console.log(byModel['openai.chat:gpt-4o']?.calls); // 1
 * ```
 */
export function usageTotalsByModel(
  events: Iterable<{ readonly type: string; readonly data: JsonValue }>,
): Record<string, UsageTotals> {
  const byModel = new Map<string, Tally>();
  for (const event of events) {
    const usage = reportedUsage(event);
    if (usage === undefined) continue;
    const key = usageModel(event);
    const tally = byModel.get(key) ?? new Tally();
    byModel.set(key, tally);
    tally.add(usage);
  }
  return Object.fromEntries([...byModel].map(([key, tally]) => [key, tally.totals()]));
}

/**
 * The model a usage event's call ran on: a step's answering model, a compaction's summarizer
 * where it is named (`compaction` where it is not).
 */
function usageModel(event: { readonly type: string; readonly data: JsonValue }): string {
  const data = event.data as { message?: { source?: JsonValue }; model?: JsonValue } | null;
  if (event.type === 'assistant/message') return modelKey(data?.message?.source);
  return isObject(data?.model ?? undefined) ? modelKey(data?.model) : 'compaction';
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
