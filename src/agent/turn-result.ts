/**
 * A finished turn's result read back from the log, as {@link runTurn} returned it when the turn
 * ran: what a resent prompt is answered with.
 */
import type { Session, TurnEndReason } from '../core/index.js';
import { isEventOfType } from '../core/index.js';
import { addUsage, type UsageCounts } from '../model/index.js';
import { readTurnRecord } from './turn-record.js';
import type { TurnResult } from './types.js';

/** Where a turn stands in the log: its `turn/start`, and its `turn/end` once it has one. */
export interface TurnSpan {
  readonly turn: number;
  readonly startSeq: number;
  readonly end?: { readonly seq: number; readonly reason: TurnEndReason };
}

/** The turn whose events include `seq`, or `undefined` when `seq` is outside every turn. */
export function turnAround(session: Session, seq: number): TurnSpan | undefined {
  for (let at = seq; at >= 0; at--) {
    const event = session.event(at);
    if (event === undefined) continue;
    if (isEventOfType(event, 'turn/end') && at < seq) return undefined;
    if (isEventOfType(event, 'turn/start')) return spanFrom(session, at, event.data.turn);
  }
  return undefined;
}

/**
 * The last turn of the line that continues `span`'s: a turn that resumes it (`turn/start
 * {resumes}`), then one that resumes that, and so on; `span` itself when nothing resumed it.
 */
export function lastResumption(session: Session, span: TurnSpan): TurnSpan {
  let last = span;
  for (let seq = span.startSeq + 1; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event !== undefined && isEventOfType(event, 'turn/start')) {
      if (event.data.resumes === last.turn) last = spanFrom(session, seq, event.data.turn);
    }
  }
  return last;
}

/** The result of a turn that ended, read from its events. */
export function readTurnResult(
  session: Session,
  span: TurnSpan & { readonly end: NonNullable<TurnSpan['end']> },
): TurnResult {
  let steps = 0;
  let text = '';
  const usage: UsageCounts = {};
  for (let seq = span.startSeq; seq <= span.end.seq; seq++) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'step/start')) steps += 1;
    if (isEventOfType(event, 'assistant/message') && event.surfaceOp === 'append') {
      const { message, usage: used, interrupted } = event.data;
      const joined = message.content.map((block) => (block.type === 'text' ? block.text : ''));
      // As the loop keeps it: an interrupted answer replaces the text only when it has some.
      if (joined.join('') !== '' || interrupted !== true) text = joined.join('');
      addUsage(usage, used);
    }
  }
  return {
    turn: span.turn,
    reason: span.end.reason,
    steps,
    text,
    usage,
    startSeq: span.startSeq,
    endSeq: span.end.seq,
    ...readTurnRecord(session, span.startSeq, span.end.seq),
  };
}

function spanFrom(session: Session, startSeq: number, turn: number): TurnSpan {
  for (let seq = startSeq + 1; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event !== undefined && isEventOfType(event, 'turn/end') && event.data.turn === turn) {
      return { turn, startSeq, end: { seq, reason: event.data.reason } };
    }
  }
  return { turn, startSeq };
}
