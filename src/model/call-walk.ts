/**
 * One pass over a log's model calls: where each call began, the surface and request header it
 * received, and its answer. The surface is folded as the walk goes, so a long session costs one
 * walk, not a rebuild per call; what each reader keeps of it (the messages, a digest, a shared
 * prefix) is the reader's own.
 */
import type {
  RequestHeaderData,
  Session,
  SessionEvent,
  SurfaceReplacement,
} from '../core/index.js';
import { applySurfaceOp, isEventOfType } from '../core/index.js';

/** A model call as it began. */
export interface CallStart {
  /** The seq of the call's `step/start`. */
  readonly stepStartSeq: number;
  readonly turn: number;
  readonly step: number;
  /** The request header in effect, and the seq of the `request/header` that logged it. */
  readonly header: RequestHeaderData | undefined;
  readonly headerSeq: number | undefined;
  /**
   * The surface the call received, as seqs in order. The walk goes on changing this array:
   * read it during the callback.
   */
  readonly order: readonly number[];
  /**
   * The lowest index of `order` a replace rewrote since the previous call began (`Infinity`
   * when none did): the entries before it are the previous call's, in the same places.
   */
  readonly changedFrom: number;
}

/** What {@link walkCalls} tells its reader, in log order. */
export interface CallReader {
  /**
   * Every event of the log but the stream parts (`assistant/chunk`, never built), before the
   * walk tells of the call it begins or answers: a reader that follows the log too (pricing its
   * calls) needs no walk of its own.
   */
  event?(event: SessionEvent): void;
  /** A call began: its first stream part, or its answer when the stream was empty. */
  begin?(call: CallStart): void;
  /** The answer of the call that began last entered the surface. */
  answer?(seq: number, answer: SessionEvent<'assistant/message'>): void;
  /** A replace rewrote the surface; `order` is the surface after it. */
  replace?(replacement: SurfaceReplacement, order: readonly number[]): void;
}

/**
 * Walks the log once and tells `reader` where every model call began and where its answer
 * entered the surface. A call begins at its step's first `assistant/chunk` (or its
 * `assistant/message`, for an empty stream): a header or message logged inside the step before
 * it is part of the call's request. A surface change between a call's beginning and its answer
 * does not reach the `order` that call was given.
 */
export function walkCalls(session: Session, reader: CallReader): void {
  const order: number[] = [];
  let header: RequestHeaderData | undefined;
  let headerSeq: number | undefined;
  let step: { seq: number; turn: number; step: number } | undefined;
  let begun = false;
  let changedFrom = Number.POSITIVE_INFINITY;
  const onReplace = (replacement: SurfaceReplacement): void => {
    changedFrom = Math.min(changedFrom, order.indexOf(replacement.seq));
    reader.replace?.(replacement, order);
  };
  const beginCall = (at: { seq: number; turn: number; step: number }): void => {
    reader.begin?.({
      stepStartSeq: at.seq,
      turn: at.turn,
      step: at.step,
      header,
      headerSeq,
      order,
      changedFrom,
    });
    changedFrom = Number.POSITIVE_INFINITY;
  };
  for (let seq = 0; seq < session.seq; seq++) {
    // Stream parts are not built: a call begins at its first one, and that is all they tell.
    if (session.eventType(seq) === 'assistant/chunk') {
      if (step !== undefined && !begun) {
        begun = true;
        beginCall(step);
      }
      continue;
    }
    const event = session.event(seq);
    if (event === undefined) continue;
    reader.event?.(event);
    if (isEventOfType(event, 'step/start')) {
      step = { seq, turn: event.data.turn, step: event.data.step };
      begun = false;
    } else if (isEventOfType(event, 'step/end')) {
      step = undefined;
    } else if (isEventOfType(event, 'request/header')) {
      header = event.data;
      headerSeq = seq;
    } else if (step !== undefined && !begun && event.type === 'assistant/message') {
      begun = true;
      beginCall(step);
    }
    if (isEventOfType(event, 'assistant/message') && event.surfaceOp === 'append' && begun) {
      reader.answer?.(seq, event);
    }
    applySurfaceOp(order, event, onReplace);
  }
}
