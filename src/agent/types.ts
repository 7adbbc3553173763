/**
 * The public types of the agent loop: what a turn takes, what its hooks see, what it returns.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type {
  AssistantMessage,
  Durable,
  FinishReason,
  JsonObject,
  JsonValue,
  RequestRetryData,
  Session,
  SessionEvent,
  TokenUsage,
  ToolError,
  ToolMessage,
  ToolResultContentBlock,
  TurnEndReason,
  UserContentBlock,
} from '../core/index.js';
import type { ModelSettings, PriceTable, RetryOptions } from '../model/index.js';
import type { ContextOverflowHandler } from './overflow.js';
import type { ToolList } from './tool-list.js';
import type { TurnRecord } from './turn-record.js';

/** The default of `maxToolOutputChars`: about 10,000 tokens of English text. */
export const DEFAULT_TOOL_OUTPUT_CHARS = 40_000;

/** A user's input: text, or content blocks (text and images). */
export type TurnInput = string | readonly UserContentBlock[];

/** Where the loop is: passed to hooks. */
export interface StepContext {
  readonly session: Session;
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal;
}

/** What one step produced: passed to `afterStep`. */
export interface StepOutcome extends StepContext {
  readonly message: AssistantMessage;
  readonly finishReason: FinishReason;
  readonly usage?: TokenUsage;
  readonly toolResults: readonly ToolMessage[];
}

/** A tool call that ended in an error result: passed to `onToolError`. */
export interface ToolFailure {
  readonly turn: number;
  readonly step: number;
  readonly callId: string;
  /** The tool name the model called (possibly one that does not exist). */
  readonly name: string;
  /** The result's error code (`TOOL_FAILED`, `INVALID_ARGUMENTS`, `TOOL_NOT_RUN`...). */
  readonly code: string;
  /** The message the model reads. */
  readonly message: string;
  /** What the tool threw, as it was (with its stack and cause), when it threw. */
  readonly error?: unknown;
  /** The `tool/result` event recorded for it. */
  readonly event: SessionEvent<'tool/result'>;
}

/**
 * A failed attempt of a step's model call that will be retried, passed to `onRetry`: the
 * `request/retry` data (`attempt` is the attempt that failed, `delayMs` the wait before the next,
 * `retryAfterMs` what the provider asked for), the failed attempt's chunks and the event.
 */
export interface RetryInfo extends RequestRetryData {
  /** Seqs of the failed attempt's `assistant/chunk` events: text a UI showed and should retract. */
  readonly failedChunkSeqs: readonly number[];
  /** The `request/retry` event recorded for it. */
  readonly event: SessionEvent<'request/retry'>;
}

/** A call about to run, passed to `beforeToolCall`. */
export interface ToolCallRequest extends StepContext {
  readonly callId: string;
  readonly name: string;
  /** The raw JSON arguments the model wrote. */
  readonly arguments: string;
  /** The arguments parsed as JSON, or `undefined` when they are not JSON (the tool refuses those). */
  readonly input: JsonValue | undefined;
  /**
   * True when the tool asks for approval of this call (`defineTool({ needsApproval })`, an AI
   * SDK tool's `needsApproval`). Without a `beforeToolCall` hook such a call is denied.
   */
  readonly needsApproval: boolean;
}

/**
 * What `beforeToolCall` decides (returning nothing allows the call):
 * - `allow`: run it as the model wrote it;
 * - `deny`: do not run it; the model reads `reason` in a `TOOL_DENIED` error result;
 * - `modify`: run it with these arguments instead (validated by the tool as usual).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { defineTool, runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 * import { z } from 'zod';
 *
 * const shell = defineTool({
 *   name: 'shell',
 *   parameters: z.object({ cmd: z.string() }),
 *   needsApproval: true,
 *   execute: ({ cmd }) => `ran ${cmd}`,
 * });
 * const model = scriptedModel([
 *   { toolCalls: [{ name: 'shell', args: { cmd: 'rm -rf /' } }] },
 *   { text: 'I was not allowed to.' },
 * ]);
 * const session = Session.create({ id: 'approval-example' });
 * const result = await runTurn({
 *   session,
 *   model,
 *   tools: [shell],
 *   input: 'Clean the disk.',
 *   hooks: {
 *     beforeToolCall: ({ input }) =>
 *       JSON.stringify(input).includes('rm -rf /')
 *         ? { action: 'deny', reason: 'never outside the workspace' }
 *         : { action: 'allow' },
 *   },
 * });
 * console.log(result.toolResults[0]?.code); // 'TOOL_DENIED'
 * console.log(result.toolCalls[0]?.started); // false
 * ```
 */
