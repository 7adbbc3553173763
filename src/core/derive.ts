/**
 * The projection from events to messages: the one rule every derivation path folds.
 */
import type { SessionEvent } from './events.js';
import type { Message } from './messages.js';

/**
 * The message an event contributes when it is on the surface, or `null`:
 * `user/message` and `context/message` contribute their data (the message itself),
 * `assistant/message` its message unless the content is empty, `tool/result` its message,
 * every other type nothing. The returned message is the event's own frozen object.
 */
export function deriveEventMessage(event: SessionEvent): Message | null {
  switch (event.type) {
    case 'user/message':
    case 'context/message':
      return event.data;
    case 'assistant/message': {
      const message = event.data.message;
      return message.content.length === 0 ? null : message;
    }
    case 'tool/result':
      return event.data.message;
    default:
      return null;
  }
}
