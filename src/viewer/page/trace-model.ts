/**
 * The trace of a session: its turns, and in each the model calls and tool executions with their
 * times, read from the log in one pass that a live batch continues where it stopped. Stream
 * parts after a call's first are counted by type, never built.
 */
import {
  isEventOfType,
  type RequestHeaderData,
  type Session,
  type SessionEvent,
} from '../../core/index.js';
import { type CallCost, CallPricer } from '../../model/call-costs.js';

/** A model call: from its `step/start` to its answer (or to the failure that ended it). */
export interface TraceCall {
  readonly kind: 'call';
  readonly stepStartSeq: number;
  readonly turn: number;
  readonly step: number;
  readonly start: number;
  end: number;
  /** When the first stream part arrived. */
  firstPart?: number;
  /** Seqs of the call's stream parts, in order. */
  readonly parts: number[];
  answerSeq?: number;
  /** The header in force when the call began, and its seq. */
  header?: RequestHeaderData;
  headerSeq?: number;
  finishReason?: string;
  /** Each failed attempt the writer retried: its number, wait and error. */
  readonly retries: { seq: number; attempt: number; delayMs: number; error: string }[];
  /** What ended the call without an answer, or the error its answer reported. */
  error?: string;
  /** The provider ended the stream early (`interrupted`). */
  interrupted?: boolean;
}

/** A tool execution: from its `tool/call` to its `tool/result`. */
export interface TraceTool {
  readonly kind: 'tool';
  readonly callSeq: number;
  readonly callId: string;
  readonly name: string;
  readonly start: number;
  end: number;
  resultSeq?: number;
  error?: string;
  /** The subagent session the call ran in. */
  child?: string;
}

/** A summarizer's call (a compaction), from its `compaction/start` to its `compaction/end`. */
export interface TraceCompaction {
  readonly kind: 'compaction';
  readonly startSeq: number;
  /** What the writer called it (`compaction`, `prune`...). */
  readonly label: string;
  readonly start: number;
  end: number;
  endSeq?: number;
}

export type TraceSpan = TraceCall | TraceTool | TraceCompaction;

/** A turn, or the events between two turns that made a call (a compaction). */
export interface TraceGroup {
  /** Absent for work done outside any turn. */
  readonly turn?: number;
  readonly startSeq: number;
  readonly start: number;
  end: number;
  /** How the turn ended: `completed`, `error: …`, or absent while it runs. */
  ended?: string;
  readonly spans: TraceSpan[];
}

/** The trace of one session, built as far as the session's log goes. */
export class Trace {
  readonly groups: TraceGroup[] = [];
  /** The next seq to read. */
  private next = 0;
  private header: { data: RequestHeaderData; seq: number } | undefined;
  private open: TraceGroup | undefined;
  private call: TraceCall | undefined;
  private readonly tools = new Map<string, TraceTool>();
  private compaction: TraceCompaction | undefined;

  /** The number of model calls so far. */
  calls = 0;
  /**
   * Each call that reported usage (a step's answer, a summarizer's `compaction/end`), by that
   * event's seq, priced by model's `CallPricer`: as `palimpsest cost` and the Session view
   * price it, so the panels agree to the cent.
   */
  readonly costs = new Map<number, CallCost>();
  /** The sum of the priced calls' costs, and how many calls were priced. */
  cost = 0;
  pricedCalls = 0;
  private readonly pricer = new CallPricer();

  /**
   * Reads the events the session gained since the last call and returns the index of the first
   * group that changed (`groups.length` when none did).
   */
  update(session: Session): number {
    let changed = this.groups.length;
    const mark = (): void => {
      changed = Math.min(changed, this.groups.length - 1);
    };
    this.pricer.read(session, this.next, (call) => {
      this.costs.set(call.seq, call);
      if (call.cost === undefined) return;
      this.cost += call.cost.total;
      this.pricedCalls++;
    });
    for (let seq = this.next; seq < session.seq; seq++) {
      if (session.eventType(seq) === 'assistant/chunk' && this.call?.firstPart !== undefined) {
        this.call.parts.push(seq);
        continue;
      }
      const event = session.event(seq);
      if (event !== undefined && this.read(event)) mark();
    }
    this.next = session.seq;
    return Math.max(0, changed);
  }

  /** Folds one event in; returns whether it touched the open group. */
  private read(event: SessionEvent): boolean {
    if (isEventOfType(event, 'turn/start')) {
      this.begin(event, event.data.turn);
      return true;
    }
    if (isEventOfType(event, 'request/header')) {
      this.header = { data: event.data, seq: event.seq };
      if (this.call !== undefined && this.call.firstPart === undefined) {
        this.call.header = event.data;
        this.call.headerSeq = event.seq;
      }
      return false;
    }
    if (isEventOfType(event, 'compaction/start')) {
      const kind = event.data.kind;
      const compaction: TraceCompaction = {
        kind: 'compaction',
        startSeq: event.seq,
        label: typeof kind === 'string' ? kind : 'compaction',
        start: event.time,
        end: event.time,
      };
      this.compaction = compaction;
      this.group(event).spans.push(compaction);
      return this.touch(event);
    }
    if (isEventOfType(event, 'compaction/end')) {
      if (this.compaction !== undefined) {
        this.compaction.end = event.time;
        this.compaction.endSeq = event.seq;
        this.compaction = undefined;
      }
      return this.touch(event);
    }
    if (this.open === undefined) return false;
    this.readTurnEvent(event);
    return this.touch(event);
  }

