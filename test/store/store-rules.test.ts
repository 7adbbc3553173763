/**
 * The rules every backend shares (`store-rules.ts`), by themselves: the stored-header decoder,
 * the list-options check, the error shell and the range coalescer.
 */

import { describe, expect, it } from 'vitest';
import { CitedSeqs } from '../../src/core/backend.js';
import type { SessionEvent } from '../../src/core/index.js';
import { InvalidArgumentError } from '../../src/core/index.js';
import {
  ClosedError,
  CorruptLogError,
  FormatVersionError,
  NotFoundError,
  StorageError,
} from '../../src/store/contract/errors.js';
import {
  asStorageError,
  assertOpen,
  checkListOptions,
  coalesce,
  DEFAULT_PAGE,
  decodeStoredHeader,
} from '../../src/store/contract/store-rules.js';
import { event } from '../core/builders.js';

const where = { file: '/x' };

describe('decodeStoredHeader', () => {
  it('accepts a header of this version naming the expected session', () => {
    const header = { version: 1, id: 's', createdAt: 1 };
    expect(decodeStoredHeader(header, { where, expectedId: 's' })).toEqual(header);
  });

  it('gives FormatVersionError for an integer foreign version, CorruptLogError for anything else', () => {
    for (const version of [0, 2, -1, 7]) {
      const decode = () => decodeStoredHeader({ version, id: 's', bogus: 1 }, { where });
      expect(decode).toThrow(FormatVersionError);
    }
    for (const value of [{ version: 1.5, id: 's', createdAt: 1 }, { version: '0' }, null, [], 3]) {
      expect(() => decodeStoredHeader(value, { where })).toThrow(CorruptLogError);
    }
    const renamed = () =>
      decodeStoredHeader({ version: 1, id: 'other', createdAt: 1 }, { where, expectedId: 's' });
    expect(renamed).toThrow(CorruptLogError);
  });
});

describe('checkListOptions', () => {
  it('defaults the page and refuses a bad limit or cursor', () => {
    expect(checkListOptions({})).toEqual({ limit: DEFAULT_PAGE, after: undefined, filter: {} });
    expect(() => checkListOptions({ limit: 0 })).toThrow(InvalidArgumentError);
    expect(() => checkListOptions({ cursor: 'nope' })).toThrow(InvalidArgumentError);
  });
});

describe('the error shell', () => {
  it('refuses a closed store and wraps only foreign errors', () => {
    expect(() => assertOpen(true, 'memory:')).toThrow(ClosedError);
    assertOpen(false, 'memory:');
    const own = new NotFoundError('s', 'memory:');
    expect(asStorageError('load', 'memory:', own)).toBe(own);
    const wrapped = asStorageError('load', 'memory:', new Error('disk'));
    expect(wrapped).toBeInstanceOf(StorageError);
    expect(wrapped.message).toContain('load in memory: failed');
  });
});

describe('coalesce', () => {
  it('joins positions within maxGap of the run, and bounds a run by maxSpan', () => {
    expect(coalesce([], 2)).toEqual([]);
    expect(coalesce([1, 2, 4, 9, 10], 2)).toEqual([
      { first: 0, last: 2 },
      { first: 3, last: 4 },
    ]);
    const starts = [0, 10, 20, 30];
    const ends = [5, 15, 25, 35];
    expect(coalesce(starts, 5, ends)).toEqual([{ first: 0, last: 3 }]);
    expect(coalesce(starts, 5, ends, 20)).toEqual([
      { first: 0, last: 1 },
      { first: 2, last: 3 },
    ]);
  });
});

describe('CitedSeqs', () => {
  it('counts only integer citations of earlier events by an assistant/message', () => {
    const cited = new CitedSeqs();
    const message = event(
      5,
      'assistant/message',
      {},
      { sourceEventSeqs: [0, 4, 5, 9, -1, 1.5] },
    ) as SessionEvent;
    cited.cite(message);
    cited.cite({ ...message, type: 'tool/result', sourceEventSeqs: [2] } as SessionEvent);
    expect([0, 1, 2, 3, 4, 5, 9].filter((seq) => cited.has(seq))).toEqual([0, 4]);
  });
});
