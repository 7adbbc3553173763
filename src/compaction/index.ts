/**
 * palimpsest/compaction — summary compaction, tool-result pruning, the automatic policy for the
 * agent loop, and the recall tool. Everything here is an ordinary replace append through the
 * `Session`: the surface is rewritten for the model, the log keeps every original event. The
 * token estimates the policies count with (`estimateTokens`...) are core's, exported once, from
 * `palimpsest`.
 *
 * @packageDocumentation
 */
export {
  type CompactionResult,
  type CompactionSkip,
  type CompactOptions,
  compact,
} from './compact.js';
export { type ContextTokens, contextTokens } from './context.js';
export { CompactionError, type CompactionErrorCode } from './errors.js';
export {
  type AutoCompactionAction,
  type AutoCompactionOptions,
  autoCompaction,
  compactOnOverflow,
  type OverflowCompactionAction,
  type OverflowCompactionOptions,
  type PolicyContext,
} from './policy.js';
export { type PruneOptions, type PruneResult, pruneToolResults } from './prune.js';
export { type RecallOptions, recallTool } from './recall.js';
export { DEFAULT_INSTRUCTIONS } from './summarizer.js';
