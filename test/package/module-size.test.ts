/**
 * Small modules, one role each: a source file that grows past the bound has taken on a second
 * role, and is split by role (as the store backends were in issue 31) rather than let grow.
 */
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles, srcDir } from '../source-files.js';

const MAX_LINES = 600;

/** `file: lines` for each source file longer than `limit`. */
function oversized(files: readonly string[], limit: number): string[] {
  return files.flatMap((file) => {
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    const name = relative(srcDir, file).split(sep).join('/');
    return lines > limit ? [`${name}: ${lines}`] : [];
  });
}

describe('source modules', () => {
  it(`are at most ${MAX_LINES} lines each`, () => {
    expect(oversized(sourceFiles(), MAX_LINES)).toEqual([]);
  });

  it('would name a file over the bound', () => {
    expect(oversized(sourceFiles(), 100).length).toBeGreaterThan(0);
  });
});
