/**
 * AI SDK messages (`ModelMessage`, and the provider prompt the SDK hands a model) as
 * palimpsest messages. Each block is mapped to the block that goes on the wire the same way;
 * what palimpsest cannot hold is refused with an {@link AiSdkError} naming the message and
 * the part, never dropped.
 */
import type { LanguageModelV3Message } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import type {
  AssistantContentBlock,
  ImageBlock,
  JsonObject,
  JsonValue,
  Message,
  MessageSource,
  ModelSource,
  ToolMessage,
  ToolResultBlock,
  ToolResultContentBlock,
  UserContentBlock,
} from '../../core/index.js';
import { toLogJson, toolCallInput } from '../../model/index.js';
import { AiSdkError } from './errors.js';
import { asObject, stashOf, withoutStash } from './stash.js';

/** A message as the AI SDK holds it, or as it hands it to a model in a prompt. */
export type PromptMessage = ModelMessage | LanguageModelV3Message;

/** Options of {@link fromModelMessages}. */
export interface FromModelMessagesOptions {
  /**
   * The model assistant messages are attributed to when they carry no palimpsest source
   * (default provider and model `unknown`).
   */
  readonly model?: { readonly provider: string; readonly modelId: string };
  /** Makes the ids of messages that carry none (default `crypto.randomUUID()`). */
  readonly newId?: () => string;
}

/**
 * Palimpsest messages for AI SDK messages: the inverse of `toModelMessages`, and lossless on
 * what it produced. A tool message with several results becomes one message per result. JSON
 * tool outputs become their JSON text, which is what providers send for them; a denied
 * execution becomes an error result with its reason.
 *
 * @throws AiSdkError `UNSUPPORTED_CONTENT` for a system message (palimpsest keeps the system
 *   prompt in the request header: pass it as `system`), a file that is not an image, a
 *   provider-executed tool call or result, a tool approval, message-level provider options.
 *
 * @example
 * ```ts
 * import { fromModelMessages } from 'palimpsest/ai-sdk';
 *
 * const [message] = fromModelMessages([{ role: 'user', content: 'Hello' }]);
 * console.log(message?.content); // [{ type: 'text', text: 'Hello' }]
 * ```
 */
export function fromModelMessages(
  messages: readonly ModelMessage[],
  options: FromModelMessagesOptions = {},
): Message[] {
  return convertMessages(messages, options, 0);
}

/** {@link fromModelMessages} over prompt messages; errors name indexes from `offset`. */
export function convertMessages(
  messages: readonly PromptMessage[],
  options: FromModelMessagesOptions,
  offset: number,
): Message[] {
  const out: Message[] = [];
  for (const [at, message] of messages.entries()) {
    for (const converted of convertMessage(message, options, at + offset)) out.push(converted);
  }
  return out;
}

/**
 * One prompt message as palimpsest messages (a tool message gives one per result); errors
 * name it as message `index`.
 */
export function convertMessage(
  message: PromptMessage,
  options: FromModelMessagesOptions,
  index: number,
): Message[] {
  return new MessageReader(index, options, options.newId ?? randomId).message(message);
}

function randomId(): string {
  return crypto.randomUUID();
}

type Part = { readonly type: string; readonly [key: string]: unknown };

class MessageReader {
  constructor(
    private readonly index: number,
    private readonly options: FromModelMessagesOptions,
    private readonly newId: () => string,
  ) {}

  message(message: PromptMessage): Message[] {
    if (withoutStash(message.providerOptions) !== undefined) {
      throw this.refuse(message.role, 'message-level providerOptions');
    }
    const stash = stashOf(message.providerOptions);
    switch (message.role) {
      case 'system':
        throw this.refuse(
          'system',
          'a system message (palimpsest keeps the system prompt in the request header; pass it as `system`)',
        );
      case 'user': {
        const content: UserContentBlock[] = [];
        for (const part of parts(message.content)) {
          if (part.type === 'text') content.push(this.text(part));
          else if (part.type === 'image' || part.type === 'file') content.push(this.image(part));
          else throw this.refuse(part.type, `a ${part.type} part in a user message`);
        }
        return [
          this.plain({
            id: this.id(stash),
            role: 'user',
            content,
            source: userSource(stash) ?? { kind: 'user' },
          }),
        ];
      }
      case 'assistant': {
        const content: AssistantContentBlock[] = [];
        for (const part of parts(message.content)) content.push(this.assistantBlock(part));
        return [
          this.plain({
            id: this.id(stash),
            role: 'assistant',
            content,
            source: modelSource(stash) ?? this.defaultModel(),
          }),
        ];
      }
      case 'tool':
        return (message.content as readonly Part[]).map((part) => this.toolMessage(part));
    }
  }

