/**
 * palimpsest/agent — the agent loop: runs turns against any AI SDK language model (spec v3),
 * executes tools, and records every step in a `Session` so any request can be rebuilt.
 *
 * @packageDocumentation
 */

// Log queries live in core; re-exported here, where users of the loop have always found them.
export {
  type AttemptFailure,
  buildCallOptions,
  buildHeader,
  buildPrompt,
  DEFAULT_RETRY,
  type ModelSettings,
  type RetryOptions,
  toolCallInput,
} from '../model/index.js';
export { Agent, type AgentOptions, type AgentRunOptions } from './agent.js';
export { AgentError, type AgentErrorCode } from './errors.js';
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
export type {
  InferArguments,
  StandardIssue,
  StandardJsonSchema,
  ToolParameters,
} from './schema.js';
export {
  type PendingMessages,
  pendingMessages,
  type QueuedMessage,
  type QueueKind,
} from './steering.js';
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
export {
  DEFAULT_TOOL_OUTPUT_CHARS,
  type RetryInfo,
  type RunTurnOptions,
  type StepContext,
  type StepOutcome,
  type ToolFailure,
  type TurnConfig,
  type TurnDurability,
  type TurnHooks,
  type TurnInput,
  type TurnResult,
} from './types.js';
