/**
 * The request a step sends, built from two things the log holds: the `request/header` in
 * effect (provider, model, system prompt, tool schemas, settings) and the messages derived from
 * the surface when the step started. The loop sends exactly what these functions build, so any
 * request can be rebuilt from a log prefix.
 */
import type {
  JSONObject,
  JSONValue,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolChoice,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type {
  AssistantContentBlock,
  ImageBlock,
  JsonObject,
  JsonValue,
  Message,
  MessageList,
  RequestHeaderData,
  ToolMessage,
  ToolResultBlock,
  ToolSchema,
} from '../core/index.js';
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

/** The provider prompt for a system prompt and derived messages. */
export function buildPrompt(
  system: string | undefined,
  messages: readonly Message[] | MessageList,
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Message[] = [];
  if (system !== undefined && system !== '') prompt.push({ role: 'system', content: system });
  // A tool result names its tool in the provider format; the name lives on the call.
  const toolNames = new Map<string, string>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages.at(index) as Message;
    switch (message.role) {
      case 'user':
        prompt.push(
          converted(message, () => ({
            role: 'user',
            content: message.content.map((block) =>
              block.type === 'text'
                ? textPart(block.text, block.providerMetadata)
                : filePart(block),
            ),
          })),
        );
        break;
      case 'assistant':
        for (const block of message.content) {
          if (block.type === 'tool-call') toolNames.set(block.id, block.name);
        }
        prompt.push(
          converted(message, () => ({
            role: 'assistant',
            content: message.content.map(assistantPart),
          })),
        );
        break;
      case 'tool': {
        // Consecutive results answer one assistant message; providers expect them together.
        let end = index + 1;
        while (end < messages.length && messages.at(end)?.role === 'tool') end++;
        prompt.push(toolRun(messages.slice(index, end) as readonly ToolMessage[], toolNames));
        index = end - 1;
        break;
      }
    }
  }
  return prompt;
}

/**
 * Messages are frozen and outlive many requests, so each is converted once, and a request whose
 * messages extend the previous request's gets the same provider messages again (which lets a
 * reader that sees the same objects skip them). Providers only read the prompt; the cached
 * parts are never mutated.
 */
const conversions = new WeakMap<Message, LanguageModelV3Message>();

function converted(
  message: Message,
  convert: () => LanguageModelV3Message,
): LanguageModelV3Message {
  let value = conversions.get(message);
  if (value === undefined) {
    value = convert();
    conversions.set(message, value);
  }
  return value;
}

interface ToolRun {
  readonly results: readonly ToolMessage[];
  readonly names: readonly string[];
  readonly value: LanguageModelV3Message;
}

/** Runs of results merged into one provider message, by their first result. */
const toolRuns = new WeakMap<Message, ToolRun>();

/** The provider message of a run of consecutive tool results, the same object for the same run. */
function toolRun(
  results: readonly ToolMessage[],
  toolNames: ReadonlyMap<string, string>,
): LanguageModelV3Message {
  const names = results.map((result) => toolNames.get(result.content[0].toolCallId) ?? 'unknown');
  const first = results[0] as ToolMessage;
  const cached = toolRuns.get(first);
  if (
    cached !== undefined &&
    cached.results.length === results.length &&
    cached.results.every((result, at) => result === results[at] && cached.names[at] === names[at])
  ) {
    return cached.value;
  }
  const value: LanguageModelV3Message = {
    role: 'tool',
    content: results.map((result) => toolResultPart(result.content[0], toolNames)),
  };
  toolRuns.set(first, { results, names, value });
  return value;
}

function assistantPart(block: AssistantContentBlock) {
  switch (block.type) {
    case 'text':
      return textPart(block.text, block.providerMetadata);
    case 'reasoning':
      return {
        type: 'reasoning' as const,
        text: block.text,
        ...providerOptions(block.providerMetadata),
      };
    case 'image':
      return filePart(block);
    case 'tool-call':
      return {
        type: 'tool-call' as const,
        toolCallId: block.id,
        toolName: block.name,
        input: toolCallInput(block.arguments),
        ...providerOptions(block.providerMetadata),
      };
  }
}

/**
 * The logged arguments are the model's raw text. Providers need an object; text that is not
 * a JSON object (the model's mistake, already answered by an error result) is sent as `{}` so
 * the session stays usable with providers that reject anything else.
 */
export function toolCallInput(argumentsText: string): JsonValue {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as JsonObject;
    }
  } catch {
    // Fall through: not JSON.
  }
  return {};
}

function toolResultPart(
  block: ToolResultBlock,
  toolNames: ReadonlyMap<string, string>,
): LanguageModelV3ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: block.toolCallId,
    toolName: toolNames.get(block.toolCallId) ?? 'unknown',
    output: toolOutput(block),
    ...providerOptions(block.providerMetadata),
  };
}

/**
 * The provider output of a tool result: its JSON value when it is one (`isJson`), its text
 * joined by newlines (`error-text` for an error), or its items when it holds images.
 */
export function toolOutput(block: ToolResultBlock): LanguageModelV3ToolResultOutput {
  const [only] = block.content;
  if (block.isJson === true && block.content.length === 1 && only?.type === 'text') {
    const value = JSON.parse(only.text) as JSONValue;
    return block.isError === true ? { type: 'error-json', value } : { type: 'json', value };
  }
  if (block.content.every((item) => item.type === 'text')) {
    const value = block.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
    return block.isError === true ? { type: 'error-text', value } : { type: 'text', value };
  }
  return {
    type: 'content',
    value: block.content.map((item) => {
      if (item.type === 'text') return { type: 'text' as const, text: item.text };
      if (item.data !== undefined) {
        return { type: 'file-data' as const, data: item.data, mediaType: item.mediaType };
      }
      return { type: 'file-url' as const, url: item.url ?? '' };
    }),
  };
}

function textPart(text: string, metadata: JsonObject | undefined) {
  return { type: 'text' as const, text, ...providerOptions(metadata) };
}

function filePart(block: ImageBlock) {
  return {
    type: 'file' as const,
    mediaType: block.mediaType,
    data: block.data ?? new URL(block.url ?? ''),
  };
}

/** Metadata a provider attached to a block goes back to it as that block's provider options. */
function providerOptions(metadata: JsonObject | undefined): {
  providerOptions?: SharedV3ProviderOptions;
} {
  return metadata === undefined ? {} : { providerOptions: metadata as Record<string, JSONObject> };
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
