/**
 * What a turn did, read back from the log between its `turn/start` and `turn/end`: the result
 * is a view of the log like everything else, so it says exactly what a reader of the session
 * finds.
 */
import type {
  AssistantMessage,
  ChildSessionLink,
  Session,
  ToolMessage,
  ToolResultContentBlock,
} from '../core/index.js';
import { isEventOfType, replaceOpOf } from '../core/index.js';

/** A tool call the model asked for during the turn. */
export interface TurnToolCall {
  readonly step: number;
  readonly callId: string;
  readonly name: string;
  /**
   * The raw JSON arguments: the ones the tool ran with when it started (a `beforeToolCall` hook
   * may have changed them), else the model's.
   */
  readonly arguments: string;
  /** True when the tool started (a `tool/call` was logged); false when it was refused or denied. */
  readonly started: boolean;
}

/** The result of one tool call of the turn, as logged (whole, before any output limit). */
export interface TurnToolResult {
  readonly step: number;
  readonly callId: string;
  readonly name: string;
  readonly content: readonly ToolResultContentBlock[];
  readonly isError: boolean;
  /** The error code (`TOOL_FAILED`, `TOOL_DENIED`, `TOOL_NOT_RUN`...) when `isError`. */
  readonly code?: string;
  /** The seq of its `tool/result` event. */
  readonly seq: number;
  /** The child session whose final answer this is (a subagent's call). */
  readonly child?: ChildSessionLink;
}

/** The parts of a turn result read from the log. */
export interface TurnRecord {
  readonly messages: readonly (AssistantMessage | ToolMessage)[];
  readonly toolCalls: readonly TurnToolCall[];
  readonly toolResults: readonly TurnToolResult[];
}

/** Reads the assistant and tool messages, calls and results of the events `start..end`. */
export function readTurnRecord(session: Session, start: number, end: number): TurnRecord {
  // Messages by the seq that put them on the surface; a result's excerpt takes its place.
  const messages = new Map<number, AssistantMessage | ToolMessage>();
  const calls = new Map<
    string,
    { step: number; name: string; arguments: string; started: boolean }
  >();
  const toolResults: TurnToolResult[] = [];
  for (let seq = start; seq <= end; seq++) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'assistant/message')) {
      const { message, step } = event.data;
      if (message.content.length > 0) messages.set(seq, message);
      for (const block of message.content) {
        if (block.type !== 'tool-call') continue;
        calls.set(block.id, { step, name: block.name, arguments: block.arguments, started: false });
      }
    } else if (isEventOfType(event, 'tool/call')) {
      const call = calls.get(event.data.callId);
      if (call !== undefined) {
        call.started = true;
        call.arguments = event.data.arguments;
      }
    } else if (isEventOfType(event, 'tool/result')) {
      const replaced = replaceOpOf(event);
      const { message, step, error, child } = event.data;
      if (replaced !== undefined) {
        if (messages.has(replaced.start)) messages.set(replaced.start, message);
        continue;
      }
      messages.set(seq, message);
      const block = message.content[0];
      if (block === undefined) continue;
      toolResults.push({
        step,
        callId: block.toolCallId,
        name: calls.get(block.toolCallId)?.name ?? '',
        content: block.content,
        isError: block.isError === true,
        ...(error === undefined ? {} : { code: error.code }),
        seq,
        ...(child === undefined ? {} : { child }),
      });
    }
  }
  return {
    messages: [...messages.values()],
    toolCalls: [...calls].map(([callId, call]) => ({ callId, ...call })),
    toolResults,
  };
}
