/**
 * The messages of a request as the bodies of the two request formats most tools read: OpenAI
 * chat completions and Anthropic messages. What `palimpsest export --format openai|anthropic`,
 * `palimpsest request --wire` and the eval export write.
 */
import type {
  ContentBlock,
  JsonValue,
  Message,
  RequestHeaderData,
  ToolResultBlock,
} from '../core/index.js';
import { toolCallInput } from './prompt-parts.js';

/** The body of an OpenAI chat-completions request. */
export function openaiBody(
  header: RequestHeaderData | undefined,
  messages: readonly Message[],
): JsonValue {
  const out: JsonValue[] = [];
  if (header?.system !== undefined) out.push({ role: 'system', content: header.system });
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.content.map(openaiPart) });
    } else if (message.role === 'assistant') {
      const text = message.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('');
      const calls = message.content.flatMap((block) =>
        block.type === 'tool-call'
          ? [
              {
                id: block.id,
                type: 'function',
                function: { name: block.name, arguments: block.arguments },
              },
            ]
          : [],
      );
      out.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
      });
    } else {
      const result = message.content[0];
      out.push({ role: 'tool', tool_call_id: result.toolCallId, content: resultText(result) });
    }
  }
  return {
    ...(header === undefined ? {} : { model: header.model }),
    messages: out,
    ...(header?.tools === undefined
      ? {}
      : {
          tools: header.tools.map((tool) => ({
            type: 'function',
            function: {
              name: tool.name,
              ...(tool.description === undefined ? {} : { description: tool.description }),
              parameters: tool.parameters,
            },
          })),
        }),
  };
}

function openaiPart(block: ContentBlock): JsonValue {
  if (block.type === 'image') {
    return {
      type: 'image_url',
      image_url: { url: block.url ?? `data:${block.mediaType};base64,${block.data ?? ''}` },
    };
  }
  return { type: 'text', text: block.type === 'text' ? block.text : '' };
}

/** The body of an Anthropic messages request (consecutive tool results merged into one user turn). */
export function anthropicBody(
  header: RequestHeaderData | undefined,
  messages: readonly Message[],
): JsonValue {
  const out: { role: 'user' | 'assistant'; content: JsonValue[] }[] = [];
  const push = (role: 'user' | 'assistant', content: JsonValue[]): void => {
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      push(
        'assistant',
        message.content.flatMap((block): JsonValue[] => {
          switch (block.type) {
            case 'reasoning': {
              // Anthropic accepts thinking only with the signature it issued; reasoning from
              // other providers has none and is left out.
              const signature = (
                block.providerMetadata?.anthropic as { signature?: string } | undefined
              )?.signature;
              return signature === undefined
                ? []
                : [{ type: 'thinking', thinking: block.text, signature }];
            }
            case 'tool-call':
              return [
                {
                  type: 'tool_use',
                  id: block.id,
                  name: block.name,
                  input: toolCallInput(block.arguments),
                },
              ];
            default:
              return [anthropicPart(block)];
          }
        }),
      );
    } else if (message.role === 'tool') {
      const result = message.content[0];
      push('user', [
        {
          type: 'tool_result',
          tool_use_id: result.toolCallId,
          content: resultText(result),
          ...(result.isError === true ? { is_error: true } : {}),
        },
      ]);
    } else {
      push('user', message.content.map(anthropicPart));
    }
  }
  return {
    ...(header === undefined ? {} : { model: header.model }),
    ...(header?.system === undefined ? {} : { system: header.system }),
    messages: out,
    ...(header?.tools === undefined
      ? {}
      : {
          tools: header.tools.map((tool) => ({
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            input_schema: tool.parameters,
          })),
        }),
  };
}

function anthropicPart(block: ContentBlock): JsonValue {
  if (block.type === 'image') {
    return block.url !== undefined
      ? { type: 'image', source: { type: 'url', url: block.url } }
      : {
          type: 'image',
          source: { type: 'base64', media_type: block.mediaType, data: block.data ?? '' },
        };
  }
  return { type: 'text', text: block.type === 'text' ? block.text : '' };
}

function resultText(result: ToolResultBlock): string {
  return result.content
    .map((item) => (item.type === 'text' ? item.text : `[image ${item.mediaType}]`))
    .join('\n');
}
