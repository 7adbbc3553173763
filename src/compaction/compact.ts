/**
 * Summary compaction: a range of the surface is replaced by one `user/message` summary that
 * cites every shadowed seq, inside a `compaction/start` … `compaction/end` bracket. The raw log
 * keeps every original event; only the surface changes, and only when the summary is shorter
 * than what it replaces and the surface did not change while it was written.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import {
  type CompactionBracketData,
  estimateTokens,
  type JsonValue,
  type ProviderFailure,
  requestHeaderAt,
  type Session,
  type TokenUsage,
  type UserMessage,
} from '../core/index.js';
import { type RetryOptions, type RetryPolicy, retryPolicy } from '../model/index.js';
import { CompactionError, countOption, invalidOptions } from './errors.js';
import { resolveRange, type SurfaceRange, selectRange } from './range.js';
import { DEFAULT_INSTRUCTIONS, summarize } from './summarizer.js';
import { messagesOf, type PricedSurface, priceSurface } from './surface-entries.js';

/**
 * Options of {@link compact}. The retry knobs (`maxRetries`, `retryDelayMs`, `maxRetryDelayMs`)
 * mean what they mean for a turn, with the same defaults.
 */
export interface CompactOptions extends RetryOptions {
  /** The model that writes the summary (usually the agent's own). */
  readonly model: LanguageModelV3;
  /** Recent history kept verbatim, in estimated tokens (default 8,000). */
  readonly keepRecentTokens?: number;
  /** An explicit range to replace, as seqs on the surface (inclusive, surface order). */
  readonly range?: { readonly start: number; readonly end: number };
  /** What the summary must contain; see {@link DEFAULT_INSTRUCTIONS}. */
  readonly instructions?: string;
  readonly signal?: AbortSignal;
  /** Output cap of the summary request (default 4,096 tokens). */
  readonly maxOutputTokens?: number;
  /** Recorded in the bracket: who asked (default `manual`). */
  readonly trigger?: string;
}

/** Why a compaction replaced nothing. */
export type CompactionSkip =
  | 'nothing-to-compact'
  | 'not-shorter'
  | 'surface-changed'
  | 'failed'
  | 'aborted';

