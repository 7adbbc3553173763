/**
 * palimpsest/ai-sdk — palimpsest under the AI SDK's own loop: a middleware that records every
 * model call `streamText`, `generateText` or a `ToolLoopAgent` makes into a session, and the
 * conversion between palimpsest messages and the SDK's `ModelMessage`s.
 *
 * @packageDocumentation
 */
export { AiSdkError, type AiSdkErrorCode, type AiSdkErrorDetails } from './errors.js';
export { type FromModelMessagesOptions, fromModelMessages } from './from-model.js';
export { type SessionMiddleware, sessionMiddleware } from './middleware.js';
export type { SessionMiddlewareOptions } from './middleware-options.js';
export type { ToolResultDifference } from './replay-difference.js';
export {
  type ReplayLanguageModel,
  ReplayMissError,
  type ReplayMode,
  type ReplayModelOptions,
  type ReplayReport,
  replayModel,
} from './replay-model.js';
export { toModelMessages } from './to-model.js';
