/**
 * A message as plain text, two ways. {@link messageText} is what it says: the words of its text
 * blocks, nothing else. {@link formatMessage} writes every block out for a reader (the CLI, the
 * viewer's rows, the model reading history through the recall tool): text as is, reasoning
 * marked, images named, tool calls and results as arrows. Both live in core so the browser
 * viewer uses the same words as the CLI.
 */
import type { ContentBlock, Message } from './messages.js';

/**
 * The words of a message: its text blocks (and the text inside its tool results), joined by
 * newlines. Reasoning, images and tool calls are left out; {@link formatMessage} shows them.
 *
 * @example
 * ```ts
 * import { messageText } from 'palimpsest';
 *
 * const text = messageText({
 *   id: 'a1',
 *   role: 'assistant',
 *   content: [
 *     { type: 'reasoning', text: 'The user greets me.' },
 *     { type: 'text', text: 'Hello!' },
 *   ],
 *   source: { kind: 'model', provider: 'example', model: 'm' },
 * });
 * console.log(text); // 'Hello!'
 * ```
 */
export function messageText(message: Message): string {
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'tool-result') {
      for (const inner of block.content) if (inner.type === 'text') parts.push(inner.text);
    }
  }
  return parts.join('\n');
}

/** Options of {@link formatMessage}. */
export interface FormatMessageOptions {
  /** Show tool call ids (a model correlating calls and results needs them; a reader rarely). */
  readonly callIds?: boolean;
}

/**
 * A message written out for reading, one block after another: text as is, `(reasoning) …`,
 * `[image …]`, `→ name(arguments)` for a tool call and `← …` for a result.
 *
 * @example
 * ```ts
 * import { formatMessage } from 'palimpsest';
 *
 * const text = formatMessage({
 *   id: 'a1',
 *   role: 'assistant',
 *   content: [
 *     { type: 'text', text: 'Let me look.' },
 *     { type: 'tool-call', id: 'c1', name: 'read', arguments: '{"path":"a.txt"}' },
 *   ],
 *   source: { kind: 'model', provider: 'example', model: 'm' },
 * });
 * const [said, called] = text.split('\n');
 * console.log(said); // 'Let me look.'
 * console.log(called); // '→ read({"path":"a.txt"})'
 * ```
 */
export function formatMessage(message: Message, options: FormatMessageOptions = {}): string {
  return message.content.map((block) => blockText(block, options.callIds === true)).join('\n');
}

function blockText(block: ContentBlock, callIds: boolean): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'reasoning':
      return block.text === '' ? '(reasoning, redacted)' : `(reasoning) ${block.text}`;
    case 'image':
      return `[image ${block.mediaType}]`;
    case 'tool-call':
      return `→ ${block.name}(${block.arguments})${callIds ? ` [call ${block.id}]` : ''}`;
    case 'tool-result': {
      const tags = [
        callIds ? `call ${block.toolCallId}` : '',
        block.isError === true ? 'error' : '',
      ]
        .filter((tag) => tag !== '')
        .join(', ');
      const body = block.content.map((item) => blockText(item, callIds)).join('\n');
      return `← ${tags === '' ? '' : `(${tags}) `}${body}`;
    }
  }
}
