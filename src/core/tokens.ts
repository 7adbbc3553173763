/**
 * A token estimate that needs no tokenizer: what compaction policies and listings use when the
 * provider has not reported usage. It is deliberately an over-estimate: counting too few tokens
 * lets a request overflow the context window, counting a few too many only compacts a little
 * early. It is checked (test/core/tokens.test.ts) never to count fewer tokens than the
 * cl100k_base and o200k_base tokenizers on prose in several scripts, JSON, code, base64, hex
 * and emoji.
 *
 * The rules, per run of characters of one class:
 * - ASCII words of letters: one token per 4 letters of each case run (`fold` `Surface`);
 * - ASCII words of digits: one token per 3 digits (tokenizers group digits by at most three);
 * - ASCII words mixing letters and digits, or switching case more than twice (ids, hashes,
 *   base64): one token per character;
 * - other letters (Cyrillic, Greek, accented Latin...): one token per 2 letters;
 * - CJK ideographs, kana and hangul: 1.5 tokens per character;
 * - ASCII punctuation: one token each (next to ids and hashes tokenizers rarely merge it);
 *   any other symbol (emoji...): 3 tokens;
 * - whitespace: a newline is one token; a single space is free (it joins the next word's
 *   token), longer runs of spaces or tabs cost one token per 4.
 */
import type { ContentBlock, Message } from './messages.js';

/** Tokens added per message for the role and framing providers wrap it in. */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** What an image counts, whatever its size (providers charge roughly 500 to 1,600). */
export const IMAGE_TOKENS = 1600;

/** ASCII character classes for the scanner. */
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const BLANK = 4; // a space or a tab
const OTHER = 5; // a newline or punctuation
const ASCII_CLASS = new Uint8Array(128).map((_, code) =>
  code >= 97 && code <= 122
    ? LOWER
    : code >= 65 && code <= 90
      ? UPPER
      : code >= 48 && code <= 57
        ? DIGIT
        : code === 32 || code === 9
          ? BLANK
          : OTHER,
);

/**
 * Estimated tokens of a text (never fewer than a GPT tokenizer counts; see the module notes).
 * One pass over the characters with every run's state in locals: pricing and compaction
 * estimate every entry of a session, so this is on the path of a whole log's characters.
 */
export function estimateTokens(text: string): number {
  let halves = 0; // counted in half tokens so that punctuation and CJK stay integers
  let spaces = 0;
  let otherLetters = 0;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    const kind = code < 128 ? ASCII_CLASS[code] : 0;
    if (kind === BLANK) {
      if (otherLetters > 0) {
        halves += 2 * Math.ceil(otherLetters / 2);
        otherLetters = 0;
      }
      spaces++;
      i++;
      continue;
    }
    if (kind === 0 && isLetterLike(code)) {
      if (spaces > 0) {
        // A single space rides on the next word's token; longer runs (indentation) cost their own.
        if (spaces > 1) halves += 2 * Math.ceil((spaces - 1) / 4);
        spaces = 0;
      }
      otherLetters++;
      i++;
      continue;
    }
    if (spaces > 1) halves += 2 * Math.ceil((spaces - 1) / 4);
    if (otherLetters > 0) halves += 2 * Math.ceil(otherLetters / 2);
    spaces = 0;
    otherLetters = 0;
    if (kind === LOWER || kind === UPPER || kind === DIGIT) {
      // One ASCII word (`[A-Za-z0-9]+`). Words that mix letters and digits, or switch case more
      // than twice, are identifiers, hashes or base64: tokenizers split those into pieces of one
      // or two characters, so they count one token per character, the most an ASCII text can
      // cost. Other words count one token per 4 letters of each case run (`fold` `Surface`),
      // digits one per 3 (tokenizers group digits by at most three).
      const start = i;
      let digits = 0;
      let transitions = 0;
      let previous = 0; // the class of the previous letter; 0 after a digit
      let runTokens = 0;
      let run = 0;
      for (; i < length; i++) {
        const next = text.charCodeAt(i);
        // Lower-case letters are most of most words: counted without the class table.
        if (next >= 97 && next <= 122 && previous === LOWER) {
          run++;
          continue;
        }
        const letter = next < 128 ? ASCII_CLASS[next] : 0;
        if (letter === LOWER) {
          if (previous === UPPER) transitions++;
        } else if (letter === UPPER) {
          if (previous === LOWER) {
            transitions++;
            runTokens += Math.ceil(run / 4);
            run = 0;
          }
        } else if (letter === DIGIT) digits++;
        else break;
        previous = letter === DIGIT ? 0 : letter;
        run++;
      }
      const word = i - start;
      halves +=
        2 *
        (digits === word
          ? Math.ceil(word / 3)
          : digits > 0 || transitions > 2
            ? word
            : runTokens + Math.ceil(run / 4));
      continue;
    }
    if (kind === OTHER)
      halves += 2; // a newline or ASCII punctuation
    else if (isCjk(code)) halves += 3;
    else if (code >= 0xd800 && code <= 0xdbff) {
      halves += 6; // astral symbols: emoji and the like
      i++;
    } else halves += 6;
    i++;
  }
  if (spaces > 1) halves += 2 * Math.ceil((spaces - 1) / 4);
  if (otherLetters > 0) halves += 2 * Math.ceil(otherLetters / 2);
  return Math.ceil(halves / 2);
}

/** Estimated tokens of one message as a provider receives it. */
export function estimateMessageTokens(message: Message): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  for (const block of message.content) tokens += blockTokens(block);
  return tokens;
}

/** Estimated tokens of a list of messages. */
export function estimateMessagesTokens(messages: readonly Message[]): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

function blockTokens(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return estimateTokens(block.text);
    case 'image':
      return IMAGE_TOKENS;
    case 'tool-call':
      return 4 + estimateTokens(block.name) + estimateTokens(block.arguments);
    case 'tool-result': {
      let tokens = 4;
      for (const item of block.content) tokens += blockTokens(item);
      return tokens;
    }
  }
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x3040 && code <= 0x30ff) || // hiragana, katakana
    (code >= 0x3400 && code <= 0x4dbf) || // CJK extension A
    (code >= 0x4e00 && code <= 0x9fff) || // CJK unified ideographs
    (code >= 0xac00 && code <= 0xd7af) || // hangul syllables
    (code >= 0x1100 && code <= 0x11ff) || // hangul jamo
    (code >= 0xf900 && code <= 0xfaff) || // CJK compatibility ideographs
    (code >= 0x3000 && code <= 0x303f) || // CJK punctuation
    (code >= 0xff00 && code <= 0xffef) // full-width forms
  );
}

/** Letters of alphabetic scripts outside ASCII (Latin-1 to Cyrillic, Greek, Hebrew, Arabic...). */
function isLetterLike(code: number): boolean {
  return (
    (code >= 0xc0 && code <= 0x24f) ||
    (code >= 0x370 && code <= 0x6ff) ||
    (code >= 0x900 && code <= 0xdff)
  );
}
