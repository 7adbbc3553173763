/**
 * Palimpsest messages as AI SDK `ModelMessage`s, sent on the wire exactly as palimpsest's own
 * request builder sends them; what the SDK has no field for rides in the `palimpsest` stash.
 */
import type {
  AssistantContent,
  FilePart,
  ImagePart,
  ModelMessage,
  TextPart,
  ToolContent,
  ToolResultPart,
} from 'ai';
import type {
  AssistantContentBlock,
  ImageBlock,
  JsonObject,
  Message,
  Session,
  ToolResultBlock,
} from '../../core/index.js';
import { toolCallInput, toolOutput } from '../../model/index.js';
import { withStash } from './stash.js';

type ToolResultOutput = ToolResultPart['output'];

/**
 * The messages the model sees, as AI SDK `ModelMessage`s: the derived messages of a session's
 * surface (compacted or not), or a list of messages. Pass them to `streamText` or
 * `generateText` to continue the session; the system prompt is the caller's `system`.
 *
 * @example
 * ```ts
 * import { Session } from 'palimpsest';
 * import { toModelMessages } from 'palimpsest/ai-sdk';
 *
 * const session = Session.create({ id: 'to-model-example' });
 * const hello = { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hello' }], source: { kind: 'user' } } as const;
 * session.append('user/message', hello, { surfaceOp: 'append' });
 * const [message] = toModelMessages(session);
 * console.log(message?.role); // 'user'
 * console.log(message?.content); // [{ type: 'text', text: 'Hello' }]
 * ```
 */
export function toModelMessages(source: Session | readonly Message[]): ModelMessage[] {
  const messages = isMessageList(source) ? source : source.deriveMessages();
  const out: ModelMessage[] = [];
  // A result names its tool in the SDK's format; the name lives on the call.
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        out.push({
          role: 'user',
          content: message.content.map((block) =>
            block.type === 'text' ? textPart(block.text, block.providerMetadata) : imagePart(block),
          ),
          ...withStash(undefined, { id: message.id, source: message.source }),
        });
        break;
      case 'assistant':
        for (const block of message.content) {
          if (block.type === 'tool-call') toolNames.set(block.id, block.name);
        }
        out.push({
          role: 'assistant',
          content: message.content.map(assistantPart),
          ...withStash(undefined, { id: message.id, source: message.source }),
        });
        break;
      case 'tool': {
        const part = resultPart(message.id, message.content[0], toolNames);
        const previous = out[out.length - 1];
        // Consecutive results answer one assistant message, as the SDK's own loop sends them.
        if (previous?.role === 'tool') (previous.content as ToolContent).push(part);
        else out.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return out;
}

function assistantPart(block: AssistantContentBlock): Exclude<AssistantContent, string>[number] {
  switch (block.type) {
    case 'text':
      return textPart(block.text, block.providerMetadata);
    case 'reasoning':
      return { type: 'reasoning', text: block.text, ...withStash(block.providerMetadata, {}) };
    case 'image':
      return filePart(block);
    case 'tool-call': {
      const input = toolCallInput(block.arguments);
      // Raw text that is not the input's own JSON (spacing, or not an object) is kept aside.
      const stash = JSON.stringify(input) === block.arguments ? {} : { arguments: block.arguments };
      return {
        type: 'tool-call',
        toolCallId: block.id,
        toolName: block.name,
        input,
        ...withStash(block.providerMetadata, stash),
      };
    }
  }
}

function resultPart(
  id: string,
  block: ToolResultBlock,
  toolNames: ReadonlyMap<string, string>,
): ToolResultPart {
  const output = resultOutput(block);
  const stash: JsonObject = isNatural(block, output)
    ? { id }
    : {
        id,
        content: block.content,
        ...(block.isError === true ? { isError: true } : {}),
      };
  return {
    type: 'tool-result',
    toolCallId: block.toolCallId,
    toolName: toolNames.get(block.toolCallId) ?? 'unknown',
    output,
    ...withStash(block.providerMetadata, stash),
  };
}

/** The output palimpsest's request builder sends for a result: the same on the wire. */
function resultOutput(block: ToolResultBlock): ToolResultOutput {
  // The provider spec's output type and the SDK's are one shape, declared by two packages.
  return toolOutput(block) as ToolResultOutput;
}

/** Whether reading `output` back gives `block` without help from the stash. */
function isNatural(block: ToolResultBlock, output: ToolResultOutput): boolean {
  if (output.type === 'text' || output.type === 'error-text') return block.content.length === 1;
  if (output.type === 'json' || output.type === 'error-json') return true;
  // A content output has no error flag, and an image URL in it no media type.
  return (
    block.isError !== true &&
    block.content.every((item) => item.type === 'text' || item.data !== undefined)
  );
}

function isMessageList(source: Session | readonly Message[]): source is readonly Message[] {
  return Array.isArray(source);
}

function textPart(text: string, metadata: JsonObject | undefined): TextPart {
  return { type: 'text', text, ...withStash(metadata, {}) };
}

function imagePart(block: ImageBlock): ImagePart {
  return { type: 'image', image: block.data ?? block.url ?? '', mediaType: block.mediaType };
}

function filePart(block: ImageBlock): FilePart {
  return { type: 'file', data: block.data ?? block.url ?? '', mediaType: block.mediaType };
}
