/**
 * A linter for logs: the structural rules a well-formed agent log follows beyond what `append`
 * enforces (turn and step nesting, tool call/result pairing, provenance kinds).
 */
import { deriveEventMessage } from './derive.js';
import { isElidedChunk } from './elided.js';
import { SessionValidationError } from './errors.js';
import { reasonNeedsError, TURN_END_KINDS } from './event-shapes.js';
import { dataAsJson, type SessionEvent } from './events.js';
import type { JsonValue } from './json.js';
import { asObject } from './messages.js';
import { intField, requestedToolCalls, resultCallId, stringField } from './read-data.js';
import { foldSurface } from './surface.js';

/**
 * Codes of {@link InvariantViolation}:
 * - `MALFORMED_DATA`: a turn/step/tool field the rules need is missing or of the wrong type.
 * - `TURN_ALREADY_OPEN`, `TURN_NOT_OPEN`, `TURN_NUMBER`: turn brackets do not nest or count up.
 * - `STEP_ALREADY_OPEN`, `STEP_NOT_OPEN`, `STEP_NUMBER`: step brackets do not nest inside the
 *   turn or count up from 1.
 * - `OUTSIDE_STEP`: a chunk, assistant message, tool call or tool result is not in the open
 *   step it names.
 * - `OUTSIDE_TURN`: a request header or a `request/overflow` is logged outside a turn (an overflow
 *   also inside a step: it follows the failed step's `step/end`).
 * - `QUEUE_DELIVERY`: a `user/message` delivered from the queue (source kind `steer` or
 *   `follow-up`) does not cite exactly one queue event of its kind, or a queue event is
 *   delivered twice.
 * - `TOOL_CALL_NOT_REQUESTED`: a tool/call or tool/result for a call id the step's assistant
 *   message did not request.
 * - `DUPLICATE_TOOL_EVENT`: a second tool/call or tool/result for the same call id.
 * - `TOOL_CALL_UNANSWERED`: a step ended with a requested call that has no result.
 * - `PROVENANCE_KIND`: an assistant/message cites something other than its step's chunks, or a
 *   tool/result cites something other than its tool/call.
 * - `SURFACE_TOOL_PAIRING`: on the current surface, a tool result does not follow its call, or
 *   a call is not answered before the next message (providers reject such requests).
 * - `INVALID_LOG`: the log fails the session's own validation (a seed of it would be refused;
 *   the message gives the validation code), so the surface checks were skipped.
 * - `OPEN_AT_END`: the log ends inside a turn (reported only with `requireClosed`).
 */
export type InvariantCode =
  | 'MALFORMED_DATA'
  | 'TURN_ALREADY_OPEN'
  | 'TURN_NOT_OPEN'
  | 'TURN_NUMBER'
  | 'STEP_ALREADY_OPEN'
  | 'STEP_NOT_OPEN'
  | 'STEP_NUMBER'
  | 'OUTSIDE_STEP'
  | 'OUTSIDE_TURN'
  | 'QUEUE_DELIVERY'
  | 'TOOL_CALL_NOT_REQUESTED'
  | 'DUPLICATE_TOOL_EVENT'
  | 'TOOL_CALL_UNANSWERED'
  | 'PROVENANCE_KIND'
  | 'SURFACE_TOOL_PAIRING'
  | 'INVALID_LOG'
  | 'OPEN_AT_END';

/** One broken rule, located at an event. */
export interface InvariantViolation {
  readonly code: InvariantCode;
  readonly seq: number;
  readonly type: string;
  readonly message: string;
}

/** Options of {@link checkInvariants}. */
export interface InvariantOptions {
  /** Report a log that ends inside a turn (a crashed or still running writer). */
  readonly requireClosed?: boolean;
}

interface StepCall {
  readonly requestSeq: number;
  callSeq?: number;
  resultSeq?: number;
}

/**
 * Checks a log against the structural rules of an agent log and returns every violation found
 * (step and turn rules in log order, then the surface checks); an empty array means the log is
 * well formed. Never throws on malformed data: it reports it.
 */
