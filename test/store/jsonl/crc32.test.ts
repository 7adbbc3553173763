/** The commit-marker checksum: standard CRC-32, the same from zlib and from the JS fallback. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Js } from '../../../src/store/contract/crc32.js';

describe('crc32', () => {
  it('gives the standard check value for "123456789"', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32Js(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  it('agrees between zlib and the JavaScript fallback, whole or in pieces', () => {
    for (const size of [0, 1, 7, 8, 9, 1000, 65_537]) {
      const bytes = randomBytes(size);
      const whole = crc32Js(bytes);
      expect(crc32(bytes)).toBe(whole);
      const cut = Math.floor(size / 3);
      expect(crc32(bytes.subarray(cut), crc32(bytes.subarray(0, cut)))).toBe(whole);
      expect(crc32Js(bytes.subarray(cut), crc32Js(bytes.subarray(0, cut)))).toBe(whole);
    }
  });
});