  private assistantBlock(part: Part): AssistantContentBlock {
    switch (part.type) {
      case 'text':
        return this.text(part);
      case 'reasoning': {
        const metadata = withoutStash(part.providerOptions);
        return {
          type: 'reasoning',
          text: String(part.text),
          ...(metadata === undefined ? {} : { providerMetadata: metadata }),
        };
      }
      case 'file':
        return this.image(part);
      case 'tool-call': {
        if (part.providerExecuted === true) {
          throw this.refuse('tool-call', 'a provider-executed tool call');
        }
        const metadata = withoutStash(part.providerOptions);
        return {
          type: 'tool-call',
          id: String(part.toolCallId),
          name: String(part.toolName),
          arguments: callArguments(part.input, stashOf(part.providerOptions)),
          ...(metadata === undefined ? {} : { providerMetadata: metadata }),
        };
      }
      default:
        throw this.refuse(part.type, `a ${part.type} part in an assistant message`);
    }
  }

  private toolMessage(part: Part): ToolMessage {
    if (part.type !== 'tool-result') {
      throw this.refuse(part.type, `a ${part.type} part in a tool message`);
    }
    const stash = stashOf(part.providerOptions);
    const metadata = withoutStash(part.providerOptions);
    const block = this.resultBlock(String(part.toolCallId), part.output, stash);
    const content = metadata === undefined ? block : { ...block, providerMetadata: metadata };
    return this.plain({ id: this.id(stash), role: 'tool', content: [content] });
  }

  private resultBlock(
    toolCallId: string,
    output: unknown,
    stash: JsonObject | undefined,
  ): ToolResultBlock {
    const kept = stashedResult(toolCallId, stash);
    const natural = this.outputBlock(toolCallId, output as Part);
    // The stash is trusted only while it still says what the output says.
    if (kept !== undefined && sameOnWire(kept, natural)) return kept;
    return natural;
  }

  private outputBlock(toolCallId: string, output: Part): ToolResultBlock {
    const block = (
      content: ToolResultContentBlock[],
      isError: boolean,
      isJson = false,
    ): ToolResultBlock => ({
      type: 'tool-result',
      toolCallId,
      content,
      ...(isError ? { isError: true } : {}),
      ...(isJson ? { isJson: true } : {}),
    });
    switch (output.type) {
      case 'text':
      case 'error-text':
        return block([{ type: 'text', text: String(output.value) }], output.type === 'error-text');
      case 'json':
      case 'error-json':
        return block(
          [{ type: 'text', text: JSON.stringify(output.value ?? null) }],
          output.type === 'error-json',
          true,
        );
      case 'execution-denied':
        return block(
          [{ type: 'text', text: String(output.reason ?? 'Tool execution denied.') }],
          true,
        );
      case 'content':
        return block(
          (output.value as readonly Part[]).map((item) => this.outputItem(item)),
          false,
        );
      default:
        throw this.refuse(output.type, `a tool output of type ${output.type}`);
    }
  }

  private outputItem(item: Part): ToolResultContentBlock {
    switch (item.type) {
      case 'text':
        return { type: 'text', text: String(item.text) };
      case 'media':
      case 'file-data':
      case 'image-data':
        return this.image({ type: 'file', data: item.data, mediaType: item.mediaType });
      case 'file-url':
      case 'image-url':
        return this.image({
          type: 'file',
          data: String(item.url),
          mediaType: item.mediaType ?? 'image/*',
        });
      default:
        throw this.refuse(item.type, `a tool output item of type ${item.type}`);
    }
  }

  private text(part: Part): { type: 'text'; text: string; providerMetadata?: JsonObject } {
    const metadata = withoutStash(part.providerOptions);
    return {
      type: 'text',
      text: String(part.text),
      ...(metadata === undefined ? {} : { providerMetadata: metadata }),
    };
  }

  private image(part: Part): ImageBlock {
    const data = part.type === 'image' ? part.image : part.data;
    // The SDK's own convention for an image whose type it could not tell.
    const mediaType = typeof part.mediaType === 'string' ? part.mediaType : 'image/*';
    if (!mediaType.startsWith('image/')) {
      throw this.refuse(
        part.type,
        `a ${part.type} part of type ${mediaType} (palimpsest holds images only)`,
      );
    }
    if (part.filename !== undefined)
      throw this.refuse(part.type, `a ${part.type} part with a filename`);
    if (withoutStash(part.providerOptions) !== undefined) {
      throw this.refuse(part.type, `provider options on a ${part.type} part`);
    }
    if (data instanceof URL) return { type: 'image', mediaType, url: data.href };
    if (typeof data === 'string') {
      // Base64 has no colon; anything with a scheme is a URL, as the SDK reads it.
      return data.includes(':') && URL.canParse(data)
        ? { type: 'image', mediaType, url: data }
        : { type: 'image', mediaType, data };
    }
    if (data instanceof Uint8Array || data instanceof ArrayBuffer) {
      const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
      return { type: 'image', mediaType, data: toLogJson(bytes) as string };
    }
    throw this.refuse(part.type, `a ${part.type} part whose data is neither text, bytes nor a URL`);
  }

