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

/** Estimated tokens of a text (never fewer than a GPT tokenizer counts; see the module notes). */
export function estimateTokens(text: string): number {
  let halves = 0; // counted in half tokens so that punctuation and CJK stay integers
  let spaces = 0;
  let otherLetters = 0;
  const closeRuns = (): void => {
    // A single space rides on the next word's token; longer runs (indentation) cost their own.
    halves += 2 * Math.ceil(Math.max(0, spaces - 1) / 4) + 2 * Math.ceil(otherLetters / 2);
    spaces = 0;
    otherLetters = 0;
  };
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (isAsciiAlnum(code)) {
      closeRuns();
      const end = wordEnd(text, i);
      halves += 2 * wordTokens(text, i, end);
      i = end;
      continue;
    }
    if (code === 32 || code === 9) {
      if (otherLetters > 0) closeRuns();
      spaces++;
      i++;
      continue;
    }
    if (code >= 128 && isLetterLike(code)) {
      if (spaces > 0) closeRuns();
      otherLetters++;
      i++;
      continue;
    }
    closeRuns();
    if (code === 10 || code === 13) halves += 2;
    else if (code < 128) halves += 2;
    else if (isCjk(code)) halves += 3;
    else if (code >= 0xd800 && code <= 0xdbff) {
      halves += 6; // astral symbols: emoji and the like
      i++;
    } else halves += 6;
    i++;
  }
  closeRuns();
  return Math.ceil(halves / 2);
}

/**
 * Tokens of one ASCII word (`[A-Za-z0-9]+`). Words that mix letters and digits, or switch case
 * more than twice, are identifiers, hashes or base64: tokenizers split those into pieces of one
 * or two characters, so they count one token per character, the most an ASCII text can cost
 * (every token holds at least one byte).
 */
function wordTokens(text: string, start: number, end: number): number {
  let digits = 0;
  let transitions = 0;
  let previousUpper: boolean | undefined;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code <= 57) {
      digits++;
      previousUpper = undefined;
      continue;
    }
    const upper = code <= 90;
    if (previousUpper !== undefined && upper !== previousUpper) transitions++;
    previousUpper = upper;
  }
  const length = end - start;
  if (digits === length) return Math.ceil(length / 3);
  if (digits > 0 || transitions > 2) return length;
  // camelCase and Capitalized words: one token per 4 letters of each case run.
  let tokens = 0;
  let run = 0;
  for (let i = start; i < end; i++) {
    if (run > 0 && text.charCodeAt(i) <= 90 && text.charCodeAt(i - 1) > 90) {
      tokens += Math.ceil(run / 4);
      run = 0;
    }
    run++;
  }
  return tokens + Math.ceil(run / 4);
}

function wordEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && isAsciiAlnum(text.charCodeAt(end))) end++;
  return end;
}

function isAsciiAlnum(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
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
