/**
 * Which messages of a prompt are new to the session. The SDK sends its whole history on every
 * call; the session already holds most of it, possibly rewritten (a compaction replaced part of
 * the surface, so the SDK's copy is longer than the surface). The new messages are those after
 * the prompt's derived-message prefix, or else after the last message the log recorded.
 */
import type { ImageBlock, Message, MessageList, Session } from '../../core/index.js';
import { buildPrompt } from '../../model/index.js';
import { AiSdkError, PROMPT_FIX } from './errors.js';
import { convertMessage, type FromModelMessagesOptions, type PromptMessage } from './from-model.js';
import { equalsPlainCopy, NO_COPY, plainCopy } from './plain-data.js';

/**
 * The same request on the wire: the messages convert to the same provider prompt. Images
 * compare by position only: the SDK downloads an image URL a model cannot take and sends the
 * bytes, which is the same image.
 */
function sameOnWire(a: readonly Message[], b: Messages): boolean {
  if (a.length !== b.length) return false;
  for (let i = a.length - 1; i >= 0; i--) {
    if (wireText(a[i] as Message) !== wireText(b.at(i) as Message)) return false;
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

/** The session's derived messages, as a frozen array or as a list read without a copy. */
type Messages = readonly Message[] | MessageList;

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

/** A prompt read against a session: what it adds, and whether a surface is it on the wire. */
export interface PromptReading {
  /** The messages of the prompt the session does not hold yet. */
  readonly added: readonly Message[];
  /**
   * Whether `surface` converts to the same provider prompt as the whole prompt. When it does,
   * the prompt's new messages are remembered as read, with the surface's messages they match.
   */
  sameOnWire(surface: Messages): boolean;
}

/**
 * Reads the history of a call's prompt (its messages but the system prompt) against the
 * session. The new messages are those after the prompt's derived-message prefix, or else after
 * the last message the log recorded.
 *
 * A prompt message read once as a derived message is not converted again while it stays the
 * same plain data (see {@link Witness}), so a step converts and compares what is new to it,
 * not its whole history.
 *
 * @throws AiSdkError `UNSUPPORTED_CONTENT` for a message palimpsest cannot hold;
 *   `PROMPT_DIVERGED` when the prompt neither extends the surface nor holds a message the log
 *   recorded, while the session has history.
 */
export function readPrompt(
  session: Session,
  history: readonly PromptMessage[],
  options: FromModelMessagesOptions,
  offset: number,
): PromptReading {
  const derived = session.deriveMessageList();
  const conversions: (readonly Message[] | undefined)[] = [];
  const convert = (at: number): readonly Message[] => {
    let messages = conversions[at];
    if (messages === undefined) {
      messages = convertMessage(history[at] as PromptMessage, options, at + offset);
      conversions[at] = messages;
    }
    return messages;
  };
  const found = extension(derived, history, convert);
  if (found !== undefined) {
    const { tail } = found;
    // Copies now, as converted: a hook may change the prompt before the surface is compared.
    const copies = history.slice(found.whole).map(plainCopy);
    return {
      added: tail,
      sameOnWire: (surface) => {
        if (!extendsOnWire(surface, derived, tail)) return false;
        // The prompt's new messages are on the surface now: the next step reads them as held.
        let position = derived.length + found.wholeStart;
        for (const [index, copy] of copies.entries()) {
          const count = convert(found.whole + index).length;
          if (count > 0 && copy !== NO_COPY) {
            const matched = surface.slice(position, position + count);
            witnesses.set(matched[0] as Message, { copy, matched });
          }
          position += count;
        }
        return true;
      },
    };
  }
  const prompt = history.flatMap((_, at) => convert(at));
  return {
    added: afterHeld(session, prompt, derived.length),
    sameOnWire: (surface) => sameOnWire(prompt, surface),
  };
}

/**
 * What a prompt message converted to once: a copy of the message as it was then, and the
 * derived messages its conversion matched on the wire, one by one, starting with the key it is
 * kept under. A later prompt message equal to the copy converts to the same messages (the
 * conversion reads nothing but the message, and ids are not sent), so it matches them too.
 */
interface Witness {
  readonly copy: unknown;
  readonly matched: readonly Message[];
}

const witnesses = new WeakMap<Message, Witness>();

/** A prompt that begins, on the wire, with the derived messages. */
interface Extension {
  /** Its messages after the derived ones. */
  readonly tail: readonly Message[];
  /** The first prompt message whose messages are all in the tail, and where they begin in it. */
  readonly whole: number;
  readonly wholeStart: number;
}

/**
 * The prompt as the derived messages and what follows them, when its conversion begins with
 * them on the wire; `undefined` when it does not.
 */
function extension(
  derived: Messages,
  history: readonly PromptMessage[],
  convert: (at: number) => readonly Message[],
): Extension | undefined {
  const rest = (from: number) => history.slice(from).flatMap((_, index) => convert(from + index));
  let held = 0;
  for (let at = 0; at < history.length; at++) {
    if (held === derived.length) return { tail: rest(at), whole: at, wholeStart: 0 };
    const first = derived.at(held) as Message;
    const witness = witnesses.get(first);
    if (witness !== undefined && witnessHolds(witness, derived, held, history[at])) {
      held += witness.matched.length;
      continue;
    }
    const messages = convert(at);
    const overlap = Math.min(messages.length, derived.length - held);
    for (let index = 0; index < overlap; index++) {
      if (wireText(messages[index] as Message) !== wireText(derived.at(held + index) as Message)) {
        return undefined;
      }
    }
    if (overlap < messages.length) {
      // The new messages begin inside this one (a tool message whose first results the
      // session holds).
      const remainder = messages.slice(overlap);
      return { tail: [...remainder, ...rest(at + 1)], whole: at + 1, wholeStart: remainder.length };
    }
    const copy = plainCopy(history[at]);
    if (messages.length > 0 && copy !== NO_COPY) {
      witnesses.set(first, { copy, matched: derived.slice(held, held + messages.length) });
    }
    held += messages.length;
  }
  return held === derived.length ? { tail: [], whole: history.length, wholeStart: 0 } : undefined;
}

/** Whether `message` at derived position `held` is what `witness` saw, before the same messages. */
function witnessHolds(
  witness: Witness,
  derived: Messages,
  held: number,
  message: PromptMessage | undefined,
): boolean {
  const { matched } = witness;
  for (let index = 0; index < matched.length; index++) {
    if (derived.at(held + index) !== matched[index]) return false;
  }
  return equalsPlainCopy(message, witness.copy);
}

/**
 * Whether `surface` is, on the wire, `derived` followed by `tail`: the same question as
 * {@link sameOnWire} over the prompt they were read from, whose messages match `derived` on the
 * wire one by one and then are `tail`.
 */
function extendsOnWire(surface: Messages, derived: Messages, tail: readonly Message[]): boolean {
  if (surface.length !== derived.length + tail.length) return false;
  for (let i = tail.length - 1; i >= 0; i--) {
    if (wireText(surface.at(derived.length + i) as Message) !== wireText(tail[i] as Message)) {
      return false;
    }
  }
  for (let i = derived.length - 1; i >= 0; i--) {
    const message = surface.at(i) as Message;
    const held = derived.at(i) as Message;
    if (message !== held && wireText(message) !== wireText(held)) {
      return false;
    }
  }
  return true;
}

/** The messages of `prompt` after the last one the log holds. */
function afterHeld(session: Session, prompt: readonly Message[], derivedCount: number): Message[] {
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
    `expected the prompt to begin with the session's ${derivedCount} derived messages or to hold a message the log recorded, found ${prompt.length} messages that do neither; ${PROMPT_FIX}`,
  );
}
