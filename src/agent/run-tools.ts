/**
 * The tool half of a step: record every call the model asked for, make the records durable,
 * run the tools concurrently and record their results in call order.
 */
import type { Session, SessionEvent, ToolCallBlock, ToolMessage } from '../core/index.js';
import { type Tool, type ToolRun, untilAborted } from '../model/index.js';
import { abortedRun, unknownToolRun } from './tools.js';

/** The step the tools run in. */
export interface ToolStep {
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly turn: number;
  readonly step: number;
  readonly tools: ReadonlyMap<string, Tool>;
  /** Told about each event appended here, right after it is appended. */
  readonly onEvent: ((event: SessionEvent) => void) | undefined;
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
      {
        turn,
        step,
        message,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      },
      { surfaceOp: 'append', sourceEventSeqs: [callSeqs[index] ?? -1] },
    );
    onEvent?.(event);
    results.push(message);
  }
  return results;
}
