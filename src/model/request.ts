/**
 * The request a step sends, built from two things the log holds: the `request/header` in
 * effect (provider, model, system prompt, tool schemas, settings) and the messages derived from
 * the surface when the step started. The loop sends exactly what these functions build, so any
 * request can be rebuilt from a log prefix.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3ToolChoice,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type {
  JsonObject,
  JsonValue,
  Message,
  MessageList,
  RequestHeaderData,
  ToolSchema,
} from '../core/index.js';
import { buildPrompt } from './prompt.js';
import type { Tool } from './tool.js';

/** Generation settings recorded in the request header and passed to the model. */
export interface ModelSettings {
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly topK?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  readonly stopSequences?: readonly string[];
  readonly seed?: number;
  readonly toolChoice?:
    | 'auto'
    | 'none'
    | 'required'
    | { readonly type: 'tool'; readonly toolName: string };
  /** Provider-specific options, keyed by provider (for example `{ anthropic: { thinking: … } }`). */
  readonly providerOptions?: { readonly [provider: string]: JsonObject };
  /**
   * The form of the answer: free text (the default) or JSON, optionally matching a JSON Schema
   * (structured output; the AI SDK's `Output.object` sends this).
   */
  readonly responseFormat?: ResponseFormat;
}

/** The answer's form in {@link ModelSettings.responseFormat}. */
export type ResponseFormat =
  | { readonly type: 'text' }
  | {
      readonly type: 'json';
      readonly schema?: JsonObject;
      readonly name?: string;
      readonly description?: string;
    };

/** The numeric settings a header records and a request carries, under the same names. */
export const NUMBER_SETTINGS = [
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'seed',
] as const;

/** The header a step runs under. Equal headers are logged once. */
export function buildHeader(
  model: LanguageModelV3,
  system: string | undefined,
  tools: readonly Tool[],
  settings: ModelSettings | undefined,
): RequestHeaderData {
  const schemas: ToolSchema[] = tools.map((tool) => ({
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.parameters,
  }));
  const recordedSettings = settings === undefined ? undefined : settingsJson(settings);
  return {
    provider: model.provider,
    model: model.modelId,
    ...(system === undefined ? {} : { system }),
    ...(schemas.length === 0 ? {} : { tools: schemas }),
    ...(recordedSettings === undefined ? {} : { settings: recordedSettings }),
  };
}

/**
 * The model call options for a header and the messages of the surface (no abort signal or
 * HTTP headers: those are not part of what the model is asked). The messages may be a
 * session's {@link MessageList}, read without a copy.
 */
export function buildCallOptions(
  header: RequestHeaderData,
  messages: readonly Message[] | MessageList,
): LanguageModelV3CallOptions {
  const options: LanguageModelV3CallOptions = { prompt: buildPrompt(header.system, messages) };
  if (header.tools !== undefined && header.tools.length > 0) {
    options.tools = header.tools.map(
      (tool): LanguageModelV3FunctionTool => ({
        type: 'function',
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.parameters as LanguageModelV3FunctionTool['inputSchema'],
      }),
    );
  }
  const settings = (header.settings ?? {}) as ModelSettings;
  for (const key of NUMBER_SETTINGS) {
    const value = settings[key];
    if (typeof value === 'number') options[key] = value;
  }
  if (settings.stopSequences !== undefined) options.stopSequences = [...settings.stopSequences];
  if (settings.toolChoice !== undefined) options.toolChoice = toolChoice(settings.toolChoice);
  if (settings.providerOptions !== undefined) {
    options.providerOptions = settings.providerOptions as SharedV3ProviderOptions;
  }
  if (settings.responseFormat !== undefined) {
    options.responseFormat = settings.responseFormat as NonNullable<
      LanguageModelV3CallOptions['responseFormat']
    >;
  }
  return options;
}

function toolChoice(choice: NonNullable<ModelSettings['toolChoice']>): LanguageModelV3ToolChoice {
  return typeof choice === 'string'
    ? { type: choice }
    : { type: 'tool', toolName: choice.toolName };
}

function settingsJson(settings: ModelSettings): JsonObject | undefined {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value !== undefined) out[key] = value as JsonValue;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
