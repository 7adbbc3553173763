/**
 * The surface as compaction sees it: each entry with its event, the message it derives, its
 * estimated tokens, and whether a cut before it would separate a tool call from its result.
 * Built in one O(surface) pass.
 */
import {
  deriveEventMessage,
  type Message,
  type Session,
  type SessionEvent,
} from '../core/index.js';
import { messageTokens } from '../model/index.js';

/** One surface entry. */
export interface SurfaceEntry {
  readonly seq: number;
  readonly event: SessionEvent;
  /** The message the entry derives (`null` for an empty assistant message). */
  readonly message: Message | null;
  readonly tokens: number;
}

/** The surface, priced, with the tool-pairing balance of every cut. */
export interface PricedSurface {
  readonly entries: readonly SurfaceEntry[];
  /**
   * `balanced[i]` is true when cutting before entry `i` leaves no tool call of entries
   * `0..i-1` unanswered (and so no result after the cut without its call). Length n + 1.
   */
  readonly balanced: readonly boolean[];
  readonly totalTokens: number;
  readonly replaceGeneration: number;
}

/** Prices the current surface of `session`. */
export function priceSurface(session: Session): PricedSurface {
  const seqs = session.surface.seqs;
  const entries: SurfaceEntry[] = [];
  const balanced: boolean[] = [true];
  let open = 0;
  let totalTokens = 0;
  for (const seq of seqs) {
    const event = session.event(seq);
    if (event === undefined) continue;
    const message = deriveEventMessage(event);
    const tokens = message === null ? 0 : messageTokens(message);
    if (message?.role === 'assistant') {
      for (const block of message.content) if (block.type === 'tool-call') open++;
    } else if (message?.role === 'tool') {
      open = Math.max(0, open - 1);
    }
    entries.push({ seq, event, message, tokens });
    balanced.push(open === 0);
    totalTokens += tokens;
  }
  return {
    entries,
    balanced,
    totalTokens,
    replaceGeneration: session.surface.replaceGeneration,
  };
}

/** The messages of entries `[from, to)`, skipping entries that derive nothing. */
export function messagesOf(entries: readonly SurfaceEntry[], from: number, to: number): Message[] {
  const messages: Message[] = [];
  for (let i = from; i < to; i++) {
    const message = entries[i]?.message;
    if (message !== null && message !== undefined) messages.push(message);
  }
  return messages;
}

/**
 * The surface index from which the newest complete turn is kept: the position of that turn's
 * first message (its user input). `entries.length` when the log has no complete turn whose
 * input is still on the surface.
 */
export function newestCompleteTurnStart(session: Session, surface: PricedSurface): number {
  let turnStartSeq: number | undefined;
  let endedTurn: number | undefined;
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const event = session.event(seq);
    if (event === undefined) continue;
    const turn = (event.data as { turn?: unknown } | null)?.turn;
    if (endedTurn === undefined && event.type === 'turn/end' && typeof turn === 'number') {
      endedTurn = turn;
    } else if (endedTurn !== undefined && event.type === 'turn/start' && turn === endedTurn) {
      turnStartSeq = seq;
      break;
    }
  }
  if (turnStartSeq === undefined) return surface.entries.length;
  for (let seq = turnStartSeq + 1; seq < session.seq; seq++) {
    const event = session.event(seq);
    if (event?.surfaceOp === 'append') {
      const index = session.surface.indexOf(seq);
      return index === -1 ? surface.entries.length : index;
    }
  }
  return surface.entries.length;
}
