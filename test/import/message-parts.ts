/**
 * A message's blocks as comparable strings (`text:…`, `thinking:…`, `call:id:name:args`,
 * `result:id:text`), for tests that compare what a harness reads back with what the session
 * derives, whatever each side's message shapes.
 */
import type { Message } from '../../src/core/index.js';

/** Each block of `message`, in order; call arguments as normalized JSON. */
export function blockParts(message: Message): string[] {
  return message.content.flatMap((block): string[] => {
    switch (block.type) {
      case 'text':
        return [`text:${block.text}`];
      case 'reasoning':
        return [`thinking:${block.text}`];
      case 'tool-call':
        return [`call:${block.id}:${block.name}:${JSON.stringify(JSON.parse(block.arguments))}`];
      case 'tool-result':
        return block.content.map(
          (part) => `result:${block.toolCallId}:${part.type === 'text' ? part.text : part.type}`,
        );
      default:
        return [block.type];
    }
  });
}