export function checkInvariants(
  events: readonly SessionEvent[],
  options: InvariantOptions = {},
): readonly InvariantViolation[] {
  const violations: InvariantViolation[] = [];
  const report = (event: SessionEvent, code: InvariantCode, message: string): void => {
    violations.push(Object.freeze({ code, seq: event.seq, type: event.type, message }));
  };
  let lastTurn = 0;
  let openTurn: { turn: number; seq: number } | undefined;
  let openStep: number | undefined;
  let lastStep = 0;
  let calls = new Map<string, StepCall>();
  let chunkSeqs = new Set<number>();
  const byType = new Map<number, string>();
  const delivered = new Map<number, number>();

  const inStep = (event: SessionEvent): boolean => {
    const turn = intField(event, 'turn');
    const step = intField(event, 'step');
    if (turn === undefined || step === undefined) {
      report(event, 'MALFORMED_DATA', `expected integer turn and step fields`);
      return false;
    }
    if (
      openTurn === undefined ||
      openStep === undefined ||
      turn !== openTurn.turn ||
      step !== openStep
    ) {
      const open =
        openStep === undefined || openTurn === undefined
          ? 'no step is open'
          : `the open step is turn ${openTurn.turn} step ${openStep}`;
      report(event, 'OUTSIDE_STEP', `names turn ${turn} step ${step}, but ${open}`);
      return false;
    }
    return true;
  };

  const closeStep = (event: SessionEvent): void => {
    for (const [callId, call] of calls) {
      if (call.resultSeq === undefined) {
        report(
          event,
          'TOOL_CALL_UNANSWERED',
          `step ended without a result for tool call ${callId} (requested at seq ${call.requestSeq})`,
        );
      }
    }
    calls = new Map();
    chunkSeqs = new Set();
    openStep = undefined;
  };

  for (const event of events) {
    // Entries that are not even objects are reported once, by the fold (INVALID_LOG).
    if (typeof event !== 'object' || event === null) continue;
    byType.set(event.seq, event.type);
    switch (event.type) {
      case 'turn/start': {
        const turn = intField(event, 'turn');
        if (turn === undefined) {
          report(event, 'MALFORMED_DATA', 'expected an integer turn');
          break;
        }
        if (openTurn !== undefined) {
          report(
            event,
            'TURN_ALREADY_OPEN',
            `turn ${turn} starts while turn ${openTurn.turn} (seq ${openTurn.seq}) is open`,
          );
        }
        if (turn !== lastTurn + 1)
          report(event, 'TURN_NUMBER', `expected turn ${lastTurn + 1}, found turn ${turn}`);
        lastTurn = turn;
        openTurn = { turn, seq: event.seq };
        openStep = undefined;
        lastStep = 0;
        calls = new Map();
        break;
      }
      case 'turn/end': {
        const turn = intField(event, 'turn');
        if (openTurn === undefined || turn !== openTurn.turn) {
          report(
            event,
            'TURN_NOT_OPEN',
            `ends turn ${turn ?? '?'}, but ${openTurn === undefined ? 'no turn is open' : `turn ${openTurn.turn} is open`}`,
          );
        }
        if (openStep !== undefined) {
          report(event, 'STEP_ALREADY_OPEN', `turn ends while step ${openStep} is open`);
          closeStep(event);
        }
        if (!isTurnEndReason(asObject(dataAsJson(event))?.reason)) {
          report(event, 'MALFORMED_DATA', `expected reason {kind: ${TURN_END_KINDS.join(' | ')}}`);
        }
        openTurn = undefined;
        break;
      }
      case 'step/start': {
        const turn = intField(event, 'turn');
        const step = intField(event, 'step');
        if (turn === undefined || step === undefined) {
          report(event, 'MALFORMED_DATA', 'expected integer turn and step fields');
          break;
        }
        if (openTurn === undefined || openTurn.turn !== turn) {
          report(
            event,
            'TURN_NOT_OPEN',
            `step of turn ${turn} starts, but ${openTurn === undefined ? 'no turn is open' : `turn ${openTurn.turn} is open`}`,
          );
        }
        if (openStep !== undefined)
          report(event, 'STEP_ALREADY_OPEN', `step ${step} starts while step ${openStep} is open`);
        if (step !== lastStep + 1)
          report(event, 'STEP_NUMBER', `expected step ${lastStep + 1}, found step ${step}`);
        lastStep = step;
        openStep = step;
        calls = new Map();
        chunkSeqs = new Set();
        break;
      }
      case 'step/end': {
        const step = intField(event, 'step');
        if (
          openStep === undefined ||
          step !== openStep ||
          intField(event, 'turn') !== openTurn?.turn
        ) {
          report(
            event,
            'STEP_NOT_OPEN',
            `ends step ${step ?? '?'}, but ${openStep === undefined ? 'no step is open' : `step ${openStep} is open`}`,
          );
        }
        closeStep(event);
        break;
      }
      case 'request/header':
        if (openTurn === undefined) {
          report(event, 'OUTSIDE_TURN', 'a request header belongs inside a turn');
        }
        if (
          stringField(event, 'provider') === undefined ||
          stringField(event, 'model') === undefined
        ) {
          report(event, 'MALFORMED_DATA', 'expected string provider and model fields');
        }
        break;
      case 'request/overflow':
        if (openTurn === undefined || openStep !== undefined) {
          report(
            event,
            'OUTSIDE_TURN',
            'a request/overflow belongs inside a turn, between the failed step and the retry',
          );
        }
        break;
      case 'user/message':
        if (event.surfaceOp === 'append') checkDelivery(event, byType, delivered, report);
        break;
      case 'assistant/chunk':
        if (isElidedChunk(event)) {
          // A stub has no turn and step to read: it is checked by its position alone (inside
          // an open step), which is what a writer that names the open step produces.
          if (openStep === undefined) {
            report(event, 'OUTSIDE_STEP', 'an elided chunk lies outside any open step');
          } else {
            chunkSeqs.add(event.seq);
          }
          break;
        }
        if (inStep(event)) chunkSeqs.add(event.seq);
        break;
      case 'assistant/message': {
        if (event.surfaceOp !== 'append' || !inStep(event)) break;
        for (const source of event.sourceEventSeqs ?? []) {
          if (!chunkSeqs.has(source)) {
            report(
              event,
              'PROVENANCE_KIND',
              `cites seq ${source} (${byType.get(source) ?? 'unknown'}), which is not an assistant/chunk of its own step`,
            );
          }
        }
        for (const call of requestedToolCalls(event)) {
          if (calls.has(call.id))
            report(
              event,
              'DUPLICATE_TOOL_EVENT',
              `requests tool call ${call.id} twice in one step`,
            );
          else calls.set(call.id, { requestSeq: event.seq });
        }
        break;
      }
      case 'tool/call': {
        if (!inStep(event)) break;
        const callId = stringField(event, 'callId');
        const call = callId === undefined ? undefined : calls.get(callId);
        if (
          stringField(event, 'name') === undefined ||
          stringField(event, 'arguments') === undefined
        ) {
          report(event, 'MALFORMED_DATA', 'expected string name and arguments (the raw JSON text)');
        }
        if (callId === undefined) report(event, 'MALFORMED_DATA', 'expected a string callId');
        else if (call === undefined)
          report(
            event,
            'TOOL_CALL_NOT_REQUESTED',
            `tool call ${callId} was not requested by this step's assistant message`,
          );
        else if (call.callSeq !== undefined)
          report(
            event,
            'DUPLICATE_TOOL_EVENT',
            `tool call ${callId} already started at seq ${call.callSeq}`,
          );
        else call.callSeq = event.seq;
        break;
      }
      case 'tool/result': {
        if (event.surfaceOp !== 'append' || !inStep(event)) break;
        const callId = resultCallId(event);
        const call = callId === undefined ? undefined : calls.get(callId);
        if (call === undefined) {
          report(
            event,
            'TOOL_CALL_NOT_REQUESTED',
            `answers tool call ${callId ?? '?'}, which this step did not request`,
          );
          break;
        }
        if (call.resultSeq !== undefined) {
          report(
            event,
            'DUPLICATE_TOOL_EVENT',
            `tool call ${callId} already has a result at seq ${call.resultSeq}`,
          );
          break;
        }
        call.resultSeq = event.seq;
        checkResultProvenance(event, call, report);
        break;
      }
    }
  }
  const last = events[events.length - 1];
  const requireClosed = options.requireClosed === true;
  if (requireClosed && openTurn !== undefined && last !== undefined) {
    report(
      last,
      'OPEN_AT_END',
      `the log ends inside turn ${openTurn.turn} (opened at seq ${openTurn.seq})`,
    );
  }
  checkSurfacePairing(events, requireClosed || openTurn === undefined, report);
  return Object.freeze(violations);
}

