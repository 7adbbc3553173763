/**
 * Crash repair: the events that close a turn left open by a crash, so the next request is valid
 * for every provider and the model learns what happened to each interrupted tool call.
 */
import type { SessionEvent, StepData, ToolResultData, TurnEndData } from './events.js';
import type { JsonValue } from './json.js';
import { intField, requestedToolCalls, resultCallId, stringField } from './read-data.js';

/** Error code of a synthetic result for a call that was recorded as started but never finished. */
export const TOOL_OUTCOME_UNKNOWN = 'TOOL_OUTCOME_UNKNOWN';
/** Error code of a synthetic result for a call the model requested that never started. */
export const TOOL_NOT_STARTED = 'TOOL_NOT_STARTED';

interface PendingCall {
  readonly name: string;
  readonly step: number;
  readonly requestSeq: number;
  callSeq?: number;
}

/**
 * Plans the closer events for a log whose last turn is still open (a crashed writer). In order:
 * for each tool call of the open step without a result, a `tool/result` error —
 * `TOOL_OUTCOME_UNKNOWN` citing its `tool/call` when the call had started, `TOOL_NOT_STARTED`
 * citing the requesting `assistant/message` when it had not; then `step/end` if a step is open;
 * then `turn/end` with reason `interrupted`.
 *
 * Deterministic: seqs continue the log and every closer takes the last event's time. Idempotent:
 * a log that ends with its closers (or has no open turn) plans nothing.
 */
export function planRepair(events: readonly SessionEvent[]): SessionEvent[] {
  let openTurn: number | undefined;
  let openStep: number | undefined;
  const pending = new Map<string, PendingCall>();
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        openTurn = intField(event, 'turn') ?? (openTurn ?? 0) + 1;
        openStep = undefined;
        pending.clear();
        break;
      case 'turn/end':
        openTurn = undefined;
        openStep = undefined;
        pending.clear();
        break;
      case 'step/start':
        openStep = intField(event, 'step') ?? (openStep ?? 0) + 1;
        break;
      case 'step/end':
        openStep = undefined;
        pending.clear();
        break;
      case 'assistant/message':
        if (event.surfaceOp !== 'append') break;
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
        if (call !== undefined) call.callSeq = event.seq;
        break;
      }
      case 'tool/result': {
        const callId = resultCallId(event);
        if (event.surfaceOp === 'append' && callId !== undefined) pending.delete(callId);
        break;
      }
    }
  }
  const last = events[events.length - 1];
  if (openTurn === undefined || last === undefined) return [];
  const turn = openTurn;
  const time = last.time;
  let seq = last.seq + 1;
  const closers: SessionEvent[] = [];
  for (const [callId, call] of pending) {
    const started = call.callSeq !== undefined;
    const code = started ? TOOL_OUTCOME_UNKNOWN : TOOL_NOT_STARTED;
    const text = started
      ? `The session was interrupted while tool '${call.name}' (call ${callId}) was running, so its outcome is unknown: it may or may not have taken effect. Retry only if the tool is read-only or idempotent; otherwise check the current state first or ask the user. Do not retry blindly.`
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
    };
    closers.push(closer(seq++, time, 'tool/result', data, [call.callSeq ?? call.requestSeq]));
  }
  if (openStep !== undefined) {
    const data: StepData = { turn, step: openStep };
    closers.push(closer(seq++, time, 'step/end', data));
  }
  const end: TurnEndData = { turn, reason: { kind: 'interrupted' } };
  closers.push(closer(seq, time, 'turn/end', end));
  return closers;
}

function closer(
  seq: number,
  time: number,
  type: string,
  data: ToolResultData | StepData | TurnEndData,
  sourceEventSeqs?: readonly number[],
): SessionEvent {
  const json = data as unknown as JsonValue;
  return sourceEventSeqs === undefined
    ? { seq, time, type, data: json }
    : { seq, time, type, data: json, surfaceOp: 'append', sourceEventSeqs };
}