/** What {@link compact} did. */
export interface CompactionResult {
  /** The id of the bracket (absent when nothing was appended). */
  readonly id?: string;
  readonly replaced: boolean;
  readonly skipped?: CompactionSkip;
  readonly error?: ProviderFailure;
  /** Seqs of `compaction/start`, the summary, `compaction/end`. */
  readonly startSeq?: number;
  readonly summarySeq?: number;
  readonly endSeq?: number;
  /** The surface seqs the summary replaced (or would have), in surface order. */
  readonly shadowedSeqs: readonly number[];
  /** Estimated tokens of the whole surface before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly summary?: string;
  readonly usage?: TokenUsage;
}

const DEFAULT_KEEP_RECENT_TOKENS = 8000;
const busy = new WeakSet<Session>();

/**
 * Compacts the surface of `session` with a model-written summary. Model failures, a summary that
 * is not shorter, a surface that changed meanwhile and cancellation replace nothing and close the
 * bracket with the reason; they are reported in the result, not thrown.
 *
 * @throws CompactionError `INVALID_RANGE`, `BUSY`, `INVALID_OPTIONS`.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { runTurn } from 'palimpsest/agent';
 * import { compact } from 'palimpsest/compaction';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const answer = 'The log shows 180 modules compiled and a type error in src/config.ts. '.repeat(20);
 * const model = scriptedModel([{ text: answer }], { loop: true });
 * const session = Session.create({ id: 'compact-example' });
 * for (const input of ['Why did the build fail?', 'Where exactly?', 'How do I fix it?']) {
 *   await runTurn({ session, model, input });
 * }
 *
 * // Usually the agent's own model writes the summary; the newest turn is always kept verbatim.
 * const writer = scriptedModel([{ text: 'The build failed on a type error in src/config.ts.' }]);
 * const result = await compact(session, { model: writer, keepRecentTokens: 0 });
 * console.log(result.replaced); // true
 * console.log(result.shadowedSeqs.length); // 4: two turns of question and answer
 * console.log(session.deriveMessages().length); // 3: the summary, then the last turn
 * // The log keeps what the summary shadows: the transcript still shows every answer.
 * console.log(session.transcript().filter((entry) => entry.kind === 'message').length); // 6
 * ```
 */
export async function compact(
  session: Session,
  options: CompactOptions,
): Promise<CompactionResult> {
  const keepRecentTokens = countOption(
    'keepRecentTokens',
    options.keepRecentTokens,
    DEFAULT_KEEP_RECENT_TOKENS,
  );
  const maxOutputTokens = countOption('maxOutputTokens', options.maxOutputTokens, 4096);
  const retry = retryPolicy(options, invalidOptions);
  if (busy.has(session)) {
    throw new CompactionError('BUSY', `a compaction is already running on session ${session.id}`);
  }
  const surface = priceSurface(session);
  const range =
    options.range === undefined
      ? selectRange(session, surface, keepRecentTokens)
      : resolveRange(session, surface, options.range);
  if (range === undefined) {
    return {
      replaced: false,
      skipped: 'nothing-to-compact',
      shadowedSeqs: [],
      tokensBefore: surface.totalTokens,
      tokensAfter: surface.totalTokens,
    };
  }
  busy.add(session);
  try {
    return await compactRange(session, surface, range, options, { maxOutputTokens, retry });
  } finally {
    busy.delete(session);
  }
}

async function compactRange(
  session: Session,
  surface: PricedSurface,
  range: SurfaceRange,
  options: CompactOptions,
  limits: { maxOutputTokens: number; retry: RetryPolicy },
): Promise<CompactionResult> {
  const id = crypto.randomUUID();
  const shadowed = surface.entries.slice(range.from, range.to + 1);
  const shadowedSeqs = shadowed.map((entry) => entry.seq);
  const shadowedTokens = shadowed.reduce((sum, entry) => sum + entry.tokens, 0);
  const tokensBefore = surface.totalTokens;
  const signal = options.signal ?? new AbortController().signal;
  const start = session.append('compaction/start', {
    id,
    kind: 'summary',
    trigger: options.trigger ?? 'manual',
    range: { start: shadowedSeqs[0] ?? -1, end: shadowedSeqs[shadowedSeqs.length - 1] ?? -1 },
    shadowedCount: shadowedSeqs.length,
    shadowedTokens,
    tokensBefore,
  });
  const base = { id, startSeq: start.seq, shadowedSeqs, tokensBefore };
  const close = (
    fields: { readonly [key: string]: JsonValue | TokenUsage },
    skipped?: CompactionSkip,
    error?: ProviderFailure,
  ) => {
    const tokensAfter = priceSurface(session).totalTokens;
    const data: CompactionBracketData = {
      id,
      replaced: skipped === undefined,
      ...(skipped === undefined ? {} : { reason: skipped }),
      ...(error === undefined ? {} : { error }),
      tokensBefore,
      tokensAfter,
      // The summarizer may not be the agent's model: name it, so its usage is priced as billed.
      model: { provider: options.model.provider, model: options.model.modelId },
      ...fields,
    };
    const end = session.append('compaction/end', data);
    return { endSeq: end.seq, tokensAfter };
  };

  const outcome = await summarize({
    model: options.model,
    header: requestHeaderAt(session, session.seq - 1),
    messages: messagesOf(surface.entries, range.from, range.to + 1),
    instructions: options.instructions ?? DEFAULT_INSTRUCTIONS,
    maxOutputTokens: limits.maxOutputTokens,
    signal,
    retry: limits.retry,
  });
  if (!outcome.ok) {
    const skipped = outcome.aborted ? 'aborted' : 'failed';
    const closed = close({}, skipped, outcome.failure);
    return { ...base, ...closed, replaced: false, skipped, error: outcome.failure };
  }

  const text = frame(outcome.text, shadowedSeqs);
  const summaryTokens = estimateTokens(text) + 4;
  const usage = outcome.usage === undefined ? {} : { usage: outcome.usage };
  if (summaryTokens >= shadowedTokens) {
    const closed = close({ summaryTokens, shadowedTokens, ...usage }, 'not-shorter');
    return { ...base, ...closed, ...usage, replaced: false, skipped: 'not-shorter', summary: text };
  }
  if (!unchanged(session, surface, range)) {
    const closed = close({ summaryTokens, shadowedTokens, ...usage }, 'surface-changed');
    return {
      ...base,
      ...closed,
      ...usage,
      replaced: false,
      skipped: 'surface-changed',
      summary: text,
    };
  }
  const message: UserMessage = {
    id: `summary-${id}`,
    role: 'user',
    content: [{ type: 'text', text }],
    source: {
      kind: 'compaction',
      id,
      replaces: { start: shadowedSeqs[0] ?? -1, end: shadowedSeqs[shadowedSeqs.length - 1] ?? -1 },
    },
  };
  const summary = session.append('user/message', message, {
    surfaceOp: {
      op: 'replace',
      start: shadowedSeqs[0] ?? -1,
      end: shadowedSeqs[shadowedSeqs.length - 1] ?? -1,
    },
    sourceEventSeqs: shadowedSeqs,
  });
  const closed = close({ summarySeq: summary.seq, summaryTokens, shadowedTokens, ...usage });
  return { ...base, ...closed, ...usage, replaced: true, summarySeq: summary.seq, summary: text };
}

/**
 * The summary as the model will read it: a header naming the replaced range, so the model (and
 * the recall tool) can find the originals in the log.
 */
function frame(summary: string, shadowedSeqs: readonly number[]): string {
  const low = Math.min(...shadowedSeqs);
  const high = Math.max(...shadowedSeqs);
  return `[Summary of the earlier conversation. It replaces ${shadowedSeqs.length} messages, log events #${low} to #${high}, which stay in the session log; the recall tool returns them (from ${low} to ${high}).]\n\n${summary}`;
}

/**
 * True when the range still sits where it was priced and no replace happened meanwhile. Appends
 * at the tail are allowed: they come after the range and survive it.
 */
function unchanged(session: Session, surface: PricedSurface, range: SurfaceRange): boolean {
  if (session.surface.replaceGeneration !== surface.replaceGeneration) return false;
  for (let i = range.from; i <= range.to; i++) {
    if (session.surface.at(i) !== surface.entries[i]?.seq) return false;
  }
  return true;
}
