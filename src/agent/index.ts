/**
 * palimpsest/agent — the agent loop: runs turns against any AI SDK language model (spec v3),
 * executes tools, and records every step in a `Session` so any request can be rebuilt.
 *
 * @packageDocumentation
 */
export { Agent, type AgentOptions } from './agent.js';
export { AgentError, type AgentErrorCode } from './errors.js';
export {
  DEFAULT_MODELS,
  type EnvModel,
  type ModelFromEnvOptions,
  modelFromEnv,
} from './model-from-env.js';
export { type RebuiltRequest, rebuildRequest, requestHeaderAt } from './rebuild.js';
export {
  buildCallOptions,
  buildHeader,
  buildPrompt,
  type ModelSettings,
  toolCallInput,
} from './request.js';
export type {
  InferArguments,
  StandardIssue,
  StandardJsonSchema,
  ToolParameters,
} from './schema.js';
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
export {
  lastTurnNumber,
  type RunTurnOptions,
  runTurn,
  type StepContext,
  type StepOutcome,
  type TurnConfig,
  type TurnHooks,
  type TurnInput,
  type TurnResult,
} from './turn.js';
