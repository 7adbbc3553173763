/**
 * palimpsest/agent — the agent loop: runs turns against any AI SDK language model (spec v3),
 * executes tools, and records every step in a `Session` so any request can be rebuilt.
 *
 * @packageDocumentation
 */

// Log queries live in core; re-exported here, where users of the loop have always found them.
export {
  type AttemptFailure,
  anthropicBody,
  buildCallOptions,
  buildHeader,
  buildPrompt,
  type CacheBreak,
  type CacheBreakCause,
  type CacheCall,
  type CacheReport,
  type CallCost,
  type CallDigest,
  type CanonicalRequest,
  type ChildSessionCall,
  type CostBreakdown,
  type CostTotals,
  cacheReport,
  callCosts,
  callDigests,
  canonicalJson,
  checkPriceTable,
  DEFAULT_PRICES,
  DEFAULT_RETRY,
  type EntryRent,
  type EntryRentFigures,
  type ModelRates,
  type ModelSettings,
  openaiBody,
  type PriceEntry,
  type PriceTable,
  priceAt,
  priceUsage,
  providerFamily,
  type RecordedPrice,
  type RentFigures,
  type ResponseFormat,
  type RetryOptions,
  type RewriteSaving,
  recordedPrice,
  requestDigest,
  type SessionCost,
  type SessionCostOptions,
  type SummaryCost,
  sessionCost,
  splitUsage,
  summaryCost,
  type TokenRates,
  type TokenSplit,
  toolCallInput,
} from '../model/index.js';
export {
  Agent,
  type AgentOptions,
  type AgentPromptOptions,
  type AgentRunOptions,
  type QueueOptions,
} from './agent.js';
export { type AiSdkTool, type AiSdkToolExecutionOptions, fromAiSdkTool } from './ai-sdk-tools.js';
export {
  type AskAgainOptions,
  type AskAgainResult,
  type AskedAnswer,
  askAgain,
} from './ask-again.js';
export { type CostTree, costTree } from './cost-tree.js';
export { AgentError, type AgentErrorCode } from './errors.js';
export { type EvalCase, toEvalCase, turnEndAnswers } from './eval-case.js';
export {
  DEFAULT_MODELS,
  detectProvider,
  type Env,
  type EnvModel,
  type ModelForOptions,
  type ModelFromEnvOptions,
  type ModelSpec,
  modelFor,
  modelFromEnv,
  PROVIDER_KEYS,
  type ProviderName,
} from './model-from-env.js';
export {
  type ContextOverflowContext,
  type ContextOverflowHandler,
  isContextOverflow,
} from './overflow.js';
export { type RebuiltRequest, rebuildRequest } from './rebuild.js';
export {
  checkRequestDigests,
  type RequestAt,
  type RequestDigestMismatch,
  requestAt,
} from './request-at.js';
export {
  type InferArguments,
  jsonSchema,
  type StandardIssue,
  type StandardJsonSchema,
  type ToolParameters,
  type TypedJsonSchema,
} from './schema.js';
export {
  type RecallScope,
  type SessionRecallOptions,
  sessionRecallTools,
} from './session-recall.js';
export {
  type PendingMessages,
  pendingMessages,
  type QueuedMessage,
  type QueueKind,
} from './steering.js';
export {
  type TurnStreamEvent,
  type TurnStreamEventType,
  turnStreamEvent,
} from './stream-events.js';
export {
  SUBAGENT_FAILED,
  type SubagentSpec,
  subagentSessionId,
  subagentTool,
} from './subagent.js';
export type { ToolList } from './tool-list.js';
export {
  defineTool,
  TOOL_ERROR,
  type Tool,
  type ToolContent,
  type ToolContext,
  type ToolOutput,
  type ToolRun,
  type ToolSpec,
  toolContent,
} from './tools.js';
export { runTurn } from './turn.js';
export type { TurnRecord, TurnToolCall, TurnToolResult } from './turn-record.js';
export { streamTurn, type TurnStream } from './turn-stream.js';
export {
  DEFAULT_TOOL_OUTPUT_CHARS,
  type RetryInfo,
  type RunTurnOptions,
  type StepContext,
  type StepOutcome,
  type ToolCallDecision,
  type ToolCallOutcome,
  type ToolCallRequest,
  type ToolFailure,
  type ToolResultReplacement,
  type TurnConfig,
  type TurnDurability,
  type TurnHooks,
  type TurnInput,
  type TurnResult,
} from './types.js';
