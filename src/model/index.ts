/**
 * The model-call layer: everything between a caller that wants one model call (the agent loop,
 * compaction) and an AI SDK language model, and how a call is recorded in a session (the rule
 * the loop and the AI SDK middleware share, `call-record.ts`). Internal: `palimpsest/agent` re-exports the names
 * users need.
 */
export { sleep, untilAborted } from './abort.js';
export {
  type CacheBreak,
  type CacheBreakCause,
  type CacheCall,
  type CacheReport,
  cacheReport,
  requestHeaderTokens,
} from './cache-report.js';
export {
  type CallModelOptions,
  type CallOutcome,
  callModel,
  type RetryNotice,
  readStream,
} from './call.js';
export { type CostBreakdown, priceUsage, splitUsage, type TokenSplit } from './call-cost.js';
export { type CallCost, callCosts, type SessionCostOptions } from './call-costs.js';
export { type CallDigest, callDigests } from './call-digests.js';
export {
  intentOf,
  type MessageModel,
  type RecordedMessage,
  type ResultNotes,
  type ResultPosition,
  recordAssistantMessage,
  recordChunk,
  recordToolCall,
  recordToolResult,
} from './call-record.js';
export { type CallReader, type CallStart, walkCalls } from './call-walk.js';
export { DEFAULT_PRICES } from './default-prices.js';
export { codePoints, type ExcerptOptions, excerptBlocks, textChars } from './excerpt.js';
export { type AttemptFailure, backoffMs, classifyFailure } from './failure.js';
export { messageTokens } from './message-tokens.js';
export {
  countOption,
  DEFAULT_RETRY,
  type RetryOptions,
  type RetryPolicy,
  retryPolicy,
} from './options.js';
export {
  checkPriceTable,
  type ModelRates,
  type PriceEntry,
  type PriceTable,
  priceAt,
  providerFamily,
  type RecordedPrice,
  recordedPrice,
  type TokenRates,
  withPrice,
} from './price-table.js';
export { buildPrompt } from './prompt.js';
export { toolCallInput, toolOutput } from './prompt-parts.js';
export { anthropicBody, openaiBody } from './provider-bodies.js';
export { knownSecrets, REDACTED, redactJson, redactSecrets, SECRET_ENV_VARS } from './redact.js';
export {
  buildCallOptions,
  buildHeader,
  type ModelSettings,
  NUMBER_SETTINGS,
  type ResponseFormat,
} from './request.js';
export {
  type CanonicalRequest,
  canonicalJson,
  canonicalRequest,
  headText,
  type MessageFacts,
  messageFacts,
  messageText,
  RequestDigester,
  RunningDigest,
  requestDigest,
  sessionRequestDigest,
} from './request-digest.js';
export {
  type CostTotals,
  type EntryRent,
  type RewriteSaving,
  type SessionCost,
  sessionCost,
} from './session-cost.js';
export { StepStream } from './step-stream.js';
export { type SummaryCost, summaryCost } from './summary-cost.js';
export type { EntryRentFigures, RentFigures } from './token-rent.js';
export {
  type ChildSessionCall,
  errorDetails,
  errorRun,
  parseToolArguments,
  TOOL_ERROR,
  TOOL_NAME,
  type Tool,
  type ToolContext,
  type ToolRun,
} from './tool.js';
export { addUsage, mapUsage, type UsageCounts } from './usage.js';
export { toChunk, toLogJson } from './wire-json.js';
