/**
 * The tool half of a step: record every call the model asked for, make the records durable,
 * run the tools concurrently and record their results in call order.
 */
import {
  type ChildSessionLink,
  type FinishReason,
  type Session,
  type SessionEvent,
  SessionValidationError,
  type ToolCallBlock,
  type ToolMessage,
  type ToolResultContentBlock,
  type ToolResultData,
} from '../core/index.js';
import {
  errorRun,
  excerptBlocks,
  type ResultNotes,
  type ResultPosition,
  recordToolCall,
  recordToolResult,
  TOOL_ERROR,
  type ToolRun,
  textChars,
  untilAborted,
} from '../model/index.js';
import { afterCall, type CallPlan, type HookStep, planCall } from './tool-hooks.js';
import { abortedRun, unknownToolRun } from './tools.js';
import type { ToolFailure } from './types.js';

/** Who hears about the events and failures of a step's tools. */
export interface ToolListeners {
  readonly onEvent?: ((event: SessionEvent) => void) | undefined;
  readonly onToolError?: ((failure: ToolFailure) => void) | undefined;
}

/** The step the tools run in. */
export interface ToolStep extends ToolListeners, HookStep {
  /** Waited on after the `tool/call` events are appended and before any tool starts. */
  readonly barrier: () => Promise<void>;
  /** Characters of output the model gets from a tool without its own `maxOutputChars`. */
  readonly maxOutputChars: number;
  /** Seq of the `assistant/message` that requested the calls: a call denied before it started cites it. */
  readonly requestSeq: number;
}

/**
 * Asks `beforeToolCall` about each call in order (a denial is recorded as it is decided), then
 * starts every allowed call at once and records the results in call order, each seen by
 * `afterToolCall` first. The `tool/call` events (naming the child session of a tool that runs
 * one) are made durable before any tool runs, so crash repair can tell a call that never started
 * from one whose outcome is unknown, and a crash mid-call still leads to the child. A call still
 * running when the turn is cancelled is answered `TOOL_ABORTED` without waiting for it.
 */
export async function runTools(
  context: ToolStep,
  calls: readonly ToolCallBlock[],
): Promise<ToolMessage[]> {
  const { session, signal, turn, step, tools, onEvent } = context;
  const results: ToolMessage[] = [];
  const running: {
    index: number;
    call: ToolCallBlock;
    arguments: string;
    seq: number;
    child: ChildSessionLink | undefined;
  }[] = [];
  const plans: CallPlan[] = [];
  for (const [index, call] of calls.entries()) {
    const plan = await planCall(context, call);
    plans.push(plan);
    if (plan.kind === 'answer') {
      // Recorded at once: the decision is in the log even if the turn goes no further.
      const position = { turn, step, sourceSeq: context.requestSeq };
      results[index] = recordResult(session, position, call, plan.run, context, {
        decision: plan.decision,
      });
    }
  }
  for (const [index, call] of calls.entries()) {
    const plan = plans[index] as CallPlan;
    if (plan.kind === 'answer') continue;
    const child = tools.get(call.name)?.childSession?.({ session, callId: call.id });
    const event = recordToolCall(
      session,
      { turn, step },
      call,
      plan.arguments,
      plan.decision,
      child,
    );
    onEvent?.(event);
    running.push({ index, call, arguments: plan.arguments, seq: event.seq, child });
  }
  if (running.length === 0) return results;
  await context.barrier();
  const settled: (ToolRun | undefined)[] = running.map(() => undefined);
  const pending = running.map(({ call, arguments: args }, index) => {
    const tool = tools.get(call.name);
    const run =
      tool === undefined
        ? Promise.resolve(unknownToolRun(call.name, [...tools.keys()]))
        : tool.run(args, { signal, callId: call.id, turn, step, session });
    return run.then((value) => {
      settled[index] = value;
      return value;
    });
  });
  for (const [
    index,
    { call, arguments: args, seq, index: callIndex, child },
  ] of running.entries()) {
    let outcome: ToolRun;
    try {
      outcome = await untilAborted(pending[index] as Promise<ToolRun>, signal);
    } catch {
      // Not waited for: the child session the call was running in is still named.
      outcome = settled[index] ?? { ...abortedRun(), ...(child === undefined ? {} : { child }) };
    }
    const hooked = await afterCall(context, call, args, outcome);
    const limit = tools.get(call.name)?.maxOutputChars ?? context.maxOutputChars;
    const position = { turn, step, sourceSeq: seq };
    results[callIndex] = recordResult(session, position, call, hooked.run, context, {
      replaced: hooked.replaced,
      limit,
    });
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
    return recordResult(
      session,
      { turn, step, sourceSeq: requestSeq },
      call,
      outcome,
      listeners,
      {},
    );
  });
}

