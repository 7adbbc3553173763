/**
 * A query matched against one document in memory: the memory store's search, and any store that
 * keeps no index (an `EncryptedStore`, whose clear text is never written to an index). Scores
 * follow BM25's shape (term frequency saturating, long documents discounted) without corpus
 * statistics, so ranks are close to, not equal to, an index's.
 */
import { MATCH_CLOSE, MATCH_OPEN } from './hits.js';
import type { SearchQuery, SearchTerm } from './query.js';
import { ASCII_TEXT, foldWord, WORD_PATTERN } from './query.js';

/** A document that matched: its score and snippet. */
export interface ScanMatch {
  readonly score: number;
  readonly snippet: string;
}

const SNIPPET_WORDS = 16;
const K1 = 1.2;
const B = 0.75;
const AVERAGE_WORDS = 60;

/**
 * The words of a text as the scan reads them: where each stands, and whether it is a given
 * folded word, as `wordsAt` cuts and folds them. An ASCII text (most are) is cut by a loop over
 * its characters, and an ASCII word is compared ignoring case, so no string or object is made
 * per word; only a word that is not ASCII is folded.
 */
interface TextWords {
  readonly count: number;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  is(index: number, folded: string): boolean;
}

const WORD = new RegExp(WORD_PATTERN, 'gu');

/** Whether a character code is an ASCII letter or digit. */
function isAsciiWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
}

function textWords(text: string): TextWords {
  const starts: number[] = [];
  const ends: number[] = [];
  // The folded form of each word that is not ASCII, by word index; an ASCII word is compared
  // with the query's word ignoring case, in place.
  const folded = new Map<number, string>();
  if (ASCII_TEXT.test(text)) {
    let at = 0;
    while (at < text.length) {
      if (!isAsciiWordCode(text.charCodeAt(at))) {
        at++;
        continue;
      }
      starts.push(at);
      while (at < text.length && isAsciiWordCode(text.charCodeAt(at))) at++;
      ends.push(at);
    }
  } else {
    WORD.lastIndex = 0;
    for (let match = WORD.exec(text); match !== null; match = WORD.exec(text)) {
      const word = match[0];
      if (!ASCII_TEXT.test(word)) {
        const form = foldWord(word);
        if (form === '') continue;
        folded.set(starts.length, form);
      }
      starts.push(match.index);
      ends.push(match.index + word.length);
    }
  }
  const is = (index: number, word: string): boolean => {
    const form = folded.get(index);
    if (form !== undefined) return form === word;
    const start = starts[index] as number;
    if ((ends[index] as number) - start !== word.length) return false;
    for (let offset = 0; offset < word.length; offset++) {
      const code = text.charCodeAt(start + offset);
      // Lowercase an ASCII capital; the folded word is lowercase already.
      if ((code >= 65 && code <= 90 ? code + 32 : code) !== word.charCodeAt(offset)) return false;
    }
    return true;
  };
  return { count: starts.length, starts, ends, is };
}

/** Where each occurrence of a term starts, as word indexes. */
function occurrences(words: TextWords, term: SearchTerm): number[] {
  const found: number[] = [];
  const last = words.count - term.words.length;
  next: for (let at = 0; at <= last; at++) {
    for (let offset = 0; offset < term.words.length; offset++) {
      if (!words.is(at + offset, term.words[offset] as string)) continue next;
    }
    found.push(at);
  }
  return found;
}

/** Matches a query against a text: every term must occur. */
export function scanMatch(query: SearchQuery, text: string): ScanMatch | undefined {
  const words = textWords(text);
  // Each occurrence is one marked span (a phrase is marked whole, as FTS5 marks it).
  const matched = new Map<number, number>();
  let score = 0;
  const norm = 1 - B + (B * words.count) / AVERAGE_WORDS;
  for (const term of query.terms) {
    const found = occurrences(words, term);
    if (found.length === 0) return undefined;
    for (const at of found) {
      matched.set(at, Math.max(matched.get(at) ?? 0, at + term.words.length));
    }
    score += (found.length * (K1 + 1)) / (found.length + K1 * norm);
  }
  return { score, snippet: snippetOf(text, words, matched) };
}

/**
 * Where the first window of {@link SNIPPET_WORDS} words holding the most matches starts. A
 * window's count only rises when it reaches a match, so the first best window starts at 0 or
 * {@link SNIPPET_WORDS} − 1 words before a match: only those starts are counted.
 */
function bestWindow(starts: readonly number[], wordCount: number): number {
  const last = Math.max(0, wordCount - SNIPPET_WORDS);
  let best = 0;
  let bestCount = -1;
  let inside = 0;
  let leaving = 0;
  for (const candidate of [0, ...starts.map((at) => at - SNIPPET_WORDS + 1)]) {
    const start = Math.min(last, Math.max(0, candidate));
    if (start < best || (start === best && bestCount >= 0)) continue;
    while (inside < starts.length && (starts[inside] as number) < start + SNIPPET_WORDS) inside++;
    while (leaving < starts.length && (starts[leaving] as number) < start) leaving++;
    if (inside - leaving > bestCount) {
      best = start;
      bestCount = inside - leaving;
    }
  }
  return best;
}

/** The window of {@link SNIPPET_WORDS} words holding the most matched words, marked. */
function snippetOf(text: string, words: TextWords, matched: ReadonlyMap<number, number>): string {
  const best = bestWindow(
    [...matched.keys()].sort((a, b) => a - b),
    words.count,
  );
  const end = Math.min(words.count, best + SNIPPET_WORDS);
  let out = best > 0 ? '…' : '';
  let cursor = words.starts[best] ?? 0;
  let spanEnd = -1;
  for (let i = best; i < end; i++) {
    const start = words.starts[i] as number;
    out += text.slice(cursor, start);
    const opens = spanEnd <= i && matched.has(i);
    if (opens) spanEnd = matched.get(i) as number;
    cursor = words.ends[i] as number;
    out += `${opens ? MATCH_OPEN : ''}${text.slice(start, cursor)}`;
    if (i === spanEnd - 1 || (i === end - 1 && spanEnd > i)) out += MATCH_CLOSE;
  }
  out += end < words.count ? '…' : text.slice(cursor);
  return out.replace(/\s+/g, ' ').trim();
}
