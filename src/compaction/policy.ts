/**
 * Automatic compaction for the agent loop: a `beforeStep` hook that, when the next request would
 * exceed `threshold` of the context window, prunes old tool results first and compacts only if
 * that was not enough.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Session } from '../core/index.js';
import type { RetryOptions } from '../model/index.js';
import { type CompactionResult, type CompactOptions, compact } from './compact.js';
import { type ContextTokens, contextTokens } from './context.js';
import { CompactionError, countOption } from './errors.js';
import { type PruneOptions, type PruneResult, pruneToolResults } from './prune.js';
import { priceSurface } from './surface-entries.js';

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
  /**
   * Work with the provider's prompt cache. It holds the whole previous request, so a rewrite of
   * history sends everything after the first entry it rewrote uncached again, but once the cache
   * has gone cold (the last model call ended `cacheTtlMs` ago or more) the next request is
   * written whole anyway and a rewrite costs nothing cached. With `cacheAware` the policy then
   * acts already at `coldThreshold` of the window, and while the cache is warm it compacts (a
   * rewrite from the start) only past `forceThreshold`. Off by default.
   */
  readonly cacheAware?: boolean;
  /** How long the provider keeps a prompt cache, in ms (default 300,000: five minutes). */
  readonly cacheTtlMs?: number;
  /** With `cacheAware`, the share of the window a cold cache is pruned and compacted at (default half of `threshold`). */
  readonly coldThreshold?: number;
  /** With `cacheAware`, the share of the window past which a warm cache is compacted (default `threshold`). */
  readonly forceThreshold?: number;
  /** The clock the cache's age is read against event times with (default `Date.now`). */
  readonly clock?: () => number;
}

/** What the policy did before one step. */
export type AutoCompactionAction = (
  | { readonly kind: 'prune'; readonly result: PruneResult }
  | { readonly kind: 'compact'; readonly result: CompactionResult }
) & {
  readonly before: ContextTokens;
  /**
   * Estimated tokens of the surface before the first entry the action rewrote: the prefix a
   * provider's cache still holds after it.
   */
  readonly keptCachedTokens: number;
};

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
  const cache = cacheLimits(options, contextWindow, threshold, keepRecentTokens);
  const clock = options.clock ?? Date.now;
  return async ({ session, signal }) => {
    let measured = contextTokens(session);
    const warm = cache === undefined || cacheIsWarm(session, clock(), cache.ttlMs);
    const actAt = warm ? limit : (cache?.coldLimit ?? limit);
    if (measured.tokens <= actAt || signal.aborted) return;
    if (options.pruneFirst !== false) {
      const result = pruneToolResults(session, options.prune);
      if (result.prunedSeqs.length > 0) {
        const keptCachedTokens = tokensBefore(session, result.replacementSeqs[0]);
        options.onAction?.({ kind: 'prune', before: measured, result, keptCachedTokens });
        measured = contextTokens(session);
        if (measured.tokens <= actAt) return;
      }
    }
    // A compaction rewrites from the start: on a warm cache, only past the forced threshold.
    if (cache !== undefined && warm && measured.tokens <= cache.forceLimit) return;
    const result = await compact(session, {
      model: options.model,
      keepRecentTokens,
      signal,
      trigger: 'auto',
      ...retryKnobs(options),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    });
    const keptCachedTokens = tokensBefore(session, result.summarySeq);
    options.onAction?.({ kind: 'compact', before: measured, result, keptCachedTokens });
  };
}

/** With `cacheAware`, the limits of a cold and of a warm cache, and the cache's lifetime. */
function cacheLimits(
  options: AutoCompactionOptions,
  contextWindow: number,
  threshold: number,
  keepRecentTokens: number,
): { coldLimit: number; forceLimit: number; ttlMs: number } | undefined {
  if (options.cacheAware !== true) return undefined;
  const cold = options.coldThreshold ?? threshold / 2;
  const force = options.forceThreshold ?? threshold;
  if (!(cold > 0 && cold <= threshold)) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `expected coldThreshold in (0, threshold (${threshold})], found ${cold}`,
    );
  }
  if (!(force >= threshold && force <= 1)) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `expected forceThreshold in [threshold (${threshold}), 1], found ${force}`,
    );
  }
  const coldLimit = Math.floor(contextWindow * cold);
  if (keepRecentTokens >= coldLimit) {
    throw new CompactionError(
      'INVALID_OPTIONS',
      `expected keepRecentTokens (${keepRecentTokens}) below the cold threshold (${coldLimit} tokens), or every compaction of a cold cache would keep everything`,
    );
  }
  const ttlMs = countOption('cacheTtlMs', options.cacheTtlMs, 300_000);
  return { coldLimit, forceLimit: Math.floor(contextWindow * force), ttlMs };
}