export type ToolCallDecision =
  | { readonly action: 'allow' }
  | { readonly action: 'deny'; readonly reason: string }
  | { readonly action: 'modify'; readonly arguments: JsonObject };

/** A call that ran, passed to `afterToolCall`. */
export interface ToolCallOutcome extends StepContext {
  readonly callId: string;
  readonly name: string;
  /** The raw JSON arguments the tool ran with. */
  readonly arguments: string;
  /** What the tool produced, as the model would read it. */
  readonly content: readonly ToolResultContentBlock[];
  /** Present when the call failed (`TOOL_FAILED`, `INVALID_ARGUMENTS`...). */
  readonly error?: ToolError;
  /** What the tool threw, when it threw. */
  readonly thrown?: unknown;
}

/**
 * What `afterToolCall` returns to replace a result (returning nothing keeps it): text or content
 * blocks, and an error when the replacement is one. The tool's own result stays in the log.
 */
export interface ToolResultReplacement {
  readonly content: string | readonly ToolResultContentBlock[];
  readonly error?: { readonly code: string; readonly message: string };
}

/** Callbacks around the loop. A hook that throws ends the turn (brackets closed) and rethrows. */
export interface TurnHooks {
  /** Before each step opens: append context, or compact, here. */
  readonly beforeStep?: (context: StepContext) => void | Promise<void>;
  /** After each step closes. */
  readonly afterStep?: (outcome: StepOutcome) => void | Promise<void>;
  /** Every event the loop appends, right after it is appended (synchronously). */
  readonly onEvent?: (event: SessionEvent) => void;
  /**
   * Each tool call that ended in an error result, right after its `tool/result` is appended
   * (synchronously): the model reads the message, this is where the developer sees the failure.
   */
  readonly onToolError?: (failure: ToolFailure) => void;
  /**
   * Each failed attempt that will be retried, right after its `request/retry` is appended and
   * before the wait (synchronously).
   */
  readonly onRetry?: (retry: RetryInfo) => void;
  /**
   * Before each call of a known tool starts, in call order: allow it, deny it with a reason the
   * model reads, or change its arguments. Recorded: `decision` on the `tool/call` (allow,
   * modify), or a `TOOL_DENIED` `tool/result` with `decision` (deny), appended as it is decided.
   */
  readonly beforeToolCall?: (
    call: ToolCallRequest,
  ) => ToolCallDecision | undefined | Promise<ToolCallDecision | undefined>;
  /**
   * After each call that started has its result, in call order: return a replacement to change
   * what the model reads. Recorded: the `tool/result` holds the replacement and keeps the tool's
   * own result in `replaced`.
   */
  readonly afterToolCall?: (
    outcome: ToolCallOutcome,
  ) => ToolResultReplacement | undefined | Promise<ToolResultReplacement | undefined>;
}

/**
 * What the loop does about durability when it has no barrier:
 * - `best-effort` (the default): it waits on the barrier when there is one and goes on without
 *   it otherwise (an in-memory session, a session recorded by the caller's own subscriber);
 * - `required`: the turn refuses to start (`AgentError` `NOT_DURABLE`) unless there is one.
 */
export type TurnDurability = 'required' | 'best-effort';

