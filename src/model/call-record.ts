/**
 * How one model call is written to the log: each stream part as an `assistant/chunk`, then one
 * `assistant/message` citing exactly the chunks of its attempt, then a `tool/call` for each call
 * that runs and a `tool/result` citing it. The agent loop and the AI SDK middleware both record
 * through these functions, so a call gives the same events whoever drives it; they live on the
 * model floor so that an adapter shares the rule without importing the loop's files.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type {
  AssistantMessage,
  ChildSessionLink,
  FinishReason,
  JsonObject,
  ProvenanceIntent,
  ReplacedToolResult,
  Session,
  SessionEvent,
  SurfaceIntent,
  ToolCallBlock,
  ToolCallDecisionRecord,
  ToolMessage,
} from '../core/index.js';
import { interruptionMarker } from '../core/index.js';
import { redactJson } from './redact.js';
import type { StepStream } from './step-stream.js';
import type { ToolRun } from './tool.js';
import { toChunk } from './wire-json.js';

/**
 * Appends one stream part of attempt `attempt` (1-based) of step `step` as an
 * `assistant/chunk` and adds it to `stream`. An `error` part's body is redacted of `secrets`:
 * a provider may echo credentials in it. The position is passed as scalars: this is the hot
 * path of every recorded stream.
 */
export function recordChunk(
  session: Session,
  turn: number,
  step: number,
  attempt: number,
  stream: StepStream,
  part: LanguageModelV3StreamPart,
  secrets: readonly string[],
): SessionEvent<'assistant/chunk'> {
  // The chunk object is built here for this event alone, so the session adopts it.
  let chunk = toChunk(part);
  if (part.type === 'error') chunk = redactJson(chunk, secrets) as typeof chunk;
  // One literal either way: marking a retried attempt's parts costs no allocation.
  const data = attempt === 1 ? { turn, step, chunk } : { turn, step, attempt, chunk };
  const event = session.appendAdopted('assistant/chunk', data);
  stream.add(part, event.seq);
  return event;
}

/** The model a message is attributed to. */
export interface MessageModel {
  readonly provider: string;
  readonly modelId: string;
}

/** What {@link recordAssistantMessage} appended. */
export interface RecordedMessage {
  readonly message: AssistantMessage;
  readonly event: SessionEvent<'assistant/message'>;
  /** The message's text blocks, joined. */
  readonly text: string;
}

/**
 * Appends the `assistant/message` of one attempt, citing every chunk of it (`[]` for an empty
 * stream). An interrupted attempt (`aborted`, `error`) keeps its partial text with a marker
 * and none of its tool calls. `requestDigest` is the digest of the request the call received
 * ({@link requestDigest}), recorded beside the answer.
 */
export function recordAssistantMessage(
  session: Session,
  position: { readonly turn: number; readonly step: number },
  model: MessageModel,
  stream: StepStream,
  finishReason: FinishReason,
  interrupted: 'aborted' | 'error' | undefined,
  requestDigest?: string,
): RecordedMessage {
  const content = stream.content(interrupted !== undefined);
  const text = content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  if (interrupted !== undefined && content.length > 0)
    content.push(interruptionMarker(interrupted));
  const message: AssistantMessage = {
    id: crypto.randomUUID(),
    role: 'assistant',
    content,
    source: { kind: 'model', provider: model.provider, model: model.modelId },
  };
  const event = session.append(
    'assistant/message',
    {
      turn: position.turn,
      step: position.step,
      message,
      finishReason,
      ...(stream.rawFinishReason === undefined ? {} : { rawFinishReason: stream.rawFinishReason }),
      ...(stream.usage === undefined ? {} : { usage: stream.usage }),
      ...(interrupted === undefined ? {} : { interrupted: true as const }),
      ...(stream.providerMetadata === undefined
        ? {}
        : { providerMetadata: stream.providerMetadata }),
      ...(requestDigest === undefined ? {} : { requestDigest }),
    },
    { surfaceOp: 'append', sourceEventSeqs: stream.chunkSeqs },
  );
  return { message, event, text };
}

/** The surface and provenance intent that appends `event` again (a planned repair closer). */
export function intentOf(event: SessionEvent): SurfaceIntent | ProvenanceIntent | undefined {
  if (event.surfaceOp !== undefined) {
    return {
      surfaceOp: event.surfaceOp,
      ...(event.sourceEventSeqs === undefined ? {} : { sourceEventSeqs: event.sourceEventSeqs }),
    };
  }
  return event.sourceEventSeqs === undefined
    ? undefined
    : { sourceEventSeqs: event.sourceEventSeqs };
}

/**
 * Appends the `tool/call` of one call about to run, with the arguments it runs with (a hook may
 * have rewritten the model's), the decision that let it run, if one was asked for, and the
 * child session it runs in, if it runs in one.
 */
export function recordToolCall(
  session: Session,
  position: { readonly turn: number; readonly step: number },
  call: ToolCallBlock,
  args: string,
  decision: ToolCallDecisionRecord | undefined,
  child?: ChildSessionLink,
): SessionEvent<'tool/call'> {
  return session.append('tool/call', {
    turn: position.turn,
    step: position.step,
    callId: call.id,
    name: call.name,
    ...(child === undefined ? {} : { child }),
    arguments: args,
    ...(decision === undefined ? {} : { decision }),
  });
}

/** Where a tool result goes: its step, and the seq it cites. */
export interface ResultPosition {
  readonly turn: number;
  readonly step: number;
  readonly sourceSeq: number;
}

/**
 * What a tool result records besides its outcome: the decision behind it, the result it
 * replaced, and the provider data a framework attached to it in the request.
 */
export interface ResultNotes {
  readonly decision?: ToolCallDecisionRecord | undefined;
  readonly replaced?: ReplacedToolResult | undefined;
  readonly providerMetadata?: JsonObject | undefined;
  /** The content is one JSON value the provider received as JSON (see `ToolResultBlock`). */
  readonly isJson?: boolean | undefined;
}

/**
 * Appends the `tool/result` of one call, citing `position.sourceSeq` (its `tool/call`, or the
 * message that requested it when it never started).
 */
export function recordToolResult(
  session: Session,
  position: ResultPosition,
  call: ToolCallBlock,
  outcome: ToolRun,
  notes: ResultNotes,
): SessionEvent<'tool/result'> {
  const { decision, replaced, providerMetadata, isJson } = notes;
  const { turn, step, sourceSeq } = position;
  const message: ToolMessage = {
    id: crypto.randomUUID(),
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: call.id,
        content: outcome.content,
        ...(outcome.error === undefined ? {} : { isError: true }),
        ...(isJson === true ? { isJson } : {}),
        ...(providerMetadata === undefined ? {} : { providerMetadata }),
      },
    ],
  };
  return session.append(
    'tool/result',
    {
      turn,
      step,
      message,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      ...(decision === undefined ? {} : { decision }),
      ...(replaced === undefined ? {} : { replaced }),
      ...(outcome.child === undefined ? {} : { child: outcome.child }),
    },
    { surfaceOp: 'append', sourceEventSeqs: [sourceSeq] },
  );
}
