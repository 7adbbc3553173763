/**
 * Tools the model can call: their definitions and one execution of one call. Every way a call
 * can go wrong (unknown tool, arguments that are not JSON or fail the schema, a throwing or
 * cancelled tool) becomes an error result the model can read; none of them escapes the loop.
 * The contract a tool implements (`Tool`) lives in the model layer, so compaction can offer
 * tools without depending on the agent.
 */
import type { JsonObject, JsonValue, ToolResultContentBlock } from '../core/index.js';
import {
  errorDetails,
  errorRun,
  parseToolArguments,
  TOOL_ERROR,
  TOOL_NAME,
  type Tool,
  type ToolContext,
  type ToolRun,
} from '../model/tool.js';
import { AgentError } from './errors.js';
import {
  formatIssues,
  type InferArguments,
  isStandardJsonSchema,
  type StandardIssue,
  type ToolParameters,
  toJsonSchema,
} from './schema.js';
import { toToolJson } from './tool-json.js';

const TOOL_CONTENT = Symbol('palimpsest.toolContent');

/** Rich tool output (text and images), made with {@link toolContent}. */
export interface ToolContent {
  readonly [TOOL_CONTENT]: true;
  readonly blocks: readonly ToolResultContentBlock[];
}

/**
 * What `execute` may return: a string (sent as text), {@link toolContent} blocks, or any other
 * value, sent as its JSON text converted as `JSON.stringify` would (`undefined` members dropped,
 * dates as ISO text, `toJSON` honoured). A value JSON cannot carry faithfully (a `Map`, `Set`,
 * `Buffer`, class instance, function, bigint, non-finite number or cycle) makes the call a
 * `TOOL_FAILED` result whose message names its path (`result.stats.mtime`).
 */
export type ToolOutput = string | JsonValue | ToolContent | object | undefined;

/** Wraps content blocks (text, images) as a tool's output. */
export function toolContent(blocks: readonly ToolResultContentBlock[]): ToolContent {
  return { [TOOL_CONTENT]: true, blocks };
}

/** The definition given to {@link defineTool}. */
export interface ToolSpec<P extends ToolParameters> {
  /** `[a-zA-Z0-9_-]{1,64}`: the intersection of what every provider accepts. */
  readonly name: string;
  readonly description?: string;
  /** JSON Schema of the arguments object, or a Standard Schema with JSON Schema export (zod 4). */
  readonly parameters: P;
  /**
   * Characters of output the model gets from this tool (default: the turn's
   * `maxToolOutputChars`); longer output stays whole in the log, the model gets an excerpt.
   */
  readonly maxOutputChars?: number;
  /**
   * Whether a call needs approval before it runs: `true`, or a function of the call's JSON
   * arguments (before validation). A call that needs it goes to the turn's `beforeToolCall`
   * hook with `needsApproval: true`, and is denied (`TOOL_DENIED`) when the turn has no hook.
   */
  readonly needsApproval?: boolean | ((args: JsonObject) => boolean | Promise<boolean>);
  readonly execute: (
    args: InferArguments<P>,
    context: ToolContext,
  ) => ToolOutput | Promise<ToolOutput>;
}

/**
 * Defines a tool. With a Standard Schema (zod 4.2+, valibot, arktype) the arguments are
 * validated and typed; with a plain JSON Schema they are only checked to be a JSON object.
 */
export function defineTool<P extends ToolParameters>(spec: ToolSpec<P>): Tool {
  if (typeof spec !== 'object' || spec === null) {
    throw new AgentError(
      'INVALID_TOOL',
      `expected a tool definition object, found ${String(spec)}`,
    );
  }
  const name = checkToolBasics(spec.name, spec);
  const validator = isStandardJsonSchema(spec.parameters) ? spec.parameters : undefined;
  return buildTool({
    name,
    description: spec.description,
    maxOutputChars: spec.maxOutputChars,
    needsApproval: approvalOf(name, spec.needsApproval),
    parameters: toJsonSchema(name, spec.parameters),
    validate:
      validator === undefined ? undefined : (value) => validator['~standard'].validate(value),
    execute: spec.execute as ToolParts['execute'],
  });
}