  /** An event inside a turn: a step, a stream part, an answer, a retry, a tool. */
  private readTurnEvent(event: SessionEvent): void {
    const call = this.call;
    if (isEventOfType(event, 'step/start')) {
      this.call = {
        kind: 'call',
        stepStartSeq: event.seq,
        turn: event.data.turn,
        step: event.data.step,
        start: event.time,
        end: event.time,
        parts: [],
        retries: [],
        ...(this.header === undefined
          ? {}
          : { header: this.header.data, headerSeq: this.header.seq }),
      };
      this.calls++;
      this.open?.spans.push(this.call);
    } else if (isEventOfType(event, 'assistant/chunk') && call !== undefined) {
      call.firstPart ??= event.time;
      call.parts.push(event.seq);
      call.end = event.time;
    } else if (isEventOfType(event, 'assistant/message') && call !== undefined) {
      call.answerSeq = event.seq;
      call.end = event.time;
      call.finishReason = event.data.finishReason;
      if (event.data.interrupted === true) call.interrupted = true;
    } else if (isEventOfType(event, 'request/retry') && call !== undefined) {
      const { attempt, delayMs, error } = event.data;
      call.retries.push({ seq: event.seq, attempt, delayMs, error: failureText(error) });
    } else if (isEventOfType(event, 'request/overflow') && call !== undefined) {
      call.error = `context overflow: ${failureText(event.data.error)}`;
    } else if (isEventOfType(event, 'tool/call')) {
      const tool: TraceTool = {
        kind: 'tool',
        callSeq: event.seq,
        callId: event.data.callId,
        name: event.data.name,
        start: event.time,
        end: event.time,
        ...(event.data.child === undefined ? {} : { child: event.data.child.session }),
      };
      this.tools.set(tool.callId, tool);
      this.open?.spans.push(tool);
    } else if (isEventOfType(event, 'tool/result')) {
      const tool = this.tools.get(event.data.message.content[0].toolCallId);
      if (tool === undefined) return;
      tool.end = event.time;
      tool.resultSeq = event.seq;
      if (event.data.error !== undefined) {
        tool.error = `${event.data.error.code}: ${event.data.error.message}`;
      } else if (event.data.message.content[0].isError === true)
        tool.error = 'the tool reported an error';
      if (tool.child === undefined && event.data.child !== undefined) {
        tool.child = event.data.child.session;
      }
      this.tools.delete(tool.callId);
    } else if (isEventOfType(event, 'step/end')) {
      if (call !== undefined && call.answerSeq === undefined) call.end = event.time;
      this.call = undefined;
    } else if (isEventOfType(event, 'turn/end')) {
      this.end(event);
    }
  }

  private begin(event: SessionEvent, turn: number): void {
    this.open = { turn, startSeq: event.seq, start: event.time, end: event.time, spans: [] };
    this.groups.push(this.open);
    this.call = undefined;
    this.tools.clear();
  }

  private end(event: SessionEvent<'turn/end'>): void {
    const reason = event.data.reason;
    const failure =
      reason.kind === 'error' || reason.kind === 'context-overflow'
        ? `${reason.kind}: ${failureText(reason.error)}`
        : undefined;
    const group = this.open as TraceGroup;
    group.ended = failure ?? reason.kind;
    // The call that was running when the turn failed is the one the failure ended.
    const call = this.call;
    if (call !== undefined && call.answerSeq === undefined) {
      call.end = event.time;
      if (failure !== undefined) call.error ??= failure;
      else if (reason.kind !== 'completed') call.error ??= reason.kind;
    }
    for (const tool of this.tools.values()) {
      if (tool.resultSeq === undefined) tool.end = event.time;
    }
    this.open = undefined;
    this.call = undefined;
    this.tools.clear();
  }

  /** The group an event outside every turn belongs to (a compaction between turns). */
  private group(event: SessionEvent): TraceGroup {
    if (this.open !== undefined) return this.open;
    const last = this.groups.at(-1);
    if (last !== undefined && last.turn === undefined) return last;
    const between: TraceGroup = {
      startSeq: event.seq,
      start: event.time,
      end: event.time,
      spans: [],
    };
    this.groups.push(between);
    return between;
  }

  private touch(event: SessionEvent): boolean {
    const group = this.open ?? this.groups.at(-1);
    if (group === undefined) return false;
    group.end = Math.max(group.end, event.time);
    return true;
  }
}

function failureText(error: { message: string; code?: string; status?: number }): string {
  const code = error.code ?? (error.status === undefined ? undefined : `HTTP ${error.status}`);
  return code === undefined ? error.message : `${code}: ${error.message}`;
}
