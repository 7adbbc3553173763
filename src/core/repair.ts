/**
 * Crash repair: the events that close a turn left open by a crash, so the next request is valid
 * for every provider and the model learns what happened to each interrupted tool call.
 */

import { ElidedLog } from './elided-log.js';
import type {
  AssistantMessageData,
  ChildSessionLink,
  SessionEvent,
  SessionEventMap,
  StepData,
  ToolResultData,
  TurnEndData,
} from './events.js';
import type { JsonObject } from './json.js';
import { requestHeaderAt } from './log-queries.js';
import type { AssistantContentBlock, TextBlock } from './messages.js';
import { intField, requestedToolCalls, resultCallId, stringField } from './read-data.js';
import type { Session } from './session.js';

/** Error code of a synthetic result for a call that was recorded as started but never finished. */
export const TOOL_OUTCOME_UNKNOWN = 'TOOL_OUTCOME_UNKNOWN';
/** Error code of a synthetic result for a call the model requested that never started. */
export const TOOL_NOT_STARTED = 'TOOL_NOT_STARTED';

interface PendingCall {
  readonly name: string;
  readonly step: number;
  readonly requestSeq: number;
  callSeq?: number;
  /** The child session the call was running in (a subagent), from its `tool/call`. */
  child?: ChildSessionLink | undefined;
}

/** Why a response was cut before it finished. */
export type InterruptionKind = 'aborted' | 'error' | 'crashed';

const INTERRUPTION_TEXT: Readonly<Record<InterruptionKind, string>> = {
  aborted: '[interrupted: this response was cancelled before it finished]',
  error: '[interrupted: the provider failed before this response finished]',
  crashed: '[interrupted: the session stopped while this response was streaming]',
};

/**
 * The text block that ends the content of an interrupted assistant message, so the model
 * reading it later knows the text before it is incomplete (`data.interrupted` says the same to
 * a program). One marker for every path that keeps a partial answer: an abort, a provider
 * failure, crash repair.
 */
export function interruptionMarker(kind: InterruptionKind): TextBlock {
  return { type: 'text', text: INTERRUPTION_TEXT[kind] };
}

/**
 * Plans the closer events for a log whose last turn is still open (a crashed writer). In order:
 * if the open step's model call had streamed without its `assistant/message` (the writer died
 * mid-stream), an `assistant/message` with the text and reasoning streamed so far, marked
 * `interrupted`, citing the chunks of the attempt in progress (those after the step's last
 * `request/retry`); for each tool call of the open step without a result, a `tool/result` error —
 * `TOOL_OUTCOME_UNKNOWN` citing its `tool/call` when the call had started, `TOOL_NOT_STARTED`
 * citing the requesting `assistant/message` when it had not; then `step/end` if a step is open;
 * then `turn/end` with reason `interrupted`.
 *
 * Deterministic: seqs continue the log and every closer takes the last event's time. Idempotent:
 * a log that ends with its closers (or has no open turn) plans nothing. An {@link ElidedLog} is
 * read without building a stub for each of its elided chunks.
 */
export function planRepair(events: readonly SessionEvent[] | ElidedLog): SessionEvent[] {
  const compact = events instanceof ElidedLog ? events : undefined;
  const list = compact === undefined ? (events as readonly SessionEvent[]) : undefined;
  const reader: LogReader =
    list === undefined
      ? {
          length: events.length,
          peek: (index) => compact?.peek(index),
          at: (index) => compact?.at(index),
        }
      : { length: list.length, peek: (index) => list[index], at: (index) => list[index] };
  return planClosers(reader, 0, UNKNOWN_SOURCE);
}

/**
 * The closers {@link planRepair} plans for the session's log, reading only its last turn (and
 * the request header in effect when it began), so a writer that checks for an open step after
 * every call does not rescan the whole log each time.
 *
 * @example
 * ```ts
 * import { planOpenTurnRepair, Session } from 'palimpsest';
 *
 * const session = Session.create({ id: 'open-turn' });
 * session.append('turn/start', { turn: 1 });
 * session.append('step/start', { turn: 1, step: 1 });
 * // The writer stopped here: the closers end the step, then the turn.
 * const closers = planOpenTurnRepair(session);
 * console.log(closers.map((event) => event.type).join(' ')); // 'step/end turn/end'
 * for (const closer of closers) session.append(closer.type, closer.data);
 * console.log(planOpenTurnRepair(session).length); // 0
 * ```
 */