  private id(stash: JsonObject | undefined): string {
    const id = stash?.id;
    return typeof id === 'string' && id !== '' ? id : this.newId();
  }

  private defaultModel(): ModelSource {
    const model = this.options.model;
    return {
      kind: 'model',
      provider: model?.provider ?? 'unknown',
      model: model?.modelId ?? 'unknown',
    };
  }

  /**
   * Provider options are JSON by type, but may hold `undefined` fields the log cannot: the
   * message is made plain JSON here, so the session takes it as it is.
   */
  private plain<M extends Message>(message: M): M {
    return toLogJson(message) as M;
  }

  private refuse(part: string, what: string): AiSdkError {
    return new AiSdkError(
      'UNSUPPORTED_CONTENT',
      `message ${this.index}: expected content a palimpsest message can hold, found ${what}`,
      { messageIndex: this.index, part },
    );
  }
}

function parts(content: string | readonly unknown[]): readonly Part[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Part[]);
}

function userSource(stash: JsonObject | undefined): MessageSource | undefined {
  const source = asObject(stash?.source);
  return source !== undefined && typeof source.kind === 'string' && source.kind !== ''
    ? (source as MessageSource)
    : undefined;
}

function modelSource(stash: JsonObject | undefined): ModelSource | undefined {
  const source = asObject(stash?.source);
  if (source === undefined || source.kind !== 'model') return undefined;
  return typeof source.provider === 'string' && typeof source.model === 'string'
    ? (source as ModelSource)
    : undefined;
}

/**
 * The raw arguments: the stashed text while it still stands for the input (the request builder
 * sends it as this input), else the input's JSON.
 */
function callArguments(input: unknown, stash: JsonObject | undefined): string {
  const raw = stash?.arguments;
  const text = typeof input === 'string' ? input : JSON.stringify(toLogJson(input ?? {}));
  if (typeof raw === 'string' && JSON.stringify(toolCallInput(raw)) === text) return raw;
  return text;
}

function stashedResult(
  toolCallId: string,
  stash: JsonObject | undefined,
): ToolResultBlock | undefined {
  const content = stash?.content;
  if (!Array.isArray(content)) return undefined;
  return {
    type: 'tool-result',
    toolCallId,
    content: content as ToolResultContentBlock[],
    ...(stash?.isError === true ? { isError: true } : {}),
  };
}

/** Whether two results send the same text and images (the stash only adds structure). */
function sameOnWire(a: ToolResultBlock, b: ToolResultBlock): boolean {
  const flat = (block: ToolResultBlock): JsonValue =>
    block.content.map((item) => (item.type === 'text' ? item.text : (item.data ?? item.url ?? '')));
  const textOnly = (block: ToolResultBlock) => block.content.every((item) => item.type === 'text');
  if (textOnly(a) && textOnly(b)) {
    const join = (block: ToolResultBlock) =>
      block.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
    return join(a) === join(b);
  }
  return JSON.stringify(flat(a)) === JSON.stringify(flat(b));
}

/** A message as the SDK and the provider interface both shape it, for what only its parts say. */
interface LooseMessage {
  readonly role: string;
  readonly content: unknown;
}

/**
 * The calls a person denied through the SDK's approval flow, with the reason given: each tool
 * result whose output is `execution-denied`, by call id.
 */
export function deniedCalls(messages: readonly LooseMessage[]): Map<string, string> {
  const denied = new Map<string, string>();
  for (const part of partsOf(messages, 'tool')) {
    const output = part.output as Part | undefined;
    if (part.type === 'tool-result' && output?.type === 'execution-denied') {
      denied.set(String(part.toolCallId), typeof output.reason === 'string' ? output.reason : '');
    }
  }
  return denied;
}

/** The calls the SDK holds for a person's approval (`tool-approval-request` parts), by call id. */
export function callsAwaitingApproval(messages: readonly LooseMessage[]): Set<string> {
  const awaiting = new Set<string>();
  for (const part of partsOf(messages, 'assistant')) {
    if (part.type === 'tool-approval-request') awaiting.add(String(part.toolCallId));
  }
  return awaiting;
}

function partsOf(messages: readonly LooseMessage[], role: string): Part[] {
  return messages
    .filter((message) => message.role === role && Array.isArray(message.content))
    .flatMap((message) => message.content as Part[]);
}
