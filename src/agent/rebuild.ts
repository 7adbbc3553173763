/**
 * Rebuilding, from the log alone, the request a step sent: the `request/header` in effect and
 * the messages derived at the step's `step/start`.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type { Message, RequestHeaderData, Session } from '../core/index.js';
import { InvalidArgumentError, requestHeaderAt } from '../core/index.js';
import { buildCallOptions } from '../model/index.js';

/** A step's request as the log records it. */
export interface RebuiltRequest {
  readonly header: RequestHeaderData;
  readonly messages: readonly Message[];
  /** What the loop passed to `doStream` (without the abort signal and HTTP headers). */
  readonly callOptions: LanguageModelV3CallOptions;
  /** The seq of the step's `step/start`. */
  readonly stepStartSeq: number;
}

/**
 * The request step `step` of turn `turn` sent, rebuilt from the log.
 *
 * @throws InvalidArgumentError when the log has no such step, or no request header for it.
 */
export function rebuildRequest(session: Session, turn: number, step: number): RebuiltRequest {
  let stepStartSeq: number | undefined;
  for (let seq = 0; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event?.type !== 'step/start') continue;
    const data = event.data as { turn?: unknown; step?: unknown };
    if (data.turn === turn && data.step === step) {
      stepStartSeq = seq;
      break;
    }
  }
  if (stepStartSeq === undefined) {
    throw new InvalidArgumentError(`the log has no step ${step} of turn ${turn}`);
  }
  const { header, messages } = requestOfStep(session, stepStartSeq);
  return { header, messages, callOptions: buildCallOptions(header, messages), stepStartSeq };
}

/**
 * The header and messages of the request the step starting at `stepStartSeq` sent.
 *
 * @throws InvalidArgumentError when the step has no request header before its first chunk.
 */
export function requestOfStep(
  session: Session,
  stepStartSeq: number,
): { header: RequestHeaderData; messages: readonly Message[]; turn: number; step: number } {
  const start = session.event(stepStartSeq);
  const { turn, step } = (start?.data ?? {}) as { turn?: unknown; step?: unknown };
  const header = headerFor(session, stepStartSeq);
  if (header === undefined || typeof turn !== 'number' || typeof step !== 'number') {
    throw new InvalidArgumentError(
      `turn ${String(turn)} step ${String(step)} (seq ${stepStartSeq}) has no request/header before its first chunk`,
    );
  }
  return { header, messages: session.messagesAt(stepStartSeq), turn, step };
}

/** The header logged inside the step (before its first chunk), else the last one before it. */
function headerFor(session: Session, stepStartSeq: number): RequestHeaderData | undefined {
  for (let seq = stepStartSeq + 1; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event === undefined || event.type === 'assistant/chunk' || event.type === 'step/end') break;
    if (event.type === 'request/header') return event.data;
  }
  return requestHeaderAt(session, stepStartSeq - 1);
}