export function planOpenTurnRepair(session: Session): SessionEvent[] {
  for (let seq = session.seq - 1; seq >= 0; seq--) {
    const type = session.event(seq)?.type;
    if (type === 'turn/end') return [];
    if (type !== 'turn/start') continue;
    const header = requestHeaderAt(session, seq);
    const reader: LogReader = {
      length: session.seq,
      peek: (index) => session.event(index),
      at: (index) => session.event(index),
    };
    return planClosers(reader, seq, {
      provider: nonEmpty(header?.provider) ?? UNKNOWN_SOURCE.provider,
      model: nonEmpty(header?.model) ?? UNKNOWN_SOURCE.model,
    });
  }
  return [];
}

/** Indexed access to a log: `peek` leaves an elided chunk a hole, `at` builds its stub. */
interface LogReader {
  readonly length: number;
  peek(index: number): SessionEvent | undefined;
  at(index: number): SessionEvent | undefined;
}

const UNKNOWN_SOURCE = { provider: 'unknown', model: 'unknown' };

function planClosers(
  reader: LogReader,
  from: number,
  initialSource: { readonly provider: string; readonly model: string },
): SessionEvent[] {
  let openTurn: number | undefined;
  let openStep: number | undefined;
  const pending = new Map<string, PendingCall>();
  // The chunks of the open step's attempt in progress that no message cites yet; an elided
  // chunk as its seq (a stub is built only for one that is still here at the end).
  let streamed: (SessionEvent | number)[] = [];
  let source = initialSource;
  const { length } = reader;
  for (let index = from; index < length; index++) {
    const event = reader.peek(index);
    if (event === undefined) {
      // A hole (an elided chunk or a held delta): only the open step's chunks matter, built at
      // the end for those still there.
      if (openStep !== undefined) streamed.push(index);
      continue;
    }
    switch (event.type) {
      case 'turn/start':
        openTurn = intField(event, 'turn') ?? (openTurn ?? 0) + 1;
        openStep = undefined;
        pending.clear();
        streamed = [];
        break;
      case 'turn/end':
        openTurn = undefined;
        openStep = undefined;
        pending.clear();
        streamed = [];
        break;
      case 'step/start':
        openStep = intField(event, 'step') ?? (openStep ?? 0) + 1;
        streamed = [];
        break;
      case 'step/end':
        openStep = undefined;
        pending.clear();
        streamed = [];
        break;
      case 'request/header':
        source = {
          provider: nonEmpty(stringField(event, 'provider')) ?? 'unknown',
          model: nonEmpty(stringField(event, 'model')) ?? 'unknown',
        };
        break;
      case 'request/retry':
        streamed = [];
        break;
      case 'assistant/chunk':
        if (openStep !== undefined) streamed.push(event);
        break;
      case 'assistant/message':
        if (event.surfaceOp !== 'append') break;
        streamed = [];
        for (const call of requestedToolCalls(event)) {
          pending.set(call.id, {
            name: call.name,
            step: intField(event, 'step') ?? openStep ?? 0,
            requestSeq: event.seq,
          });
        }
        break;
      case 'tool/call': {
        const callId = stringField(event, 'callId');
        const call = callId === undefined ? undefined : pending.get(callId);
        if (call !== undefined) {
          call.callSeq = event.seq;
          call.child = childOf(event);
        }
        break;
      }
      case 'tool/result': {
        const callId = resultCallId(event);
        if (event.surfaceOp === 'append' && callId !== undefined) pending.delete(callId);
        break;
      }
    }
  }
  const last = reader.at(length - 1);
  if (openTurn === undefined || last === undefined) return [];
  const turn = openTurn;
  const time = last.time;
  let seq = last.seq + 1;
  const closers: SessionEvent[] = [];
  if (openStep !== undefined && streamed.length > 0) {
    const chunks = streamed.map((entry) =>
      typeof entry === 'number' ? (reader.at(entry) as SessionEvent) : entry,
    );
    const content = partialContent(chunks);
    if (content.length > 0) content.push(interruptionMarker('crashed'));
    const data: AssistantMessageData = {
      turn,
      step: openStep,
      message: {
        id: `repair-${seq}`,
        role: 'assistant',
        content,
        source: { kind: 'model', ...source },
      },
      finishReason: 'unknown',
      interrupted: true,
    };
    closers.push(
      closer(
        seq++,
        time,
        { type: 'assistant/message', data },
        chunks.map((e) => e.seq),
      ),
    );
  }
  for (const [callId, call] of pending) {
    const started = call.callSeq !== undefined;
    const code = started ? TOOL_OUTCOME_UNKNOWN : TOOL_NOT_STARTED;
    const where = call.child === undefined ? '' : ` in child session '${call.child.session}'`;
    const text = started
      ? `The session was interrupted while tool '${call.name}' (call ${callId}) was running${where}, so its outcome is unknown: it may or may not have taken effect. Retry only if the tool is read-only or idempotent; otherwise check the current state first or ask the user. Do not retry blindly.`
      : `The session was interrupted before tool '${call.name}' (call ${callId}) started; it never ran. Call it again if it is still needed.`;
    const data: ToolResultData = {
      turn,
      step: call.step,
      message: {
        id: `repair-${seq}`,
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: callId,
            isError: true,
            content: [{ type: 'text', text }],
          },
        ],
      },
      error: { code, message: text },
      ...(call.child === undefined ? {} : { child: call.child }),
    };
    closers.push(
      closer(seq++, time, { type: 'tool/result', data }, [call.callSeq ?? call.requestSeq]),
    );
  }
  if (openStep !== undefined) {
    const data: StepData = { turn, step: openStep };
    closers.push(closer(seq++, time, { type: 'step/end', data }));
  }
  const end: TurnEndData = { turn, reason: { kind: 'interrupted' } };
  closers.push(closer(seq, time, { type: 'turn/end', data: end }));
  return closers;
}

