/**
 * The label of a surface entry in a cost ledger: who wrote it and the start of its text on one
 * line (`tool read_file: contents of …`). A ledger labels every entry it charged, tens of
 * thousands in a long session, so the common text (words with single spaces) is cut without
 * a regular expression; any other whitespace goes through the plain rule.
 */
import {
  deriveEventMessage,
  isEventOfType,
  type Message,
  type Session,
  type SessionEvent,
} from '../core/index.js';

/** How many characters of an entry's text a label shows before it is cut with `…`. */
const EXCERPT = 60;

/** Who wrote an entry and the start of its text, on one line. */
export function entryLabel(session: Session, event: SessionEvent): string {
  const message = deriveEventMessage(event);
  const excerpt =
    message === null ? '' : (plainExcerpt(message) ?? excerptOf(leadingText(message)));
  let who: string = event.type;
  if (event.type === 'tool/result') {
    const name = toolNameOf(session, event.sourceEventSeqs ?? [], 0);
    who = name === undefined ? 'tool' : `tool ${name}`;
  } else if (message?.role === 'assistant') who = 'assistant';
  else if (message?.role === 'user') who = event.type === 'context/message' ? 'context' : 'user';
  return excerpt === '' ? who : `${who}: ${excerpt}`;
}

/** `text` with its whitespace runs made one space, trimmed, and cut at {@link EXCERPT} characters. */
export function excerptOf(text: string): string {
  const line = singleSpaced(text) ? trimSpace(text) : text.replace(/\s+/g, ' ').trim();
  return line.length > EXCERPT ? `${line.slice(0, EXCERPT - 1)}…` : line;
}

/**
 * The excerpt of a message whose text starts with a plain line (no whitespace but lone spaces in
 * its first {@link EXCERPT} + 2 characters), cut from that text directly; `undefined` for any
 * other message. Folding whitespace leaves such a start as it is, and the characters after it
 * cannot change the first {@link EXCERPT} of the label's line.
 */
function plainExcerpt(message: Message): string | undefined {
  const first = message.content[0];
  const inner = first?.type === 'tool-result' ? first.content[0] : first;
  if (inner?.type !== 'text') return undefined;
  const text = inner.text;
  // The label's text begins with this one's first 200 characters, so its first 63 are these.
  const start = text.charCodeAt(0) === 32 ? 1 : 0;
  const end = start + EXCERPT + 2;
  if (text.length < end || isWhitespace(text.charCodeAt(start))) return undefined;
  for (let i = start + 1; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 32 ? text.charCodeAt(i - 1) === 32 : isWhitespace(code)) return undefined;
  }
  return `${text.slice(start, start + EXCERPT - 1)}…`;
}

/** Whether every whitespace character of `text` is a lone space: folding runs would change nothing. */
function singleSpaced(text: string): boolean {
  let previousSpace = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 32) {
      if (previousSpace) return false;
      previousSpace = true;
    } else if (isWhitespace(code)) return false;
    else previousSpace = false;
  }
  return true;
}

/** A single-spaced text without its leading and trailing space. */
function trimSpace(text: string): string {
  const start = text.charCodeAt(0) === 32 ? 1 : 0;
  const end =
    text.length > start && text.charCodeAt(text.length - 1) === 32 ? text.length - 1 : text.length;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** What `\s` matches (and `trim` removes): ECMAScript's white space and line terminators. */
function isWhitespace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * The tool a result answered: the `tool/call` it cites, found through the results a pruned or
 * replaced result cites in turn.
 */
function toolNameOf(session: Session, cited: readonly number[], depth: number): string | undefined {
  if (depth > 8) return undefined;
  for (const seq of cited) {
    const event = session.event(seq);
    if (event === undefined) continue;
    if (isEventOfType(event, 'tool/call')) return event.data.name;
    if (event.type === 'tool/result') {
      const name = toolNameOf(session, event.sourceEventSeqs ?? [], depth + 1);
      if (name !== undefined) return name;
    }
  }
  return undefined;
}

/** The first couple of hundred characters of a message's text: a label needs no more. */
function leadingText(message: Message): string {
  let text = '';
  const take = (part: string) => {
    text += (text === '' ? '' : ' ') + part.slice(0, 200 - text.length);
  };
  for (const block of message.content) {
    if (text.length >= 200) break;
    if (block.type === 'text') take(block.text);
    else if (block.type === 'tool-call') take(`→ ${block.name}`);
    else if (block.type === 'tool-result') {
      for (const inner of block.content)
        if (inner.type === 'text' && text.length < 200) take(inner.text);
    }
  }
  return text;
}
