/**
 * How one model call is written to the log: each stream part as an `assistant/chunk`, then one
 * `assistant/message` citing exactly the chunks of its attempt. The loop and the AI SDK
 * middleware both record through these functions, so a call gives the same events whoever
 * drives it.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type {
  AssistantMessage,
  FinishReason,
  ProvenanceIntent,
  Session,
  SessionEvent,
  SurfaceIntent,
} from '../core/index.js';
import { interruptionMarker } from '../core/index.js';
import { redactJson } from '../model/index.js';
import type { StepStream } from './step-stream.js';
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
 * and none of its tool calls.
 */
export function recordAssistantMessage(
  session: Session,
  position: { readonly turn: number; readonly step: number },
  model: MessageModel,
  stream: StepStream,
  finishReason: FinishReason,
  interrupted: 'aborted' | 'error' | undefined,
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