/** The queue event type each delivered source kind must cite. */
const QUEUE_OF_SOURCE: Readonly<Record<string, string>> = {
  steer: 'queue/steer',
  'follow-up': 'queue/follow-up',
};

/**
 * A `user/message` from the queue cites exactly its queue event, and a queue event is delivered
 * once: the rule that makes a crash between queueing and delivery neither lose nor repeat it.
 */
function checkDelivery(
  event: SessionEvent,
  byType: ReadonlyMap<number, string>,
  delivered: Map<number, number>,
  report: (event: SessionEvent, code: InvariantCode, message: string) => void,
): void {
  const kind = asObject(asObject(dataAsJson(event))?.source)?.kind;
  const expected = typeof kind === 'string' ? QUEUE_OF_SOURCE[kind] : undefined;
  const cited = (event.sourceEventSeqs ?? []).filter((seq) =>
    byType.get(seq)?.startsWith('queue/'),
  );
  if (expected === undefined) {
    if (cited.length > 0) {
      report(
        event,
        'QUEUE_DELIVERY',
        `cites queue event ${cited[0]}, but its source kind is ${JSON.stringify(kind)}, not 'steer' or 'follow-up'`,
      );
    }
    return;
  }
  const sources = event.sourceEventSeqs ?? [];
  const [seq] = sources;
  if (sources.length !== 1 || seq === undefined || byType.get(seq) !== expected) {
    report(
      event,
      'QUEUE_DELIVERY',
      `a ${String(kind)} message must cite exactly one ${expected} event; found [${sources.slice(0, 5).join(', ')}]`,
    );
    return;
  }
  const before = delivered.get(seq);
  if (before !== undefined) {
    report(event, 'QUEUE_DELIVERY', `queue event ${seq} was already delivered at seq ${before}`);
    return;
  }
  delivered.set(seq, event.seq);
}