/** The `child` of a `tool/call`, when it names one well formed. */
function childOf(event: SessionEvent): ChildSessionLink | undefined {
  const child = (event.data as JsonObject | null)?.child;
  if (typeof child !== 'object' || child === null || Array.isArray(child)) return undefined;
  const { session, agentId } = child as JsonObject;
  if (typeof session !== 'string') return undefined;
  return { session, ...(typeof agentId === 'string' ? { agentId } : {}) };
}

/**
 * The text and reasoning of stream parts in the AI SDK's shapes (`text-delta`,
 * `reasoning-delta`, by `id`), in the order their blocks opened. Tool calls are left out: a call
 * nobody will run must not reach the surface unanswered. Repair is the one place the core reads
 * chunk bodies; the open tail is never elided (7.3), and an unknown part is skipped.
 */
function partialContent(chunks: readonly SessionEvent[]): AssistantContentBlock[] {
  const blocks: { type: 'text' | 'reasoning'; text: string }[] = [];
  const byId = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  for (const event of chunks) {
    const chunk = (event.data as JsonObject | null)?.chunk as JsonObject | undefined;
    const type = chunk?.type;
    const kind =
      type === 'text-delta' ? 'text' : type === 'reasoning-delta' ? 'reasoning' : undefined;
    if (kind === undefined || typeof chunk?.delta !== 'string') continue;
    const key = `${kind}:${typeof chunk.id === 'string' ? chunk.id : ''}`;
    let block = byId.get(key);
    if (block === undefined) {
      block = { type: kind, text: '' };
      byId.set(key, block);
      blocks.push(block);
    }
    block.text += chunk.delta;
  }
  return blocks.filter((block) => block.text !== '');
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

/** The type and data of a closer, paired so that each type keeps its own data. */
type Closing = {
  [K in 'assistant/message' | 'tool/result' | 'step/end' | 'turn/end']: {
    readonly type: K;
    readonly data: SessionEventMap[K];
  };
}['assistant/message' | 'tool/result' | 'step/end' | 'turn/end'];

function closer(
  seq: number,
  time: number,
  closing: Closing,
  sourceEventSeqs?: readonly number[],
): SessionEvent {
  return sourceEventSeqs === undefined
    ? { seq, time, ...closing }
    : { seq, time, ...closing, surfaceOp: 'append', sourceEventSeqs };
}
