/**
 * Message content in the shapes the GenAI conventions give `gen_ai.input.messages`,
 * `gen_ai.output.messages` and `gen_ai.system_instructions`: JSON text of messages made of
 * parts. Only called when the export was asked for content.
 */
import type {
  ContentBlock,
  FinishReason,
  Message,
  ToolResultContentBlock,
} from '../../core/index.js';

type Part = Readonly<Record<string, string | undefined>>;

/** The semconv finish reason of an AI SDK one (`tool-calls` is `tool_call` there). */
export function semconvFinishReason(reason: FinishReason): string {
  switch (reason) {
    case 'tool-calls':
      return 'tool_call';
    case 'content-filter':
      return 'content_filter';
    default:
      return reason;
  }
}

/** `gen_ai.input.messages`: the messages a call received, in order. */
export function inputMessagesJson(messages: Iterable<Message>): string {
  const out: Array<{ role: string; parts: Part[] }> = [];
  for (const message of messages) out.push({ role: message.role, parts: partsOf(message) });
  return JSON.stringify(out);
}

/** `gen_ai.output.messages`: the one answer of a call. */
export function outputMessagesJson(message: Message, finishReason: FinishReason): string {
  return JSON.stringify([
    {
      role: message.role,
      parts: partsOf(message),
      finish_reason: semconvFinishReason(finishReason),
    },
  ]);
}

/** `gen_ai.system_instructions`: the system prompt as one text part. */
export function systemInstructionsJson(system: string): string {
  return JSON.stringify([{ type: 'text', content: system }]);
}

/** The text of a tool result, as `gen_ai.tool.call.result` holds it. */
export function resultText(content: readonly ToolResultContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('');
}

function partsOf(message: Message): Part[] {
  return (message.content as readonly ContentBlock[]).map(partOf);
}

function partOf(block: ContentBlock): Part {
  switch (block.type) {
    case 'text':
      return { type: 'text', content: block.text };
    case 'reasoning':
      return { type: 'reasoning', content: block.text };
    case 'image':
      // The bytes stay home: a trace backend is no place for base64 images.
      return { type: 'image', media_type: block.mediaType, uri: block.url };
    case 'tool-call':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments };
    case 'tool-result':
      return {
        type: 'tool_call_response',
        id: block.toolCallId,
        response: resultText(block.content),
      };
  }
}

/**
 * The `gen_ai.provider.name` of a provider id as the AI SDK spells it (`openai.responses`,
 * `google.generative-ai`): the part before the first dot, in the conventions' spelling where
 * they have one.
 */
export function providerName(provider: string): string {
  const base = provider.split('.')[0] ?? provider;
  return PROVIDER_NAMES[base] ?? base;
}

const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  google: 'gcp.gemini',
  vertex: 'gcp.vertex_ai',
  'google-vertex': 'gcp.vertex_ai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
};
