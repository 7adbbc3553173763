/**
 * The memory scan's match and snippet, which every backend's snippet is cut by: the fast window
 * choice and the ASCII word cut give what the plain reading of their rules gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MATCH_CLOSE, MATCH_OPEN } from '../../../src/store/search/hits.js';
import { foldWord, parseSearchQuery, wordsAt } from '../../../src/store/search/query.js';
import { scanMatch } from '../../../src/store/search/scan.js';

const WINDOW = 16;

/** The snippet as first written: every window counted, the first with the most matches kept. */
function plainSnippet(text: string, query: string): string | undefined {
  const words = wordsAt(text);
  const matched = new Map<number, number>();
  for (const term of parseSearchQuery(query).terms) {
    let any = false;
    for (let at = 0; at + term.words.length <= words.length; at++) {
      if (term.words.every((word, offset) => words[at + offset]?.word === word)) {
        matched.set(at, Math.max(matched.get(at) ?? 0, at + term.words.length));
        any = true;
      }
    }
    if (!any) return undefined;
  }
  let best = 0;
  let bestCount = -1;
  for (let start = 0; start <= Math.max(0, words.length - WINDOW); start++) {
    let count = 0;
    for (let i = start; i < start + WINDOW; i++) if (matched.has(i)) count++;
    if (count > bestCount) [best, bestCount] = [start, count];
  }
  const end = Math.min(words.length, best + WINDOW);
  let out = best > 0 ? '…' : '';
  let cursor = words[best]?.start ?? 0;
  let spanEnd = -1;
  for (let i = best; i < end; i++) {
    const word = words[i];
    if (word === undefined) break;
    out += text.slice(cursor, word.start);
    const opens = spanEnd <= i && matched.has(i);
    if (opens) spanEnd = matched.get(i) ?? i;
    out += `${opens ? MATCH_OPEN : ''}${text.slice(word.start, word.end)}`;
    if (i === spanEnd - 1 || (i === end - 1 && spanEnd > i)) out += MATCH_CLOSE;
    cursor = word.end;
  }
  out += end < words.length ? '…' : text.slice(cursor);
  return out.replace(/\s+/g, ' ').trim();
}

const vocabulary = ['alpha', 'Beta', 'gamma', 'δέλτα', 'ёлка', 'x1'];
const texts = fc
  .array(fc.tuple(fc.constantFrom(...vocabulary), fc.constantFrom(' ', ', ', '\n', '_')), {
    maxLength: 80,
    size: 'max',
  })
  .map((parts) => parts.map(([word, gap]) => word + gap).join(''));
const queries = fc
  .array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 2 })
  .chain((words) => fc.constantFrom(words.join(' '), `"${words.join(' ')}"`));

describe('scanMatch', () => {
  it('marks the same snippet as counting every window would', () => {
    fc.assert(
      fc.property(texts, queries, (text, query) => {
        expect(scanMatch(parseSearchQuery(query), text)?.snippet).toBe(plainSnippet(text, query));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('wordsAt', () => {
  it('cuts an ASCII text as the general rule cuts and folds it', () => {
    const general = (text: string) =>
      [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu)].map((match) => ({
        word: foldWord(match[0]),
        start: match.index,
        end: match.index + match[0].length,
      }));
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 60, size: 'max' }), (text) => {
        expect(wordsAt(text)).toEqual(general(text));
      }),
      { numRuns: 3000 },
    );
  });
});
