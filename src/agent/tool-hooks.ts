/**
 * The developer's say over tool calls: `beforeToolCall` decides whether (and with which
 * arguments) a call runs, `afterToolCall` may replace what the model reads. Each decision is
 * checked here and turned into what the log records, so `run-tools` only appends.
 */
import type {
  JsonObject,
  JsonValue,
  ReplacedToolResult,
  Session,
  ToolCallBlock,
  ToolCallDecisionRecord,
  ToolError,
  ToolResultContentBlock,
} from '../core/index.js';
import { isJsonValue } from '../core/index.js';
import { errorRun, TOOL_ERROR, type Tool, type ToolRun, untilAborted } from '../model/index.js';
import { AgentError } from './errors.js';
import type { TurnHooks } from './types.js';

/** The step a decision is made in. */
export interface HookStep {
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly turn: number;
  readonly step: number;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly beforeToolCall?: TurnHooks['beforeToolCall'];
  readonly afterToolCall?: TurnHooks['afterToolCall'];
}

/** What happens to one call: it runs (with these arguments), or it is answered without running. */
export type CallPlan =
  | {
      readonly kind: 'run';
      readonly arguments: string;
      readonly decision?: ToolCallDecisionRecord;
    }
  | { readonly kind: 'answer'; readonly run: ToolRun; readonly decision?: ToolCallDecisionRecord };

/**
 * Asks `beforeToolCall` about one call of a known tool (unknown tools are answered by the
 * loop as before). A call whose tool needs approval is denied when there is no hook to ask.
 * Cancellation while the hook decides answers the call `TOOL_ABORTED` without running it.
 */
export async function planCall(step: HookStep, call: ToolCallBlock): Promise<CallPlan> {
  const tool = step.tools.get(call.name);
  const hook = step.beforeToolCall;
  if (tool === undefined || (hook === undefined && tool.needsApproval === undefined)) {
    return { kind: 'run', arguments: call.arguments };
  }
  const input = parseJson(call.arguments);
  const needsApproval =
    tool.needsApproval !== undefined && isObject(input)
      ? (await tool.needsApproval(input, call.id)) === true
      : false;
  if (hook === undefined) {
    if (!needsApproval) return { kind: 'run', arguments: call.arguments };
    return deny(call, 'it needs approval, and this turn has no beforeToolCall hook to give it');
  }
  const answer = await settle(
    hook({ ...callContext(step, call, call.arguments), input, needsApproval }),
    step.signal,
  );
  if (answer === ABORTED) return { kind: 'answer', run: notStartedRun() };
  const decision = answer.value;
  if (decision === undefined) {
    return { kind: 'run', arguments: call.arguments, decision: { action: 'allow' } };
  }
  switch (typeof decision === 'object' && decision !== null ? decision.action : undefined) {
    case 'allow':
      return { kind: 'run', arguments: call.arguments, decision: { action: 'allow' } };
    case 'deny': {
      const { reason } = decision as { reason?: unknown };
      if (typeof reason !== 'string') throw badDecision(`a string reason, found ${kindOf(reason)}`);
      return deny(call, reason);
    }
    case 'modify': {
      const args = (decision as { arguments?: unknown }).arguments;
      if (!isObject(args) || !isJsonValue(args)) {
        throw badDecision(`arguments as a JSON object, found ${kindOf(args)}`);
      }
      return {
        kind: 'run',
        arguments: JSON.stringify(args),
        decision: { action: 'modify', originalArguments: call.arguments },
      };
    }
    default:
      throw badDecision(
        `undefined or {action: 'allow' | 'deny' | 'modify'}, found ${kindOf(decision)}`,
      );
  }
}

/** A result with what the log records beside it when `afterToolCall` replaced it. */
export interface HookedRun {
  readonly run: ToolRun;
  readonly replaced?: ReplacedToolResult;
}

/** Lets `afterToolCall` see a finished call's result and replace it. */
export async function afterCall(
  step: HookStep,
  call: ToolCallBlock,
  args: string,
  run: ToolRun,
): Promise<HookedRun> {
  const hook = step.afterToolCall;
  if (hook === undefined || step.signal.aborted) return { run };
  const answer = await settle(
    hook({
      ...callContext(step, call, args),
      content: run.content,
      ...(run.error === undefined ? {} : { error: run.error }),
      ...(run.thrown === undefined ? {} : { thrown: run.thrown }),
    }),
    step.signal,
  );
  if (answer === ABORTED || answer.value === undefined) return { run };
  const replacement: unknown = answer.value;
  const content = replacementContent(replacement);
  const error = replacementError((replacement as { error?: unknown }).error);
  return {
    // The call still ran in its child session, whatever the hook made of its answer.
    run: {
      content,
      ...(error === undefined ? {} : { error }),
      ...(run.child === undefined ? {} : { child: run.child }),
    },
    replaced: {
      by: 'afterToolCall',
      content: run.content,
      ...(run.error === undefined ? {} : { error: run.error }),
    },
  };
}

/** What both hooks are told about a call: where it is, and what it is. */
function callContext(step: HookStep, call: ToolCallBlock, args: string) {
  const { session, signal, turn } = step;
  return {
    session,
    signal,
    turn,
    step: step.step,
    callId: call.id,
    name: call.name,
    arguments: args,
  };
}

function replacementContent(replacement: unknown): readonly ToolResultContentBlock[] {
  if (!isObject(replacement)) {
    throw badReplacement(`undefined or {content, error?}, found ${kindOf(replacement)}`);
  }
  const { content } = replacement as { content?: unknown };
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content)) return content as ToolResultContentBlock[];
  throw badReplacement(`content as a string or content blocks, found ${kindOf(content)}`);
}

function replacementError(error: unknown): ToolError | undefined {
  if (error === undefined) return undefined;
  if (isObject(error) && typeof error.code === 'string' && typeof error.message === 'string') {
    return { code: error.code, message: error.message };
  }
  throw badReplacement(`error as {code, message} strings, found ${kindOf(error)}`);
}

function deny(call: ToolCallBlock, reason: string): CallPlan {
  const run = errorRun(
    TOOL_ERROR.denied,
    `Tool '${call.name}' (call ${call.id}) was not run: the call was denied${reason === '' ? '' : `: ${reason}`}.`,
  );
  return { kind: 'answer', run, decision: { action: 'deny', reason } };
}

/** The result for a call whose turn was cancelled before it started. */
export function notStartedRun(): ToolRun {
  return errorRun(
    TOOL_ERROR.aborted,
    'The turn was cancelled before this tool started; it did not run.',
  );
}

const ABORTED = Symbol('aborted');

/** The hook's answer, or ABORTED when the signal fired first; what the hook throws is rethrown. */
async function settle<T>(
  value: T | Promise<T>,
  signal: AbortSignal,
): Promise<{ readonly value: T } | typeof ABORTED> {
  const outcome = Promise.resolve(value).then(
    (resolved) => ({ value: resolved }),
    (error: unknown) => ({ error }),
  );
  let settled: { value: T } | { error: unknown };
  try {
    settled = await untilAborted(outcome, signal);
  } catch {
    return ABORTED;
  }
  if ('error' in settled) throw settled.error;
  return settled;
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return text.trim() === '' ? {} : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object')
    return `an object with keys ${Object.keys(value).join(', ') || 'none'}`;
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : typeof value;
}

function badDecision(expected: string): AgentError {
  return new AgentError('INVALID_HOOK_RESULT', `beforeToolCall: expected ${expected}`);
}

function badReplacement(expected: string): AgentError {
  return new AgentError('INVALID_HOOK_RESULT', `afterToolCall: expected ${expected}`);
}