/** Configuration that stays the same across turns (what {@link Agent} holds). */
export interface TurnConfig extends RetryOptions {
  readonly model: LanguageModelV3;
  /**
   * The tools the model may call: a list of `defineTool` tools, or a record by name whose values
   * may also be AI SDK `tool()` objects (see {@link ToolList}).
   */
  readonly tools?: ToolList;
  readonly system?: string;
  readonly settings?: ModelSettings;
  /**
   * The price table whose rates for the model are recorded in the session's `request/header`
   * (`price`), so `sessionCost` prices the session as it was billed. Default
   * `DEFAULT_PRICES`; `false` records none (a model the table does not know records none
   * either).
   */
  readonly prices?: PriceTable | false;
  readonly hooks?: TurnHooks;
  /**
   * The finish reasons after which the tool calls of a response are run (default `['stop',
   * 'tool-calls']`). After any other finish (`length`, `content-filter`, `other`, `unknown`,
   * as the AI SDK 6 loop decides) each call is answered `TOOL_NOT_RUN` and the turn ends; add a
   * reason here to run complete calls after it anyway.
   */
  readonly runToolsAfter?: readonly FinishReason[];
  /**
   * Characters of a tool's output the model gets, for tools without their own
   * `maxOutputChars` (default {@link DEFAULT_TOOL_OUTPUT_CHARS}, 40,000). Longer output is kept
   * whole in the log and replaced on the surface by a head/tail excerpt that names its event.
   */
  readonly maxToolOutputChars?: number;
  /** Model calls per turn before the turn ends with `max-steps` (default 25). */
  readonly maxSteps?: number;
  /** HTTP headers for every model call; not recorded (they often hold credentials). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The durability barrier the loop waits on before any tool runs (so the `tool/call` events
   * survive a crash and repair can tell a call that never started from one whose outcome is
   * unknown) and before `runTurn` returns. Default: the session itself when it is
   * {@link Durable} (a `LiveSession` is).
   */
  readonly barrier?: Durable;
  /** What happens without a barrier (default `best-effort`); see {@link TurnDurability}. */
  readonly durability?: TurnDurability;
  /**
   * Makes room when the provider refuses a request as longer than the context window
   * (`isContextOverflow`): the loop appends `request/overflow`, calls this, and when it resolves
   * `true` retries the model call once, as the next step. Without it, or when it frees nothing or
   * the retry overflows too, the turn ends `{kind: 'context-overflow'}`. Wire it to compaction:
   * `onContextOverflow: compactOnOverflow({ model })` (`palimpsest/compaction`).
   */
  readonly onContextOverflow?: ContextOverflowHandler;
}

/** Everything one turn needs. */
export interface RunTurnOptions extends TurnConfig {
  readonly session: Session;
  readonly input: TurnInput;
  readonly signal?: AbortSignal;
  /**
   * The client's id for this prompt, so a resend is admitted once: the first admission records
   * it in the user message's source (`{kind: 'user', requestId}`); a later call with the same id
   * adds nothing and answers with the turn it started (resuming that turn first when a crash
   * interrupted it). See {@link TurnResult.repeated}.
   */
  readonly requestId?: string;
}

/**
 * What a turn did. `messages`, `toolCalls` and `toolResults` are read back from the log
 * between `startSeq` and `endSeq` (see {@link TurnRecord}): the assistant and tool messages the
 * turn added, as the model sees them (a long tool output as its excerpt); every call the model
 * asked for; every result, whole.
 */
export interface TurnResult extends TurnRecord {
  readonly turn: number;
  readonly reason: TurnEndReason;
  /** Model calls made (steps opened). */
  readonly steps: number;
  /** The text of the last assistant message. */
  readonly text: string;
  /** Usage summed over the turn's steps, as the provider reported it. */
  readonly usage: TokenUsage;
  /** Seqs of the turn's `turn/start` and `turn/end`. */
  readonly startSeq: number;
  readonly endSeq: number;
  /**
   * Present when the call's request id had been admitted before: no input was added, and this
   * is the result of the turn that request started, or of the turn that resumed it.
   */
  readonly repeated?: true;
}