/** What a result records besides its outcome, and the output limit that applies to it. */
interface ResultExtra extends ResultNotes {
  readonly limit?: number;
}

/**
 * Appends the result of one call. Nothing a tool returns can make this throw for the tool's
 * sake: output the session refuses becomes an error result (`TOOL_OUTPUT_TOO_LARGE` over the
 * data limits, `TOOL_FAILED` for content it cannot hold), and output over `limit` characters is
 * appended whole and then replaced on the surface by a head/tail excerpt citing it, so the log
 * keeps everything and the model gets what fits.
 */
function recordResult(
  session: Session,
  position: ResultPosition,
  call: ToolCallBlock,
  run: ToolRun,
  listeners: ToolListeners,
  extra: ResultExtra,
): ToolMessage {
  const { limit } = extra;
  let outcome = run;
  let event: SessionEvent<'tool/result'>;
  try {
    event = recordToolResult(session, position, call, outcome, extra);
  } catch (error) {
    if (!SessionValidationError.isInstance(error)) throw error;
    outcome =
      error.code === 'DATA_LIMIT_EXCEEDED'
        ? tooLargeRun(call, run, error.message, limit ?? DEFAULT_EXCERPT_CHARS)
        : errorRun(
            TOOL_ERROR.failed,
            `Tool '${call.name}' returned content the session log cannot hold: ${error.message}`,
          );
    event = recordToolResult(session, position, call, outcome, extra);
  }
  listeners.onEvent?.(event);
  let message = event.data.message;
  const block = message.content[0];
  const chars = limit === undefined || block === undefined ? 0 : textChars(block.content);
  if (limit !== undefined && block !== undefined && chars > limit) {
    const content = cutToLimit(
      block.content,
      chars,
      limit,
      (cut, total) =>
        `\n[… ${cut.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} characters cut from this tool output (limit ${limit.toLocaleString('en-US')}); the full output is event #${event.seq} of the session log …]\n`,
    );
    const data: ToolResultData = {
      ...event.data,
      message: { ...message, content: [{ ...block, content }] },
    };
    const replacement = session.append('tool/result', data, {
      surfaceOp: { op: 'replace', start: event.seq, end: event.seq },
      sourceEventSeqs: [event.seq],
    });
    listeners.onEvent?.(replacement);
    message = replacement.data.message;
  }
  const { error } = outcome;
  if (error !== undefined) {
    listeners.onToolError?.({
      turn: position.turn,
      step: position.step,
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

/** The excerpt size when no limit applies (a refused call's text is short anyway). */
const DEFAULT_EXCERPT_CHARS = 40_000;

function cutToLimit(
  blocks: readonly ToolResultContentBlock[],
  chars: number,
  limit: number,
  marker: (cut: number, total: number) => string,
): ToolResultContentBlock[] {
  const headChars = Math.ceil(limit * 0.7);
  return excerptBlocks(blocks, chars, { headChars, tailChars: limit - headChars, marker });
}

/** The result for output over the session's data limits: an excerpt of its text, not stored. */
function tooLargeRun(call: ToolCallBlock, run: ToolRun, reason: string, limit: number): ToolRun {
  const text = run.content.filter((block) => block.type === 'text');
  const chars = textChars(text);
  const message = `The output of tool '${call.name}' (${chars.toLocaleString('en-US')} characters) is over the session's data limits (${reason}); it was not stored, and only an excerpt of its text is kept.`;
  const content = cutToLimit(
    text,
    chars,
    limit,
    (cut, total) =>
      `\n[… ${cut.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} characters cut; the whole output was too large to store …]\n`,
  );
  return {
    content: [{ type: 'text', text: message }, ...content],
    error: { code: TOOL_ERROR.outputTooLarge, message },
  };
}
