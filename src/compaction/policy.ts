/**
 * Automatic compaction for the agent loop: a `beforeStep` hook that, when the next request would
 * exceed `threshold` of the context window, prunes old tool results first and compacts only if
 * that was not enough.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Session } from '../core/index.js';
import type { RetryOptions } from '../model/index.js';
import { type CompactionResult, compact } from './compact.js';
import { type ContextTokens, contextTokens } from './context.js';
import { CompactionError, countOption } from './errors.js';
import { type PruneOptions, type PruneResult, pruneToolResults } from './prune.js';

/** Options of {@link autoCompaction}; the retry knobs are passed to every compaction. */
export interface AutoCompactionOptions extends RetryOptions {
  /** The model that writes summaries (usually the agent's own). */
  readonly model: LanguageModelV3;
  /** The model's context window, in tokens. */
  readonly contextWindow: number;
  /** Act when the next request would exceed this share of the window (default 0.8). */
  readonly threshold?: number;
  /** Recent history a compaction keeps verbatim (default a quarter of the window). */
  readonly keepRecentTokens?: number;
  /** Prune tool results before compacting (default true). */
  readonly pruneFirst?: boolean;
  readonly prune?: PruneOptions;
  /** Summary instructions (see `compact`). */
  readonly instructions?: string;
  /** Told about every prune and compaction the policy runs. */
  readonly onAction?: (action: AutoCompactionAction) => void;
}

/** What the policy did before one step. */
export type AutoCompactionAction =
  | { readonly kind: 'prune'; readonly before: ContextTokens; readonly result: PruneResult }
  | { readonly kind: 'compact'; readonly before: ContextTokens; readonly result: CompactionResult };

/**
 * Where the loop is when the policy runs: the agent's `StepContext`, declared here by its
 * shape so compaction depends on core alone.
 */
export interface PolicyContext {
  readonly session: Session;
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal;
}

/**
 * A `beforeStep` hook that keeps the session under `threshold × contextWindow`:
 *
 * ```ts
 * await runTurn({ ...options, hooks: { beforeStep: autoCompaction({ model, contextWindow: 128_000 }) } });
 * ```
 */
export function autoCompaction(
  options: AutoCompactionOptions,
): (context: PolicyContext) => Promise<void> {
  const contextWindow = countOption('contextWindow', options.contextWindow, 0);
  const threshold = options.threshold ?? 0.8;
  if (!(threshold > 0 && threshold <= 1)) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `expected threshold in (0, 1], found ${threshold}`,
    );
  }
  const limit = Math.floor(contextWindow * threshold);
  const keepRecentTokens = countOption(
    'keepRecentTokens',
    options.keepRecentTokens,
    Math.floor(contextWindow / 4),
  );
  if (keepRecentTokens >= limit) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `expected keepRecentTokens (${keepRecentTokens}) below the threshold (${limit} tokens), or every compaction would keep everything`,
    );
  }
  return async ({ session, signal }) => {
    let measured = contextTokens(session);
    if (measured.tokens <= limit || signal.aborted) return;
    if (options.pruneFirst !== false) {
      const result = pruneToolResults(session, options.prune);
      if (result.prunedSeqs.length > 0) {
        options.onAction?.({ kind: 'prune', before: measured, result });
        measured = contextTokens(session);
        if (measured.tokens <= limit) return;
      }
    }
    const result = await compact(session, {
      model: options.model,
      keepRecentTokens,
      signal,
      trigger: 'auto',
      ...retryKnobs(options),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    });
    options.onAction?.({ kind: 'compact', before: measured, result });
  };
}

function retryKnobs(options: RetryOptions): RetryOptions {
  const { maxRetries, retryDelayMs, maxRetryDelayMs } = options;
  return {
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
    ...(maxRetryDelayMs === undefined ? {} : { maxRetryDelayMs }),
  };
}
