/**
 * palimpsest — event-sourced LLM agent sessions.
 *
 * The core: the event log, its surface (the ordered view the model sees), derived messages,
 * transcript, crash repair, fork, the log linter and token estimates. Free of Node-specific
 * imports, so it runs in browsers too. What only a store backend needs (elided chunks, the
 * compact loaded log, header checks, usage from a few events) is in `palimpsest/backend`.
 *
 * @packageDocumentation
 */
export { deriveEventMessage } from './derive.js';
export { type Durable, isDurable } from './durable.js';
export { isElidedChunk } from './elided.js';
export {
  ForkError,
  type ForkErrorCode,
  InvalidArgumentError,
  PalimpsestError,
  type PalimpsestErrorClass,
  type SessionValidationCode,
  type SessionValidationDetails,
  SessionValidationError,
} from './errors.js';
export {
  type AppendData,
  type AssistantChunkData,
  type AssistantMessageData,
  type CheckpointData,
  type ChildSessionLink,
  type CompactionBracketData,
  dataAsJson,
  type ElidedChunkData,
  type ErasedEvent,
  type ErrorDetails,
  type EventData,
  type EventEnvelope,
  type FinishReason,
  type ForeignEvent,
  isAppendSurfaceEvent,
  isEventOfType,
  isSurfaceEligibleType,
  isValidEventType,
  type KnownEventType,
  type KnownSessionEvent,
  type LogEventType,
  type ProvenanceIntent,
  type ProviderFailure,
  type QueuedMessageData,
  type RedactionData,
  type ReplacedToolResult,
  type ReplaceOp,
  type RequestHeaderData,
  type RequestOverflowData,
  type RequestRetryData,
  replaceOpOf,
  type SessionEvent,
  type SessionEventMap,
  type StepData,
  type StreamChunk,
  type SurfaceEventType,
  type SurfaceIntent,
  type SurfaceOp,
  type TokenUsage,
  type ToolCallData,
  type ToolCallDecisionRecord,
  type ToolError,
  type ToolResultData,
  type ToolSchema,
  type TurnEndData,
  type TurnEndReason,
  type TurnStartData,
} from './events.js';
export { type ForkOptions, forkSession } from './fork.js';
export { SESSION_FORMAT_VERSION, type SessionEncryption, type SessionHeader } from './header.js';
export {
  checkInvariants,
  type InvariantCode,
  type InvariantOptions,
  type InvariantViolation,
} from './invariants.js';
export {
  DEFAULT_JSON_LIMITS,
  isJsonValue,
  type JsonArray,
  type JsonLimits,
  type JsonObject,
  type JsonPrimitive,
  type JsonValue,
  jsonEqual,
} from './json.js';
export {
  endsInsideTurn,
  isHeaderInEffect,
  lastTurnNumber,
  requestHeaderAt,
} from './log-queries.js';
export type { MessageList } from './message-list.js';
export { type FormatMessageOptions, formatMessage, messageText } from './message-text.js';
export type {
  AssistantContentBlock,
  AssistantMessage,
  ContentBlock,
  ImageBlock,
  Message,
  MessageSource,
  ModelSource,
  ReasoningBlock,
  TextBlock,
  ToolCallBlock,
  ToolMessage,
  ToolResultBlock,
  ToolResultContentBlock,
  UserContentBlock,
  UserMessage,
} from './messages.js';
export {
  contentMatches,
  REDACTED_TEXT,
  type RedactionPattern,
  redactedData,
  redactedSeqs,
} from './redaction.js';
export {
  type InterruptionKind,
  interruptionMarker,
  planOpenTurnRepair,
  planRepair,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from './repair.js';
export {
  type MessageCursor,
  type MessageDelta,
  Session,
  type SessionListener,
  type SessionOptions,
} from './session.js';
export {
  type SessionUsage,
  sessionUsage,
  type UsageTotals,
} from './session-usage.js';
export {
  applySurfaceOp,
  foldSurface,
  type SessionSurface,
  type SurfaceFold,
  type SurfaceReplacement,
} from './surface.js';
export {
  estimateMessagesTokens,
  estimateMessageTokens,
  estimateTokens,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
} from './tokens.js';
export type {
  TranscriptEntry,
  TranscriptMessage,
  TranscriptReplacement,
} from './transcript.js';
