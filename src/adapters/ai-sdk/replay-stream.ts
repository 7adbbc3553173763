/**
 * A recorded call's stream, read back from the log: its parts in order, with the time each
 * followed the one before (the first, the time from the step's start), so a replay can keep the
 * recorded pace.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { JsonObject, Session, SessionEvent } from '../../core/index.js';

/** One recorded stream part and the milliseconds it followed the previous one by. */
export interface PacedPart {
  readonly part: LanguageModelV3StreamPart;
  readonly afterMs: number;
}

/** The recorded stream of the call answered by `answer`, from the chunks it cites, in order. */
export function recordedStream(
  session: Session,
  answer: SessionEvent<'assistant/message'>,
  stepStartSeq: number,
): PacedPart[] {
  const parts: PacedPart[] = [];
  let previous = session.event(stepStartSeq)?.time;
  for (const seq of answer.sourceEventSeqs ?? []) {
    const event = session.event(seq);
    if (event?.type !== 'assistant/chunk') continue;
    const chunk = (event.data as { chunk?: JsonObject }).chunk;
    if (chunk === undefined || !isStreamPart(chunk)) continue;
    const afterMs = previous === undefined ? 0 : Math.max(0, event.time - previous);
    previous = event.time;
    parts.push({ part: toPart(chunk), afterMs });
  }
  return parts;
}

/**
 * The parts as a stream: at once, or each after its recorded delay (`sleep` waits, and returns
 * early when `signal` aborts; the stream then ends where it was).
 */
export function replayStream(
  parts: readonly PacedPart[],
  pace: 'fast' | 'recorded',
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>,
  signal: AbortSignal | undefined,
): ReadableStream<LanguageModelV3StreamPart> {
  if (pace === 'fast') {
    return new ReadableStream({
      start(controller) {
        for (const { part } of parts) controller.enqueue(part);
        controller.close();
      },
    });
  }
  let next = 0;
  return new ReadableStream({
    async pull(controller) {
      const paced = parts[next++];
      if (paced === undefined || signal?.aborted === true) {
        controller.close();
        return;
      }
      if (paced.afterMs > 0) await sleep(paced.afterMs, signal);
      // The wait may have ended because the call was aborted meanwhile.
      if (isAborted(signal)) controller.close();
      else controller.enqueue(paced.part);
    },
  });
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Whether a logged chunk is a stream part: it has its `type`. The log holds the parts the stream
 * gave (as JSON), so a chunk with a type is read back as the part it was.
 */
function isStreamPart(chunk: JsonObject): chunk is JsonObject & LanguageModelV3StreamPart {
  return typeof chunk.type === 'string';
}

/** A logged chunk as the stream part it was: dates come back as dates. */
function toPart(chunk: JsonObject & LanguageModelV3StreamPart): LanguageModelV3StreamPart {
  if (chunk.type === 'response-metadata' && typeof chunk.timestamp === 'string') {
    return { ...chunk, timestamp: new Date(chunk.timestamp) };
  }
  return chunk;
}
