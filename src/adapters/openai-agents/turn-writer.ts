/**
 * How batches of items enter the log: as turns with a step, tool results citing the calls they
 * answer, and removals as replaces. Everything is appended synchronously, so one batch reaches
 * the store in one append.
 */
import {
  type AssistantMessageData,
  type JsonObject,
  lastTurnNumber,
  type ReplaceOp,
  type Session,
} from '../../core/index.js';
import { callsEvent, ITEM_SOURCE, isCallItem, itemEvent, itemKind } from './item-events.js';

/** What removed items from the SDK's history: the method whose replace shadows them. */
export type RemovalCause = 'popItem' | 'clearSession';

/**
 * The data of the event that shadows removed items: an empty assistant message, which keeps a
 * place on the surface and derives no message, so the model's view loses exactly the items.
 */
export interface RemovalData extends AssistantMessageData {
  readonly removed: { readonly by: RemovalCause; readonly items: number };
}

/** Writes the items of one session into its log; keeps the turn that waits for results. */
export class TurnWriter {
  private open: OpenTurn | undefined;

  constructor(private readonly session: Session) {}

  /**
   * Appends one batch of items as a turn; with `shadow`, its first item replaces those surface
   * entries. A batch whose step requests calls it does not answer leaves its turn open (the run
   * waits for tool approval), and the next batch continues it, unless that one starts a run.
   * Consecutive call items share one assistant message, even across batches (see
   * {@link TurnWriter.mergeCalls}).
   */
  write(items: readonly JsonObject[], shadow?: readonly number[]): void {
    const session = this.session;
    const open = shadow === undefined && !startsRun(items[0]) ? this.open : undefined;
    if (open === undefined) this.closeOpenTurn();
    const turn = open?.turn ?? lastTurnNumber(session) + 1;
    const step = 1;
    const requested = open?.requested ?? new Map<string, number>();
    const answered = open?.answered ?? new Set<string>();
    let stepOpen = open !== undefined;
    // The call message at the surface's tail whose calls no result has answered yet.
    let tail = open?.tail !== undefined && this.atTail(open.tail.seq) ? open.tail : undefined;
    if (open === undefined) session.append('turn/start', { turn });
    callGroups(items).forEach((group, index) => {
      const place = { turn, step, fallbackId: `item-${session.seq}` };
      const first = group[0] as JsonObject;
      const event = isCallItem(first) ? callsEvent(group, place) : itemEvent(first, place);
      if (event.type !== 'assistant/message' || event.calls.length === 0) tail = undefined;
      if (!stepOpen && (event.type === 'assistant/message' || event.type === 'tool/result')) {
        session.append('step/start', { turn, step });
        stepOpen = true;
      }
      if (
        index === 0 &&
        shadow !== undefined &&
        shadow.length > 0 &&
        event.type === 'user/message'
      ) {
        const id = `openai-agents-${session.seq}`;
        const start = session.append('compaction/start', {
          id,
          by: 'replaceHistoryWithCompaction',
        });
        session.append('user/message', event.data, {
          surfaceOp: replaceOf(shadow),
          sourceEventSeqs: [...shadow, start.seq],
        });
        session.append('compaction/end', { id, shadowed: shadow.length });
      } else if (event.type === 'tool/result') {
        const call = requested.get(event.answers);
        session.append('tool/result', event.data, {
          surfaceOp: 'append',
          ...(call === undefined ? {} : { sourceEventSeqs: [call] }),
        });
        answered.add(event.answers);
      } else if (event.type === 'assistant/message') {
        const appended = session.append('assistant/message', event.data, { surfaceOp: 'append' });
        // The first request of a call id is the one a result answers (the linter's rule P1).
        for (const callId of event.calls) {
          if (!requested.has(callId)) requested.set(callId, appended.seq);
        }
        if (event.calls.length > 0) {
          tail = this.mergeCalls(tail, { seq: appended.seq, items: group }, place);
        }
      } else {
        session.append(event.type, event.data, { surfaceOp: 'append' });
      }
    });
    const waiting = [...requested.keys()].some((callId) => !answered.has(callId));
    if (stepOpen && waiting) {
      this.open = { turn, requested, answered, tail };
      return;
    }
    this.open = undefined;
    if (stepOpen) session.append('step/end', { turn, step });
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  }

