/**
 * How a word is cut and folded for search: the ASCII shortcut gives what the general rule gives,
 * and the rule keeps what a reader of each script would call one word.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldWord, searchWords } from '../../../src/store/search/query.js';

/** A word as the module notes define it: a letter or digit, then letters, digits and marks. */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;

/** The rule as the module notes state it, step by step. */
const general = (word: string): string =>
  word
    .normalize('NFKD')
    .replace(/([\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{sc=Arabic}\p{sc=Hebrew}])\p{M}+/gu, '$1')
    .toLowerCase()
    .replaceAll('ς', 'σ')
    .replace(/[^\p{L}\p{N}\p{M}]/gu, '');

describe('foldWord', () => {
  it('folds any word as the stated rule does, the ASCII shortcut included', () => {
    for (const unit of ['grapheme-composite', 'binary', 'grapheme-ascii'] as const) {
      fc.assert(
        fc.property(fc.string({ unit, maxLength: 24 }), (text) => {
          for (const [word] of text.matchAll(WORD)) expect(foldWord(word)).toBe(general(word));
        }),
        { numRuns: 2000 },
      );
    }
  });

  it('drops accents and case from Latin, Greek and Cyrillic words', () => {
    expect(searchWords('Café CRÈME Ünïcode ΣΊΣΥΦΟΣ Σίσυφος ёлка МОЙ read_File42 İstanbul')).toEqual(
      [
        'cafe',
        'creme',
        'unicode',
        'σισυφοσ',
        'σισυφοσ',
        'елка',
        'мои',
        'read',
        'file42',
        'istanbul',
      ],
    );
  });

  it('reads a Greek final sigma as the sigma it is', () => {
    expect(foldWord('ΟΔΟΣ')).toBe(foldWord('οδος'));
    expect(foldWord('οδοσ')).toBe(foldWord('οδος'));
  });

  it('keeps a combining accent inside the word it marks', () => {
    expect(searchWords('cafe\u0301 noir')).toEqual(['cafe', 'noir']);
  });

  it('keeps the vowel signs of an Indic word in it', () => {
    expect(searchWords('हिन्दी भाषा')).toEqual(['हिन्दी', 'भाषा']);
    expect(foldWord('कि')).not.toBe(foldWord('का'));
  });

  it('drops Arabic and Hebrew vowel points, which most text leaves out', () => {
    expect(foldWord('العَرَبِيَّة')).toBe('العربية');
    expect(foldWord('שָׁלוֹם')).toBe('שלום');
  });

  it('reads full-width and ligature forms as the letters they stand for', () => {
    expect(searchWords('ＡＢＣ ﬁle')).toEqual(['abc', 'file']);
  });

  it('keeps no punctuation a decomposition leaves inside a word', () => {
    expect(foldWord('½')).toBe('12');
  });
});
