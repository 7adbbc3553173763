/**
 * The query language every backend answers the same way: plain words, all of which must occur,
 * and "quoted phrases", whose words must occur in that order, side by side. Words are cut and
 * folded here, in JavaScript, for every backend: the memory scan reads them, and the FTS5 and
 * PostgreSQL indexes are given these words rather than cutting the text with their own
 * tokenizers (whose Unicode tables differ from each other's and from JavaScript's), so every
 * backend agrees on what a word is.
 */
import { PalimpsestError } from '../../core/index.js';

/** A query that cannot be read: empty, an unclosed quote, or nothing searchable in it. */
export class SearchQueryError extends PalimpsestError {
  static override readonly kind: string = 'SearchQueryError';
  declare readonly code: 'BAD_QUERY';
  constructor(message: string) {
    super('BAD_QUERY', message);
  }
}

/** One part of a query: a single word, or a phrase of words that must stand together. */
export interface SearchTerm {
  readonly phrase: boolean;
  /** The folded words (see {@link searchWords}); one for a plain word. */
  readonly words: readonly string[];
}

/** A parsed query: every term must match. */
export interface SearchQuery {
  readonly text: string;
  readonly terms: readonly SearchTerm[];
}

/** The longest query accepted, in characters. */
export const MAX_QUERY_LENGTH = 1000;
const MAX_TERMS = 32;
/**
 * A word: a letter or digit, then letters, digits and combining marks. The marks belong to the
 * word: a Devanagari vowel sign or an accent typed as a combining character does not cut it.
 */
export const WORD_PATTERN = '[\\p{L}\\p{N}][\\p{L}\\p{N}\\p{M}]*';
const WORD = new RegExp(WORD_PATTERN, 'gu');

const ASCII = /^[\x20-\x7e]*$/;
/** A text (or word) of ASCII characters only. */
export const ASCII_TEXT = /^\p{ASCII}*$/u;
/** {@link WORD} in an ASCII text, where letters and digits are these and there are no marks. */
const ASCII_WORD = /[A-Za-z0-9]+/g;
/**
 * Marks dropped from a decomposed word: those on letters of the scripts whose readers treat
 * them as optional accents (Latin, Greek and Cyrillic accents, Arabic and Hebrew vowel points).
 * Elsewhere (Indic and Southeast Asian scripts) a mark is a vowel of the word and stays.
 */
const OPTIONAL_MARKS =
  /([\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{sc=Arabic}\p{sc=Hebrew}])\p{M}+/gu;
/** What compatibility decomposition can leave in a word that is not part of one (`½` → `1⁄2`). */
const NOT_WORD = /[^\p{L}\p{N}\p{M}]/gu;

/**
 * How words are folded; stored beside an index whose words were folded here (PostgreSQL's), so
 * an index folded by an older rule is rebuilt rather than searched with words it never holds.
 */
export const FOLD_VERSION = 2;

/**
 * A word folded as every index folds it: compatibility forms decomposed (`ＡＢＣ`, `ﬁ`), optional
 * accents dropped (see {@link OPTIONAL_MARKS}), lowercase, and Greek final sigma read as sigma.
 */
export function foldWord(word: string): string {
  // Most words are ASCII, which no decomposition changes: only lowercase them.
  if (ASCII.test(word)) return word.toLowerCase();
  return word
    .normalize('NFKD')
    .replace(OPTIONAL_MARKS, '$1')
    .toLowerCase()
    .replaceAll('ς', 'σ')
    .replace(NOT_WORD, '');
}

/** A word of a text and where it stands (UTF-16 offsets), for snippets. */
export interface WordAt {
  readonly word: string;
  readonly start: number;
  readonly end: number;
}

/** The folded words of a text, with their places. */
export function wordsAt(text: string): WordAt[] {
  const words: WordAt[] = [];
  // Most texts are ASCII: their words are runs of letters and digits that need only lowercasing.
  if (ASCII_TEXT.test(text)) {
    for (const match of text.matchAll(ASCII_WORD)) {
      const end = match.index + match[0].length;
      words.push({ word: match[0].toLowerCase(), start: match.index, end });
    }
    return words;
  }
  for (const match of text.matchAll(WORD)) {
    const folded = foldWord(match[0]);
    if (folded !== '')
      words.push({ word: folded, start: match.index, end: match.index + match[0].length });
  }
  return words;
}

/** The folded words of a text. */
export function searchWords(text: string): string[] {
  return wordsAt(text).map((at) => at.word);
}

/**
 * Reads a query: words outside quotes are terms of their own, the words inside a pair of double
 * quotes one phrase, and so are the words of one name joined by punctuation (`read_file`).
 *
 * @throws SearchQueryError for an empty query, an unclosed quote, a query of punctuation only,
 *   one longer than {@link MAX_QUERY_LENGTH} characters or of more than 32 terms.
 *
 * @example
 * ```ts
 * import { parseSearchQuery } from 'palimpsest/store';
 *
 * const query = parseSearchQuery('deploy "night train" read_file');
 * console.log(query.terms.map((term) => term.words.join(' '))); // ['deploy', 'night train', 'read file']
 * console.log(query.terms[1]?.phrase); // true
 * ```
 */
export function parseSearchQuery(text: string): SearchQuery {
  if (typeof text !== 'string') {
    throw new SearchQueryError(`expected the query as a string, found ${typeof text}`);
  }
  if (text.length > MAX_QUERY_LENGTH) {
    throw new SearchQueryError(
      `expected a query of at most ${MAX_QUERY_LENGTH} characters, found ${text.length}`,
    );
  }
  const parts = text.split('"');
  if (parts.length % 2 === 0) {
    throw new SearchQueryError(
      `expected every " of the query to be closed, found ${parts.length - 1} quotes`,
    );
  }
  const terms: SearchTerm[] = [];
  parts.forEach((part, index) => {
    if (index % 2 === 1) {
      const words = searchWords(part);
      if (words.length > 0) terms.push({ phrase: words.length > 1, words });
    } else {
      // `read_file` or `src/app.ts` is one name: its words stand together, as in a phrase.
      for (const chunk of part.split(/\s+/)) {
        const inChunk = searchWords(chunk);
        if (inChunk.length > 0) terms.push({ phrase: inChunk.length > 1, words: inChunk });
      }
    }
  });
  if (terms.length === 0) {
    throw new SearchQueryError(
      text.trim() === ''
        ? 'expected words to search for, found an empty query'
        : `expected words to search for (letters or digits), found only punctuation in '${text.slice(0, 60)}'`,
    );
  }
  if (terms.length > MAX_TERMS) {
    throw new SearchQueryError(`expected at most ${MAX_TERMS} terms, found ${terms.length}`);
  }
  return { text, terms };
}
