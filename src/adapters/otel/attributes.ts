/**
 * The attribute names of the OpenTelemetry GenAI semantic conventions that the export writes,
 * and palimpsest's own. The GenAI names are still "Development" in the conventions, and
 * `@opentelemetry/semantic-conventions` asks users to copy incubating names rather than import
 * its incubating entry point, whose contents may change in any minor release.
 */

/**
 * The GenAI attribute names the export writes, for code that reads or redacts them.
 *
 * @example
 * ```ts
 * import { GEN_AI, type RedactHook } from 'palimpsest/otel';
 *
 * // Keep the tool arguments home even when content is exported.
 * const redact: RedactHook = (attributes) => {
 *   const { [GEN_AI.toolCallArguments]: _arguments, ...rest } = attributes;
 *   return rest;
 * };
 * console.log(GEN_AI.toolCallArguments); // 'gen_ai.tool.call.arguments'
 * console.log(Object.keys(redact({ [GEN_AI.toolCallArguments]: '{}' }, { kind: 'execute_tool', name: 'x', sessionId: 's', seq: 1 }) ?? {}).length); // 0
 * ```
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestTopK: 'gen_ai.request.top_k',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestSeed: 'gen_ai.request.seed',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
} as const;

/** `error.type`, the stable general convention for the class of a failure. */
export { ATTR_ERROR_TYPE as ERROR_TYPE } from '@opentelemetry/semantic-conventions';

/** palimpsest's own attributes: what the conventions have no name for (see {@link GEN_AI}). */
export const PALIMPSEST = {
  sessionId: 'palimpsest.session.id',
  seq: 'palimpsest.seq',
  turn: 'palimpsest.turn',
  step: 'palimpsest.step',
  turnEndReason: 'palimpsest.turn.end_reason',
  rawFinishReason: 'palimpsest.finish_reason.raw',
  retries: 'palimpsest.retries',
  interrupted: 'palimpsest.interrupted',
  toolDecision: 'palimpsest.tool.decision',
  childSession: 'palimpsest.child.session',
  forkParentSession: 'palimpsest.fork.parent_session',
  forkSeedLength: 'palimpsest.fork.seed_length',
  subagentParentSession: 'palimpsest.subagent.parent_session',
  subagentToolCallId: 'palimpsest.subagent.tool_call_id',
  linkType: 'palimpsest.link.type',
  compactionId: 'palimpsest.compaction.id',
  compactionKind: 'palimpsest.compaction.kind',
  compactionReplaced: 'palimpsest.compaction.replaced',
  compactionTokensBefore: 'palimpsest.compaction.tokens_before',
  compactionTokensAfter: 'palimpsest.compaction.tokens_after',
  compactionSummary: 'palimpsest.compaction.summary',
  /**
   * The call's cost in US dollars. The GenAI conventions define no cost attribute (as of
   * semantic-conventions 1.45), so it lives under palimpsest's own namespace.
   */
  costUsd: 'palimpsest.cost.usd',
} as const;

/** The names of the operations (`gen_ai.operation.name`) the export writes (see {@link GEN_AI}). */
export const OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;
