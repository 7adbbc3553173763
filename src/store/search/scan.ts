/**
 * A query matched against one document in memory: the memory store's search, and any store that
 * keeps no index (an `EncryptedStore`, whose clear text is never written to an index). Scores
 * follow BM25's shape (term frequency saturating, long documents discounted) without corpus
 * statistics, so ranks are close to, not equal to, an index's.
 */
import { MATCH_CLOSE, MATCH_OPEN } from './hits.js';
import type { SearchQuery, SearchTerm, WordAt } from './query.js';
import { wordsAt } from './query.js';

/** A document that matched: its score and snippet. */
export interface ScanMatch {
  readonly score: number;
  readonly snippet: string;
}

const SNIPPET_WORDS = 16;
const K1 = 1.2;
const B = 0.75;
const AVERAGE_WORDS = 60;

/** Where each occurrence of a term starts, as word indexes. */
function occurrences(words: readonly WordAt[], term: SearchTerm): number[] {
  const found: number[] = [];
  const [first, ...rest] = term.words;
  const last = words.length - term.words.length;
  next: for (let at = 0; at <= last; at++) {
    if ((words[at] as WordAt).word !== first) continue;
    for (let offset = 0; offset < rest.length; offset++) {
      if ((words[at + 1 + offset] as WordAt).word !== rest[offset]) continue next;
    }
    found.push(at);
  }
  return found;
}

/** Matches a query against a text: every term must occur. */
export function scanMatch(query: SearchQuery, text: string): ScanMatch | undefined {
  const words = wordsAt(text);
  // Each occurrence is one marked span (a phrase is marked whole, as FTS5 marks it).
  const matched = new Map<number, number>();
  let score = 0;
  const norm = 1 - B + (B * words.length) / AVERAGE_WORDS;
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
function snippetOf(
  text: string,
  words: readonly WordAt[],
  matched: ReadonlyMap<number, number>,
): string {
  const best = bestWindow(
    [...matched.keys()].sort((a, b) => a - b),
    words.length,
  );
  const end = Math.min(words.length, best + SNIPPET_WORDS);
  let out = best > 0 ? '…' : '';
  let cursor = words[best]?.start ?? 0;
  let spanEnd = -1;
  for (let i = best; i < end; i++) {
    const word = words[i] as WordAt;
    out += text.slice(cursor, word.start);
    const opens = spanEnd <= i && matched.has(i);
    if (opens) spanEnd = matched.get(i) as number;
    out += `${opens ? MATCH_OPEN : ''}${text.slice(word.start, word.end)}`;
    if (i === spanEnd - 1 || (i === end - 1 && spanEnd > i)) out += MATCH_CLOSE;
    cursor = word.end;
  }
  out += end < words.length ? '…' : text.slice(cursor);
  return out.replace(/\s+/g, ' ').trim();
}