/** Whether the last model call ended less than `ttlMs` before `now`. */
function cacheIsWarm(session: Session, now: number, ttlMs: number): boolean {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event?.type === 'assistant/message') return now - event.time < ttlMs;
  }
  return false;
}

/** Estimated tokens of the surface entries before `seq` (the whole surface when absent). */
function tokensBefore(session: Session, seq: number | undefined): number {
  let tokens = 0;
  for (const entry of priceSurface(session).entries) {
    if (entry.seq === seq) break;
    tokens += entry.tokens;
  }
  return tokens;
}

/** Options of {@link compactOnOverflow}: those of `compact`, and pruning first. */
export interface OverflowCompactionOptions extends Omit<CompactOptions, 'signal' | 'trigger'> {
  /** Prune old tool results before compacting (default true). */
  readonly pruneFirst?: boolean;
  readonly prune?: PruneOptions;
  /** Told about the prune and the compaction it runs. */
  readonly onAction?: (action: OverflowCompactionAction) => void;
}

/** What {@link compactOnOverflow} did after an overflow. */
export type OverflowCompactionAction =
  | { readonly kind: 'prune'; readonly result: PruneResult }
  | { readonly kind: 'compact'; readonly result: CompactionResult };

/**
 * An `onContextOverflow` handler for the agent loop: when the provider refuses a request as
 * longer than the context window, it prunes old tool results, then compacts (trigger
 * `overflow`), and tells the loop whether it freed anything (the loop then retries the model
 * call once). The agent and compaction never import each other, so the loop takes this as a
 * callback; its context is {@link PolicyContext}, the loop's step context by shape.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { runTurn } from 'palimpsest/agent';
 * import { compactOnOverflow } from 'palimpsest/compaction';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'overflow-example' });
 * const chat = scriptedModel([{ text: 'A long answer about the build. '.repeat(40) }], { loop: true });
 * for (const input of ['Why did the build fail?', 'Where exactly?']) {
 *   await runTurn({ session, model: chat, input });
 * }
 * // The provider refuses the third request as too long, then answers the compacted one.
 * const tooLong = { message: 'maximum context length is 8192 tokens', status: 400, type: 'invalid_request_error' };
 * const model = scriptedModel([{ error: tooLong }, { text: 'Fixed in src/config.ts.' }]);
 * const writer = scriptedModel([{ text: 'Summary: the build failed on a type error.' }]);
 * const result = await runTurn({
 *   session,
 *   model,
 *   input: 'How do I fix it?',
 *   onContextOverflow: compactOnOverflow({ model: writer, keepRecentTokens: 0 }),
 * });
 * console.log(result.reason.kind); // 'completed'
 * console.log(result.steps); // 2: the refused call, then the retry after compaction
 * console.log(session.events.filter((event) => event.type === 'request/overflow').length); // 1
 * ```
 */
export function compactOnOverflow(
  options: OverflowCompactionOptions,
): (context: PolicyContext) => Promise<boolean> {
  const { pruneFirst, prune, onAction, ...compactOptions } = options;
  return async ({ session, signal }) => {
    let freed = false;
    if (pruneFirst !== false) {
      const result = pruneToolResults(session, prune);
      if (result.prunedSeqs.length > 0) {
        freed = true;
        onAction?.({ kind: 'prune', result });
      }
    }
    if (signal.aborted) return freed;
    const result = await compact(session, { ...compactOptions, signal, trigger: 'overflow' });
    onAction?.({ kind: 'compact', result });
    return freed || result.replaced;
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