/** A validation result: the parsed value, or the problems (Standard Schema's shape). */
export type Validation =
  | { readonly value: unknown; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

/** What a tool is made of once its definition was checked. */
export interface ToolParts {
  readonly name: string;
  readonly description: string | undefined;
  readonly maxOutputChars: number | undefined;
  readonly needsApproval: Tool['needsApproval'];
  readonly parameters: JsonObject;
  /** Checks and parses the JSON arguments; absent: any JSON object is accepted. */
  readonly validate: ((value: unknown) => Validation | Promise<Validation>) | undefined;
  readonly execute: (args: unknown, context: ToolContext) => ToolOutput | Promise<ToolOutput>;
}

/**
 * Checks what every tool definition has (name, description, output limit, an execute function)
 * and returns the name; the messages say which tool and what was found.
 */
export function checkToolBasics(
  name: unknown,
  spec: {
    readonly description?: unknown;
    readonly maxOutputChars?: unknown;
    readonly execute?: unknown;
  },
): string {
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw new AgentError(
      'INVALID_TOOL',
      `expected a tool name matching [a-zA-Z0-9_-]{1,64}, found ${JSON.stringify(name) ?? String(name)}`,
    );
  }
  if (typeof spec.execute !== 'function') {
    throw new AgentError('INVALID_TOOL', `tool '${name}': expected an execute function`);
  }
  if (spec.description !== undefined && typeof spec.description !== 'string') {
    throw new AgentError('INVALID_TOOL', `tool '${name}': expected a string description`);
  }
  const limit = spec.maxOutputChars;
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1)
  ) {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${name}': expected maxOutputChars to be a positive integer, found ${String(limit)}`,
    );
  }
  return name;
}

/** The frozen tool the loop runs: parse, validate, execute, convert the output. */
export function buildTool(parts: ToolParts): Tool {
  const { name, description, maxOutputChars, needsApproval, parameters } = parts;
  return Object.freeze({
    name,
    ...(description === undefined ? {} : { description }),
    ...(maxOutputChars === undefined ? {} : { maxOutputChars }),
    ...(needsApproval === undefined ? {} : { needsApproval }),
    parameters,
    run: (argumentsText: string, context: ToolContext) => runTool(parts, argumentsText, context),
  });
}

/** `needsApproval` as the function the loop calls; refuses anything but a boolean or a function. */
export function approvalOf(name: string, value: unknown): Tool['needsApproval'] {
  if (value === undefined || value === false) return undefined;
  if (value === true) return () => true;
  if (typeof value === 'function') return value as (args: JsonObject) => boolean | Promise<boolean>;
  throw new AgentError(
    'INVALID_TOOL',
    `tool '${name}': expected needsApproval to be a boolean or a function, found ${typeof value}`,
  );
}

/** The error result for a call to a tool the turn does not have. */
export function unknownToolRun(name: string, available: readonly string[]): ToolRun {
  const list = available.length === 0 ? 'none' : available.join(', ');
  return errorRun(
    TOOL_ERROR.unknownTool,
    `There is no tool named '${name}'. Available tools: ${list}.`,
  );
}

/** The error result for a call cancelled before its tool finished. */
export function abortedRun(): ToolRun {
  return errorRun(
    TOOL_ERROR.aborted,
    'The turn was cancelled before this tool finished; whatever it did so far is unknown.',
  );
}

async function runTool(
  parts: ToolParts,
  argumentsText: string,
  context: ToolContext,
): Promise<ToolRun> {
  const { name, validate, execute } = parts;
  const parsed = parseToolArguments(name, argumentsText);
  if ('refused' in parsed) return parsed.refused;
  let args: unknown = parsed.args;
  if (validate !== undefined) {
    const result = await validate(args);
    if (result.issues !== undefined) {
      return errorRun(
        TOOL_ERROR.invalidArguments,
        `The arguments for '${name}' do not match its schema: ${formatIssues(result.issues)}.`,
      );
    }
    args = result.value;
  }
  let output: ToolOutput;
  try {
    output = await execute(args, context);
  } catch (error) {
    if (context.signal.aborted) return abortedRun();
    const message = `Tool '${name}' failed: ${errorMessage(error)}`;
    return {
      content: [{ type: 'text', text: message }],
      error: { code: TOOL_ERROR.failed, message, exception: errorDetails(error) },
      thrown: error,
    };
  }
  return outputRun(name, output);
}

function outputRun(name: string, output: ToolOutput): ToolRun {
  if (output === undefined) return { content: [{ type: 'text', text: '' }] };
  if (typeof output === 'string') return { content: [{ type: 'text', text: output }] };
  if (typeof output === 'object' && output !== null && TOOL_CONTENT in output) {
    return { content: output.blocks };
  }
  const converted = toToolJson(output);
  if ('problem' in converted) {
    return errorRun(
      TOOL_ERROR.failed,
      `Tool '${name}' returned a value that cannot be sent to the model as JSON: ${converted.problem}.`,
    );
  }
  const { json } = converted;
  return {
    content: [{ type: 'text', text: typeof json === 'string' ? json : JSON.stringify(json) }],
  };
}

function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  // The model needs the gist; errorDetails keeps more of it for the developer.
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

export { TOOL_ERROR, type Tool, type ToolContext, type ToolRun };
