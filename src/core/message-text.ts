/**
 * A message as plain text, for people and for models reading history (the recall tool, the
 * CLI): text as is, reasoning marked, tool calls and results as arrows.
 */
import type { ContentBlock, Message } from './messages.js';

/** Options of {@link messageAsText}. */
export interface MessageTextOptions {
  /** Show tool call ids (a model correlating calls and results needs them; a reader rarely). */
  readonly callIds?: boolean;
}

/** The text of a message, one block after another. */
export function messageAsText(message: Message, options: MessageTextOptions = {}): string {
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