function isTurnEndReason(value: JsonValue | undefined): boolean {
  const reason = asObject(value);
  if (reason === undefined || !(TURN_END_KINDS as readonly unknown[]).includes(reason.kind))
    return false;
  return !reasonNeedsError(reason.kind) || typeof asObject(reason.error)?.message === 'string';
}

/**
 * Walks the messages of the current surface as a provider would receive them: every tool result
 * must answer a call of the assistant message before it, and every call must be answered before
 * the next non-tool message. Trailing unanswered calls are allowed while a turn is running.
 */
function checkSurfacePairing(
  events: readonly SessionEvent[],
  closed: boolean,
  report: (event: SessionEvent, code: InvariantCode, message: string) => void,
): void {
  let surface: readonly number[];
  try {
    surface = foldSurface(events).seqs;
  } catch (error) {
    if (!SessionValidationError.isInstance(error)) throw error;
    const index = error.index ?? events.length - 1;
    const entry: unknown = events[index];
    const type =
      typeof (entry as { type?: unknown } | null)?.type === 'string'
        ? (entry as SessionEvent).type
        : '(invalid)';
    report(
      { seq: index, type } as SessionEvent,
      'INVALID_LOG',
      `a session would refuse this log (${error.code}): ${error.message}`,
    );
    return;
  }
  const pending = new Map<string, SessionEvent>();
  const flushPending = (): void => {
    for (const [callId, request] of pending) {
      report(
        request,
        'SURFACE_TOOL_PAIRING',
        `tool call ${callId} is not answered on the surface before the next message`,
      );
    }
    pending.clear();
  };
  for (const seq of surface) {
    const event = events[seq] as SessionEvent;
    const message = deriveEventMessage(event);
    if (message === null) continue;
    if (message.role === 'tool') {
      const callId = message.content[0].toolCallId;
      if (!pending.delete(callId)) {
        report(
          event,
          'SURFACE_TOOL_PAIRING',
          `tool result for call ${callId} does not follow an unanswered call on the surface`,
        );
      }
      continue;
    }
    flushPending();
    if (message.role === 'assistant') {
      for (const block of message.content)
        if (block.type === 'tool-call') pending.set(block.id, event);
    }
  }
  if (closed) flushPending();
}

function checkResultProvenance(
  event: SessionEvent,
  call: StepCall,
  report: (event: SessionEvent, code: InvariantCode, message: string) => void,
): void {
  const sources = event.sourceEventSeqs;
  if (sources === undefined) return;
  // A result for a call that never started (TOOL_NOT_STARTED) cites the requesting message.
  const expected = call.callSeq ?? call.requestSeq;
  const cited =
    call.callSeq === undefined ? 'the assistant/message that requested it' : 'its tool/call';
  if (sources.length !== 1 || sources[0] !== expected) {
    report(
      event,
      'PROVENANCE_KIND',
      `a tool/result must cite exactly ${cited} (seq ${expected}); found [${sources.slice(0, 5).join(', ')}]`,
    );
  }
}
