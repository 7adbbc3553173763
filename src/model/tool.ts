/**
 * The tool contract between a model call and whoever executes calls: what a tool looks like to
 * the request builder (name, description, JSON Schema) and to the executor (`run`), and the
 * result codes a tool result carries. `defineTool` (in `palimpsest/agent`) builds tools; any
 * layer that offers the model a tool (compaction's recall tool) implements this interface.
 */
import type {
  ChildSessionLink,
  ErrorDetails,
  JsonObject,
  Session,
  ToolError,
  ToolResultContentBlock,
} from '../core/index.js';

/** Error codes a tool result can carry in `data.error.code`. */
export const TOOL_ERROR = {
  /** The model called a tool that is not in the turn's tool list. */
  unknownTool: 'UNKNOWN_TOOL',
  /** The arguments were not a JSON object, or failed the tool's schema. */
  invalidArguments: 'INVALID_ARGUMENTS',
  /** The tool threw, or returned something that is not JSON. */
  failed: 'TOOL_FAILED',
  /** The turn was cancelled before the tool finished; what it did is unknown. */
  aborted: 'TOOL_ABORTED',
  /**
   * The call was never run: the model's response ended for a reason after which tools do not
   * run (`length`, `content-filter`, `other`...), so the call may be cut off or unintended.
   */
  notRun: 'TOOL_NOT_RUN',
  /** The output is over the session's data limits: not stored, the model gets an excerpt. */
  outputTooLarge: 'TOOL_OUTPUT_TOO_LARGE',
  /** The writer's `beforeToolCall` hook denied the call (or it needs approval and none was asked); it never started. */
  denied: 'TOOL_DENIED',
} as const;

/** What a tool receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the turn is cancelled; long-running tools should stop when it fires. */
  readonly signal: AbortSignal;
  /** The provider's id of this call. */
  readonly callId: string;
  readonly turn: number;
  readonly step: number;
  /** The session being recorded (read it; appending from a tool is not supported). */
  readonly session: Session;
}

/** The outcome of one tool call, ready to become a `tool/result`. */
export interface ToolRun {
  readonly content: readonly ToolResultContentBlock[];
  readonly error?: ToolError;
  /** What the tool threw, as it was: handed to the developer's hook, never logged. */
  readonly thrown?: unknown;
  /** The child session the call ran in (a subagent): recorded on the `tool/result`. */
  readonly child?: ChildSessionLink;
}

/** A tool, as the loop and providers see it. Make one with `defineTool`. */
export interface Tool {
  readonly name: string;
  readonly description?: string;
  /** The JSON Schema sent to the provider. */
  readonly parameters: JsonObject;
  /**
   * Characters of output the model gets (the turn's `maxToolOutputChars` when absent); longer
   * output stays whole in the log and the model gets a head/tail excerpt.
   */
  readonly maxOutputChars?: number;
  /**
   * Whether a call needs a `beforeToolCall` decision before it runs (a call that needs one in a
   * turn without the hook is denied). Called with the parsed JSON arguments and the call id.
   */
  readonly needsApproval?: (input: JsonObject, callId: string) => boolean | Promise<boolean>;
  /**
   * The child session a call of this tool runs in (a subagent), known before it runs: the loop
   * records it on the call's `tool/call` before the tool starts, so a crash mid-call leaves a
   * link to the child. Absent for a tool that runs no child session.
   */
  readonly childSession?: (call: ChildSessionCall) => ChildSessionLink;
  /** Parses, validates and executes one call; never throws. */
  run(argumentsText: string, context: ToolContext): Promise<ToolRun>;
}

/** The call whose child session {@link Tool.childSession} names. */
export interface ChildSessionCall {
  /** The parent session (the one being recorded). */
  readonly session: Session;
  /** The provider's id of the call. */
  readonly callId: string;
}

/** Tool names every provider accepts: `[a-zA-Z0-9_-]{1,64}`. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** An error result the model can read. */
export function errorRun(code: string, message: string): ToolRun {
  return { content: [{ type: 'text', text: message }], error: { code, message } };
}

const MAX_DETAIL_MESSAGE = 2000;
const MAX_DETAIL_STACK = 8000;
const MAX_CAUSES = 4;

/**
 * A bounded copy of a thrown value for the log: name, message, stack, string `code` and up to
 * four causes, each clipped, so a tool that throws megabytes cannot make its result unloggable.
 */
export function errorDetails(thrown: unknown, depth = 0): ErrorDetails {
  if (!(thrown instanceof Error)) {
    return { name: typeof thrown, message: clipText(safeString(thrown), MAX_DETAIL_MESSAGE) };
  }
  const code = (thrown as { code?: unknown }).code;
  const cause = thrown.cause;
  return {
    name: clipText(thrown.name || 'Error', 200),
    message: clipText(thrown.message, MAX_DETAIL_MESSAGE),
    ...(typeof thrown.stack === 'string'
      ? { stack: clipText(thrown.stack, MAX_DETAIL_STACK) }
      : {}),
    ...(typeof code === 'string' ? { code: clipText(code, 200) } : {}),
    ...(cause !== undefined && depth < MAX_CAUSES ? { cause: errorDetails(cause, depth + 1) } : {}),
  };
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * The arguments of a call to tool `name` as a JSON object, or the `INVALID_ARGUMENTS` result
 * to answer with. Empty text means no arguments (some providers send nothing for `{}`).
 */
export function parseToolArguments(
  name: string,
  argumentsText: string,
): { readonly args: JsonObject } | { readonly refused: ToolRun } {
  let args: unknown;
  try {
    args = argumentsText.trim() === '' ? {} : JSON.parse(argumentsText);
  } catch (error) {
    return {
      refused: errorRun(
        TOOL_ERROR.invalidArguments,
        `The arguments for '${name}' are not valid JSON (${(error as Error).message}). Send one JSON object.`,
      ),
    };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return {
      refused: errorRun(
        TOOL_ERROR.invalidArguments,
        `The arguments for '${name}' must be a JSON object, found ${Array.isArray(args) ? 'an array' : typeof args}.`,
      ),
    };
  }
  return { args: args as JsonObject };
}
