/**
 * AI SDK `tool()` objects as loop tools. The agent layer does not import `ai` (DESIGN §2: a
 * framework is imported only by its adapter), so a tool is recognised by its shape: an
 * `inputSchema` (zod 4 or another Standard JSON Schema, the `jsonSchema()` / `zodSchema()`
 * `Schema` objects, or a lazy function returning one) and an `execute(input, options)`.
 */
import type { JsonObject, ToolResultContentBlock } from '../core/index.js';
import type { Tool } from '../model/index.js';
import { AgentError } from './errors.js';
import { isStandardJsonSchema, toJsonSchema } from './schema.js';
import {
  approvalOf,
  buildTool,
  checkToolBasics,
  type ToolOutput,
  type ToolParts,
  toolContent,
  type Validation,
} from './tools.js';

/** What an AI SDK tool's `execute` receives from the loop. */
export interface AiSdkToolExecutionOptions {
  readonly toolCallId: string;
  /**
   * Always empty: the loop's messages are palimpsest messages, not AI SDK `ModelMessage`s. A
   * tool that needs the conversation reads it from the session.
   */
  readonly messages: never[];
  readonly abortSignal: AbortSignal;
}

/**
 * The shape of an AI SDK 6 tool (`tool({ description, inputSchema, execute })`) that the loop
 * runs. The functions take `never` on purpose: every `tool()` result fits, whatever its input
 * and output types. `execute` gets the validated input and {@link AiSdkToolExecutionOptions};
 * `toModelOutput` gets `{toolCallId, input, output}`.
 */
export interface AiSdkTool {
  /** `'function'` or `'dynamic'`; provider-defined tools (`'provider'`) are refused. */
  readonly type?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly execute?: ((input: never, options: never) => unknown) | undefined;
  /** `true`, or `(input, options) => boolean | Promise<boolean>`: see `beforeToolCall`. */
  readonly needsApproval?: unknown;
  readonly toModelOutput?: ((options: never) => unknown) | undefined;
}

const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema');

/**
 * Wraps an AI SDK tool as a loop tool named `name` (the key it has in an AI SDK `tools`
 * record). `runTurn` does this itself for a `tools` record; use this to mix AI SDK tools into a
 * list of `defineTool` tools.
 *
 * @throws AgentError `INVALID_TOOL` for a provider-defined tool, a tool without `execute`, or a
 *   schema palimpsest cannot turn into JSON Schema (zod 3: wrap it with the AI SDK's `zodSchema()`).
 *
 * @example
 * ```ts
 * import { tool } from 'ai';
 * import { Session } from 'palimpsest';
 * import { fromAiSdkTool, runTurn } from 'palimpsest/agent';
 * import { scriptedModel } from 'palimpsest/testing';
 * import { z } from 'zod';
 *
 * const weather = tool({
 *   description: 'Current weather for a city.',
 *   inputSchema: z.object({ city: z.string() }),
 *   execute: async ({ city }) => ({ city, celsius: 21 }),
 * });
 * const model = scriptedModel([
 *   { toolCalls: [{ name: 'weather', args: { city: 'Lisbon' } }] },
 *   { text: 'Yes, 21 °C.' },
 * ]);
 * const session = Session.create({ id: 'ai-sdk-tool-example' });
 * // In a record the key names the tool; in a list, fromAiSdkTool names it.
 * const result = await runTurn({ session, model, tools: { weather }, input: 'Warm in Lisbon?' });
 * console.log(result.toolResults[0]?.content[0]?.type === 'text' && result.toolResults[0].content[0].text); // '{"city":"Lisbon","celsius":21}'
 * console.log(fromAiSdkTool('weather', weather).name); // 'weather'
 * ```
 */
export function fromAiSdkTool(name: string, tool: AiSdkTool): Tool {
  if (typeof tool !== 'object' || tool === null) {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${name}': expected an AI SDK tool object, found ${tool === null ? 'null' : typeof tool}`,
    );
  }
  if (tool.type === 'provider') {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${name}': expected a function tool, found a provider-defined tool (the provider runs those; the loop cannot)`,
    );
  }
  if (typeof tool.execute !== 'function') {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${name}': expected an execute function (an AI SDK tool without one is answered by the client, which the loop cannot wait for)`,
    );
  }
  checkToolBasics(name, tool);
  // Called as methods of the tool object, as the AI SDK calls them.
  const execute = (
    tool.execute as (input: unknown, options: AiSdkToolExecutionOptions) => unknown
  ).bind(tool);
  const toModelOutput = (
    tool.toModelOutput as
      | ((options: { toolCallId: string; input: unknown; output: unknown }) => unknown)
      | undefined
  )?.bind(tool);
  const approval = tool.needsApproval;
  const needsApproval =
    typeof approval === 'function'
      ? (input: JsonObject, callId: string) =>
          (approval as (input: unknown, options: object) => boolean | Promise<boolean>)(input, {
            toolCallId: callId,
            messages: [],
          })
      : approvalOf(name, approval);
  return buildTool({
    name,
    description: tool.description,
    maxOutputChars: undefined,
    needsApproval,
    ...schemaParts(name, tool.inputSchema),
    execute: async (input, context) => {
      const options = { toolCallId: context.callId, messages: [], abortSignal: context.signal };
      const output = await finalOutput(await execute(input, options));
      if (toModelOutput === undefined) return output as ToolOutput;
      return modelOutput(name, await toModelOutput({ toolCallId: context.callId, input, output }));
    },
  });
}

