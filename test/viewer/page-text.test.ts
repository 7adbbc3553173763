import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/viewer/page/lines.js';
import { count } from '../../src/viewer/page/text.js';

describe('the page’s line splitter', () => {
  const split = (pieces: readonly string[]): string[] => {
    const lines: string[] = [];
    const splitter = new LineSplitter();
    const decoder = new TextDecoder();
    for (const piece of pieces) {
      splitter.push(new TextEncoder().encode(piece), (bytes) => lines.push(decoder.decode(bytes)));
    }
    return lines;
  };

  it('gives each line once its newline has come, across pieces, skipping empty lines', () => {
    expect(split(['{"a":1}\n{"b"', ':2}\n\n{"c"', ':3', '}\n{"d":4}'])).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
  });

  it('keeps a multi-byte character cut between pieces whole', () => {
    const bytes = new TextEncoder().encode('"é—𝄞"\n');
    const lines: string[] = [];
    const splitter = new LineSplitter();
    for (let at = 0; at < bytes.length; at++) {
      splitter.push(bytes.subarray(at, at + 1), (line) =>
        lines.push(new TextDecoder().decode(line)),
      );
    }
    expect(lines).toEqual(['"é—𝄞"']);
  });
});

describe('count', () => {
  it('groups thousands as en-US does', () => {
    for (const value of [0, 7, 999, 1000, 12_345, 100_009, 1_234_567_890, -4321]) {
      expect(count(value)).toBe(value.toLocaleString('en-US'));
    }
    expect(count(1.5)).toBe('1.5');
  });
});
