/**
 * Which messages of a prompt are new to the session. The SDK sends its whole history on every
 * call; the session already holds most of it, possibly rewritten (a compaction replaced part of
 * the surface, so the SDK's copy is longer than the surface). The new messages are those after
 * the prompt's derived-message prefix, or else after the last message the log recorded.
 */
import type { ImageBlock, Message, Session } from '../../core/index.js';
import { buildPrompt } from '../../model/index.js';
import { AiSdkError, PROMPT_FIX } from './errors.js';

/**
 * The same request on the wire: the messages convert to the same provider prompt. Images
 * compare by position only: the SDK downloads an image URL a model cannot take and sends the
 * bytes, which is the same image.
 */
export function sameOnWire(a: readonly Message[], b: readonly Message[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = a.length - 1; i >= 0; i--) {
    if (wireText(a[i] as Message) !== wireText(b[i] as Message)) return false;
  }
  return true;
}

/**
 * The wire form of one message, computed once per message object: the session's derived
 * messages are the same objects from call to call, and a prompt is compared more than once per
 * call, so each step converts only what is new instead of the whole history again.
 */
const wireTexts = new WeakMap<Message, string>();

function wireText(message: Message): string {
  let text = wireTexts.get(message);
  if (text === undefined) {
    text = JSON.stringify(buildPrompt(undefined, [withoutImages(message)]));
    wireTexts.set(message, text);
  }
  return text;
}

const IMAGE: ImageBlock = { type: 'image', mediaType: 'image/*', data: '' };

function withoutImages(message: Message): Message {
  switch (message.role) {
    case 'user':
      return {
        ...message,
        content: message.content.map((block) => (block.type === 'image' ? IMAGE : block)),
      };
    case 'assistant':
      return {
        ...message,
        content: message.content.map((block) => (block.type === 'image' ? IMAGE : block)),
      };
    case 'tool': {
      const [result] = message.content;
      const content = result.content.map((block) => (block.type === 'image' ? IMAGE : block));
      return { ...message, content: [{ ...result, content }] };
    }
  }
}

/** What the log recorded, indexed once and extended as the log grows. */
class LogIndex {
  private scanned = 0;
  private readonly ids = new Set<string>();
  private readonly answered = new Set<string>();
  private readonly answers = new Set<string>();

  constructor(private readonly session: Session) {}

  /** Whether the log holds `message`: its id, its wire form (model output), or its call's result. */
  holds(message: Message): boolean {
    this.catchUp();
    if (this.ids.has(message.id)) return true;
    if (message.role === 'assistant') return this.answers.has(wireText(message));
    if (message.role === 'tool') return this.answered.has(message.content[0].toolCallId);
    return false;
  }

  private catchUp(): void {
    for (; this.scanned < this.session.seq; this.scanned++) {
      const event = this.session.event(this.scanned);
      if (event === undefined || event.surfaceOp === undefined) continue;
      switch (event.type) {
        case 'user/message':
        case 'context/message':
          this.ids.add(event.data.id);
          break;
        case 'assistant/message':
          this.ids.add(event.data.message.id);
          this.answers.add(wireText(event.data.message));
          break;
        case 'tool/result':
          this.ids.add(event.data.message.id);
          this.answered.add(event.data.message.content[0].toolCallId);
          break;
      }
    }
  }
}

const indexes = new WeakMap<Session, LogIndex>();

/**
 * The messages of `prompt` the session does not hold yet.
 *
 * @throws AiSdkError `PROMPT_DIVERGED` when the prompt neither extends the surface nor holds a
 *   message the log recorded, while the session has history.
 */
export function newMessages(session: Session, prompt: readonly Message[]): readonly Message[] {
  const derived = session.deriveMessages();
  if (prompt.length >= derived.length && sameOnWire(prompt.slice(0, derived.length), derived)) {
    return prompt.slice(derived.length);
  }
  let index = indexes.get(session);
  if (index === undefined) {
    index = new LogIndex(session);
    indexes.set(session, index);
  }
  for (let at = prompt.length - 1; at >= 0; at--) {
    if (index.holds(prompt[at] as Message)) return prompt.slice(at + 1);
  }
  throw new AiSdkError(
    'PROMPT_DIVERGED',
    `expected the prompt to begin with the session's ${derived.length} derived messages or to hold a message the log recorded, found ${prompt.length} messages that do neither; ${PROMPT_FIX}`,
  );
}