  /**
   * Calls that a later batch adds while the calls before them wait unanswered (a caller that
   * persists a response's calls one by one) belong to the same message: the new calls are
   * appended as their own message, which the step's pairing rules see, and one replace puts a
   * message holding all of them in the place of both on the surface, which is what the model
   * and the exports see. Without an earlier call message waiting, `next` is the tail as it is.
   */
  private mergeCalls(
    tail: CallsTail | undefined,
    next: CallsTail,
    place: { readonly turn: number; readonly step: number },
  ): CallsTail {
    if (tail === undefined) return next;
    const items = [...tail.items, ...next.items];
    const merged = callsEvent(items, { ...place, fallbackId: `item-${this.session.seq}` });
    const appended = this.session.append('assistant/message', merged.data, {
      surfaceOp: { op: 'replace', start: tail.seq, end: next.seq },
      sourceEventSeqs: [tail.seq, next.seq],
    });
    return { seq: appended.seq, items };
  }

  /** Whether `seq` is the last entry of the surface (nothing was written over it since). */
  private atTail(seq: number): boolean {
    const surface = this.session.surface;
    return surface.size > 0 && surface.at(surface.size - 1) === seq;
  }

  /**
   * Ends a turn left waiting for results, when what comes next is not them (a new run, a
   * removal, a compaction): its calls stay unanswered, and the turn says it was cut short.
   */
  private closeOpenTurn(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    this.session.append('step/end', { turn: open.turn, step: 1 });
    this.session.append('turn/end', {
      turn: open.turn,
      reason: { kind: 'aborted', cause: 'the history moved on with tool calls unanswered' },
    });
  }

  /**
   * Appends one removal marker in place of the surface entries `shadow` (in surface order). With
   * `kept`, the first shadowed entry held parallel calls of which only the last was removed: the
   * marker carries the calls kept, so they stay on the surface as one message.
   */
  remove(
    shadow: readonly number[],
    by: RemovalCause,
    count: number,
    kept: readonly JsonObject[] = [],
  ): void {
    this.closeOpenTurn();
    const place = { turn: lastTurnNumber(this.session), step: 1, fallbackId: '' };
    const message = {
      id: `removed-${this.session.seq}`,
      role: 'assistant',
      content: [],
      source: ITEM_SOURCE,
    } as const;
    const data: RemovalData =
      kept.length === 0
        ? {
            turn: place.turn,
            step: 1,
            message,
            finishReason: 'other',
            removed: { by, items: count },
          }
        : { ...callsEvent(kept, place).data, removed: { by, items: count } };
    this.session.append('assistant/message', data, {
      surfaceOp: replaceOf(shadow),
      sourceEventSeqs: [...shadow],
    });
  }
}

/** A turn whose step requested calls that no batch has answered yet. */
interface OpenTurn {
  readonly turn: number;
  readonly requested: Map<string, number>;
  readonly answered: Set<string>;
  /** Its last call message, when nothing came after it: later calls join that message. */
  readonly tail: CallsTail | undefined;
}

/** A call message on the surface's tail: its seq and the call items it carries. */
interface CallsTail {
  readonly seq: number;
  readonly items: readonly JsonObject[];
}

/**
 * The items of a batch in the units that become one event each: a run of consecutive call
 * items (the parallel calls of one model response) together, every other item alone.
 */
function callGroups(items: readonly JsonObject[]): JsonObject[][] {
  const groups: JsonObject[][] = [];
  let calls: JsonObject[] | undefined;
  for (const item of items) {
    if (!isCallItem(item)) {
      calls = undefined;
      groups.push([item]);
    } else if (calls === undefined) {
      calls = [item];
      groups.push(calls);
    } else calls.push(item);
  }
  return groups;
}

/** The runner persists a run's input first: a batch opening with a message starts a run. */
function startsRun(first: JsonObject | undefined): boolean {
  const kind = first === undefined ? '' : itemKind(first);
  return kind === 'user' || kind === 'system' || kind === 'developer';
}

function replaceOf(shadow: readonly number[]): ReplaceOp {
  return { op: 'replace', start: shadow[0] as number, end: shadow[shadow.length - 1] as number };
}
