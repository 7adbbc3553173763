import { describe, expect, it } from 'vitest';
import { count } from '../../src/viewer/page/text.js';

describe('count', () => {
  it('groups thousands as en-US does', () => {
    for (const value of [0, 7, 999, 1000, 12_345, 100_009, 1_234_567_890, -4321]) {
      expect(count(value)).toBe(value.toLocaleString('en-US'));
    }
    expect(count(1.5)).toBe('1.5');
  });
});
