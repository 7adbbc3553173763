/**
 * The typed events a UI reads while a turn runs, each translated from one event the loop has
 * just appended: the stream is a view of the log, so the two cannot disagree, and a stored
 * session replays into the same events (`turnStreamEvent` over `session.events`).
 */
import { isElidedChunkData } from '../core/elided.js';
import type {
  AssistantMessage,
  ChildSessionLink,
  FinishReason,
  JsonValue,
  ProviderFailure,
  SessionEvent,
  StreamChunk,
  TokenUsage,
  ToolMessage,
  ToolResultContentBlock,
  TurnEndReason,
  UserMessage,
} from '../core/index.js';
import { isEventOfType } from '../core/index.js';

/** Where an event happened: every stream event names its log event (`seq`). */
interface At {
  /** The seq of the log event this stream event was read from. */
  readonly seq: number;
  readonly turn: number;
}

interface InStep extends At {
  readonly step: number;
}

/** A part of the model's stream, with the attempt of the step's call it belongs to. */
interface InAttempt extends InStep {
  /** 1 for the first attempt; after a `retry` event, the next attempt's parts say 2, 3... */
  readonly attempt: number;
}

/**
 * One event of a running turn, discriminated by `type`:
 *
 * | type | when |
 * |---|---|
 * | `turn-start`, `turn-end` | the turn's brackets; `turn-end` carries the reason |
 * | `user-message` | a user message entered the surface (the turn's input) |
 * | `step-start`, `step-end` | one model call and the tools it asked for |
 * | `text-delta`, `reasoning-delta` | streamed text and reasoning, by block `id` |
 * | `tool-call-start`, `tool-call-delta`, `tool-call-end` | the model writing a tool call: start and argument deltas when the provider streams them, `tool-call-end` with the complete arguments always |
 * | `message` | the step's assembled assistant message (what the model sees next time) |
 * | `tool-start` | a tool started executing (its `tool/call` event), with the arguments it runs with |
 * | `tool-result` | a call's result, whole, also for calls that were refused, denied or failed (`isError`, `code`) |
 * | `retry` | the attempt failed and will be retried: retract the text of `failedChunkSeqs` |
 */
export type TurnStreamEvent =
  | (At & { readonly type: 'turn-start' })
  | (At & { readonly type: 'turn-end'; readonly reason: TurnEndReason })
  | { readonly type: 'user-message'; readonly seq: number; readonly message: UserMessage }
  | (InStep & { readonly type: 'step-start' })
  | (InStep & { readonly type: 'step-end' })
  | (InAttempt & {
      readonly type: 'text-delta' | 'reasoning-delta';
      /** The provider's block id: deltas with the same id belong to one block. */
      readonly id: string;
      readonly delta: string;
    })
  | (InAttempt & {
      readonly type: 'tool-call-start';
      readonly callId: string;
      readonly name: string;
    })
  | (InAttempt & {
      readonly type: 'tool-call-delta';
      readonly callId: string;
      readonly delta: string;
    })
  | (InAttempt & {
      readonly type: 'tool-call-end';
      readonly callId: string;
      readonly name: string;
      /** The raw JSON arguments as the model wrote them. */
      readonly arguments: string;
    })
  | (InStep & {
      readonly type: 'message';
      readonly message: AssistantMessage;
      readonly finishReason: FinishReason;
      readonly usage?: TokenUsage;
      /** True when the response was cut (abort, provider failure). */
      readonly interrupted: boolean;
    })
  | (InStep & {
      readonly type: 'tool-start';
      readonly callId: string;
      readonly name: string;
      /** The arguments the tool runs with (after a `beforeToolCall` hook changed them). */
      readonly arguments: string;
      /** The child session the call runs in (a subagent), known as it starts. */
      readonly child?: ChildSessionLink;
    })
  | (InStep & {
      readonly type: 'tool-result';
      readonly callId: string;
      readonly message: ToolMessage;
      readonly content: readonly ToolResultContentBlock[];
      readonly isError: boolean;
      /** The error code (`TOOL_FAILED`, `TOOL_DENIED`...) when `isError`. */
      readonly code?: string;
      /** The child session whose answer this is (a subagent). */
      readonly child?: ChildSessionLink;
    })
  | (InStep & {
      readonly type: 'retry';
      /** The attempt that failed. */
      readonly attempt: number;
      readonly delayMs: number;
      readonly retryAfterMs?: number;
      readonly error: ProviderFailure;
      /** Seqs of the failed attempt's chunks: the text a UI showed and should retract. */
      readonly failedChunkSeqs: readonly number[];
    });

