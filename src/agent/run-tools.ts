/**
 * The tool half of a step: record every call the model asked for, make the records durable,
 * run the tools concurrently and record their results in call order.
 */
import type {
  FinishReason,
  Session,
  SessionEvent,
  ToolCallBlock,
  ToolMessage,
} from '../core/index.js';
import { errorRun, TOOL_ERROR, type Tool, type ToolRun, untilAborted } from '../model/index.js';
import { abortedRun, unknownToolRun } from './tools.js';
import type { ToolFailure } from './types.js';

/** Who hears about the events and failures of a step's tools. */
export interface ToolListeners {
  readonly onEvent?: ((event: SessionEvent) => void) | undefined;
  readonly onToolError?: ((failure: ToolFailure) => void) | undefined;
}

/** The step the tools run in. */
export interface ToolStep extends ToolListeners {
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly turn: number;
  readonly step: number;
  readonly tools: ReadonlyMap<string, Tool>;
  /** Waited on after the `tool/call` events are appended and before any tool starts. */
  readonly barrier: () => Promise<void>;
}

/**
 * Starts every call at once and records the results in call order. The `tool/call` events
 * are made durable before any tool runs, so crash repair can tell a call that never started
 * from one whose outcome is unknown. A call still running when the turn is cancelled is
 * answered `TOOL_ABORTED` without waiting for it.
 */
export async function runTools(
  context: ToolStep,
  calls: readonly ToolCallBlock[],
): Promise<ToolMessage[]> {
  const { session, signal, turn, step, tools, onEvent } = context;
  const callSeqs = calls.map((call) => {
    const event = session.append('tool/call', {
      turn,
      step,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
    });
    onEvent?.(event);
    return event.seq;
  });
  await context.barrier();
  const settled: (ToolRun | undefined)[] = calls.map(() => undefined);
  const pending = calls.map((call, index) => {
    const tool = tools.get(call.name);
    const run =
      tool === undefined
        ? Promise.resolve(unknownToolRun(call.name, [...tools.keys()]))
        : tool.run(call.arguments, { signal, callId: call.id, turn, step, session });
    return run.then((value) => {
      settled[index] = value;
      return value;
    });
  });
  const results: ToolMessage[] = [];
  for (const [index, call] of calls.entries()) {
    let outcome: ToolRun;
    try {
      outcome = await untilAborted(pending[index] as Promise<ToolRun>, signal);
    } catch {
      outcome = settled[index] ?? abortedRun();
    }
    results.push(appendResult(session, turn, step, call, outcome, callSeqs[index] ?? -1, context));
  }
  return results;
}

/** Where refused calls were requested, and why they are refused. */
export interface RefusedStep {
  readonly turn: number;
  readonly step: number;
  /** Seq of the `assistant/message` that requested the calls, which each result cites. */
  readonly requestSeq: number;
  readonly finishReason: FinishReason;
}

/**
 * Answers every call with `TOOL_NOT_RUN` without running anything. A result per call keeps the
 * surface valid for providers that refuse an unanswered call, and tells the model why; no
 * `tool/call` is logged, since no execution started (the result cites the requesting message,
 * as a `TOOL_NOT_STARTED` closer does).
 */
export function refuseTools(
  session: Session,
  refused: RefusedStep,
  calls: readonly ToolCallBlock[],
  listeners: ToolListeners,
): ToolMessage[] {
  const { turn, step, requestSeq, finishReason } = refused;
  return calls.map((call) => {
    const outcome = errorRun(
      TOOL_ERROR.notRun,
      `Tool '${call.name}' (call ${call.id}) was not run: the response ended with finish reason '${finishReason}', so the call may be cut off or unintended. Call it again if it is still needed.`,
    );
    return appendResult(session, turn, step, call, outcome, requestSeq, listeners);
  });
}

function appendResult(
  session: Session,
  turn: number,
  step: number,
  call: ToolCallBlock,
  outcome: ToolRun,
  sourceSeq: number,
  listeners: ToolListeners,
): ToolMessage {
  const message: ToolMessage = {
    id: crypto.randomUUID(),
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: call.id,
        content: outcome.content,
        ...(outcome.error === undefined ? {} : { isError: true }),
      },
    ],
  };
  const event = session.append(
    'tool/result',
    { turn, step, message, ...(outcome.error === undefined ? {} : { error: outcome.error }) },
    { surfaceOp: 'append', sourceEventSeqs: [sourceSeq] },
  );
  listeners.onEvent?.(event);
  const { error } = outcome;
  if (error !== undefined) {
    listeners.onToolError?.({
      turn,
      step,
      callId: call.id,
      name: call.name,
      code: error.code,
      message: error.message,
      ...(outcome.thrown === undefined ? {} : { error: outcome.thrown }),
      event,
    });
  }
  return message;
}
