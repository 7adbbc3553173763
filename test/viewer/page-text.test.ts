import { describe, expect, it } from 'vitest';
import { count, counted } from '../../src/viewer/page/text.js';

describe('count', () => {
  it('groups thousands as en-US does', () => {
    for (const value of [0, 7, 999, 1000, 12_345, 100_009, 1_234_567_890, -4321]) {
      expect(count(value)).toBe(value.toLocaleString('en-US'));
    }
    expect(count(1.5)).toBe('1.5');
  });
});

describe('counted', () => {
  it('names one thing in the singular and any other number in the plural', () => {
    expect(counted(1, 'compaction')).toBe('1 compaction');
    expect(counted(0, 'compaction')).toBe('0 compactions');
    expect(counted(12_345, 'event')).toBe('12,345 events');
    expect(counted(1, 'surface entry', 'surface entries')).toBe('1 surface entry');
    expect(counted(2, 'surface entry', 'surface entries')).toBe('2 surface entries');
  });
});
