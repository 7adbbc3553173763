/**
 * How a word is folded for search: the ASCII shortcut gives what the general rule gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldWord, searchWords } from '../../../src/store/search/query.js';

const general = (word: string): string =>
  word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

describe('foldWord', () => {
  it('folds any word as decomposition, dropping marks and lowercasing would', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 12 }), (word) => {
        expect(foldWord(word)).toBe(general(word));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), (word) => {
        expect(foldWord(word)).toBe(general(word));
      }),
      { numRuns: 2000 },
    );
  });

  it('drops accents and case from words of any script', () => {
    expect(searchWords('Café CRÈME Ünïcode ΣΊΣΥΦΟΣ read_File42')).toEqual([
      'cafe',
      'creme',
      'unicode',
      'σισυφος',
      'read',
      'file42',
    ]);
  });
});
