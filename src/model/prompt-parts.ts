/**
 * The provider form of derived messages: each user or assistant message converted once, and a
 * run of consecutive tool results merged into one provider message.
 */
import type {
  JSONObject,
  JSONValue,
  LanguageModelV3Message,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type {
  AssistantContentBlock,
  AssistantMessage,
  ImageBlock,
  JsonObject,
  JsonValue,
  Message,
  ToolMessage,
  ToolResultBlock,
  UserMessage,
} from '../core/index.js';

/**
 * Messages are frozen and outlive many requests, so each is converted once, and a request whose
 * messages extend the previous request's gets the same provider messages again (which lets a
 * reader that sees the same objects skip them). Providers only read the prompt; the cached
 * parts are never mutated.
 */
const conversions = new WeakMap<Message, LanguageModelV3Message>();

/** The provider message of a user or assistant message, converted once per message. */
export function providerMessage(message: UserMessage | AssistantMessage): LanguageModelV3Message {
  let value = conversions.get(message);
  if (value === undefined) {
    value =
      message.role === 'user'
        ? {
            role: 'user',
            content: message.content.map((block) =>
              block.type === 'text'
                ? textPart(block.text, block.providerMetadata)
                : filePart(block),
            ),
          }
        : { role: 'assistant', content: message.content.map(assistantPart) };
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

/**
 * The provider message of a run of consecutive tool results (providers expect the results of
 * one assistant message together), the same object for the same run. A result names its tool
 * in the provider format; the name lives on the call, found in `toolNames` (call id to name).
 */
export function toolRunMessage(
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