/** The `type` values of {@link TurnStreamEvent}. */
export type TurnStreamEventType = TurnStreamEvent['type'];

/**
 * The stream event a log event stands for, or `undefined` for events a UI does not need
 * (request headers, stream metadata, a surface replace of a result already reported whole).
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { runTurn, turnStreamEvent } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 *
 * const session = Session.create({ id: 'replay-example' });
 * await runTurn({ session, model: scriptedModel([{ text: 'Hi!' }]), input: 'hello' });
 * // A stored session replays into the events a live stream gave.
 * const text = session.events
 *   .map(turnStreamEvent)
 *   .map((event) => (event?.type === 'text-delta' ? event.delta : ''))
 *   .join('');
 * console.log(text); // 'Hi!'
 * ```
 */
export function turnStreamEvent(event: SessionEvent): TurnStreamEvent | undefined {
  const { seq } = event;
  if (isEventOfType(event, 'assistant/chunk')) {
    // An elided chunk (a stored session loaded with `chunks: 'elide'`) has no part left to show.
    if (isElidedChunkData(event.data)) return undefined;
    const { turn, step, chunk } = event.data;
    return chunkEvent({ seq, turn, step, attempt: event.data.attempt ?? 1 }, chunk);
  }
  if (isEventOfType(event, 'turn/start')) return { type: 'turn-start', seq, turn: event.data.turn };
  if (isEventOfType(event, 'turn/end')) {
    return { type: 'turn-end', seq, turn: event.data.turn, reason: event.data.reason };
  }
  if (isEventOfType(event, 'step/start') || isEventOfType(event, 'step/end')) {
    const { turn, step } = event.data;
    return { type: event.type === 'step/start' ? 'step-start' : 'step-end', seq, turn, step };
  }
  if (isEventOfType(event, 'user/message')) {
    if (event.surfaceOp !== 'append') return undefined;
    return { type: 'user-message', seq, message: event.data };
  }
  if (isEventOfType(event, 'assistant/message')) {
    const { turn, step, message, finishReason, usage } = event.data;
    return {
      type: 'message',
      seq,
      turn,
      step,
      message,
      finishReason,
      ...(usage === undefined ? {} : { usage }),
      interrupted: event.data.interrupted === true,
    };
  }
  if (isEventOfType(event, 'tool/call')) {
    const { turn, step, callId, name, child } = event.data;
    return {
      type: 'tool-start',
      seq,
      turn,
      step,
      callId,
      name,
      arguments: event.data.arguments,
      ...(child === undefined ? {} : { child }),
    };
  }
  if (isEventOfType(event, 'tool/result')) {
    // A replace is the model's excerpt of a result this stream already gave whole.
    if (event.surfaceOp !== 'append') return undefined;
    const { turn, step, message, error, child } = event.data;
    const block = message.content[0];
    return {
      type: 'tool-result',
      seq,
      turn,
      step,
      callId: block?.toolCallId ?? '',
      message,
      content: block?.content ?? [],
      isError: block?.isError === true,
      ...(error === undefined ? {} : { code: error.code }),
      ...(child === undefined ? {} : { child }),
    };
  }
  if (isEventOfType(event, 'request/retry')) {
    const { turn, step, attempt, delayMs, retryAfterMs, error } = event.data;
    return {
      type: 'retry',
      seq,
      turn,
      step,
      attempt,
      delayMs,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      error,
      failedChunkSeqs: event.sourceEventSeqs ?? [],
    };
  }
  return undefined;
}

function chunkEvent(at: InAttempt, chunk: StreamChunk): TurnStreamEvent | undefined {
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta': {
      const id = text(chunk.id);
      const delta = text(chunk.delta);
      return { ...at, type: chunk.type, id, delta };
    }
    case 'tool-input-start':
      // Provider-executed calls (server-side tools) are not the loop's to run or show as calls.
      if (chunk.providerExecuted === true) return undefined;
      return { ...at, type: 'tool-call-start', callId: text(chunk.id), name: text(chunk.toolName) };
    case 'tool-input-delta':
      return { ...at, type: 'tool-call-delta', callId: text(chunk.id), delta: text(chunk.delta) };
    case 'tool-call':
      if (chunk.providerExecuted === true) return undefined;
      return {
        ...at,
        type: 'tool-call-end',
        callId: text(chunk.toolCallId),
        name: text(chunk.toolName),
        arguments: text(chunk.input),
      };
    default:
      return undefined;
  }
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}