/** The JSON Schema and the validator of an AI SDK `inputSchema`. */
function schemaParts(name: string, input: unknown): Pick<ToolParts, 'parameters' | 'validate'> {
  // A lazy schema (`lazySchema(() => ...)`) is a function returning the schema.
  const schema = typeof input === 'function' && !isStandardJsonSchema(input) ? input() : input;
  if (isStandardJsonSchema(schema)) {
    return {
      parameters: toJsonSchema(name, schema),
      validate: (value) => schema['~standard'].validate(value),
    };
  }
  if (typeof schema === 'object' && schema !== null && AI_SDK_SCHEMA in schema) {
    const { jsonSchema, validate } = schema as { jsonSchema?: unknown; validate?: unknown };
    if (typeof (jsonSchema as { then?: unknown } | null)?.then === 'function') {
      throw new AgentError(
        'INVALID_TOOL',
        `tool '${name}': expected a JSON Schema object, found a promise of one (await it and pass the schema to jsonSchema())`,
      );
    }
    return {
      parameters: toJsonSchema(name, jsonSchema),
      validate:
        typeof validate === 'function'
          ? aiSdkValidation(validate as (value: unknown) => unknown)
          : undefined,
    };
  }
  if (typeof schema === 'object' && schema !== null && '_def' in schema) {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${name}': expected zod 4, a Standard JSON Schema or an AI SDK jsonSchema()/zodSchema() inputSchema, found a zod 3 schema (wrap it with the AI SDK's zodSchema())`,
    );
  }
  return { parameters: toJsonSchema(name, schema), validate: undefined };
}

/** An AI SDK `validate` (`{success, value}` or `{success: false, error}`) as a Validation. */
function aiSdkValidation(
  validate: (value: unknown) => unknown,
): (value: unknown) => Promise<Validation> {
  return async (value) => {
    const result = (await validate(value)) as
      | { success: true; value: unknown }
      | { success: false; error?: { message?: unknown } };
    if (result.success) return { value: result.value };
    return { issues: [{ message: String(result.error?.message ?? 'invalid input') }] };
  };
}

/** The last value of a streaming tool (an async iterable of preliminary outputs), else the value. */
async function finalOutput(output: unknown): Promise<unknown> {
  if (typeof output !== 'object' || output === null || !(Symbol.asyncIterator in output)) {
    return output;
  }
  let last: unknown;
  for await (const value of output as AsyncIterable<unknown>) last = value;
  return last;
}

/** A `toModelOutput` result (`{type: 'text' | 'json' | 'error-text' | 'error-json' | 'content', value}`). */
function modelOutput(name: string, output: unknown): ToolOutput {
  const { type, value } = (output ?? {}) as { type?: unknown; value?: unknown };
  switch (type) {
    case 'text':
      return String(value);
    case 'json':
      return value as ToolOutput;
    case 'error-text':
    case 'error-json':
      throw new Error(typeof value === 'string' ? value : JSON.stringify(value));
    case 'content':
      return toolContent(contentBlocks(name, value));
    default:
      throw new Error(
        `toModelOutput returned ${JSON.stringify(type) ?? 'no type'}; expected text, json, error-text, error-json or content`,
      );
  }
}

function contentBlocks(name: string, parts: unknown): ToolResultContentBlock[] {
  if (!Array.isArray(parts)) throw new Error(`toModelOutput of '${name}': expected content parts`);
  return parts.map(
    (part: { type?: unknown; text?: unknown; data?: unknown; mediaType?: unknown }) => {
      if (part.type === 'text') return { type: 'text', text: String(part.text) };
      if (
        (part.type === 'media' || part.type === 'image-data') &&
        typeof part.data === 'string' &&
        typeof part.mediaType === 'string'
      ) {
        return { type: 'image', mediaType: part.mediaType, data: part.data };
      }
      throw new Error(
        `toModelOutput of '${name}': expected text or base64 image parts, found ${JSON.stringify(part.type)}`,
      );
    },
  );
}
