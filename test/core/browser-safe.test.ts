/**
 * The core is bundled for the browser by the viewer, so it must not import Node built-ins or
 * any other layer of the package.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const coreDir = join(import.meta.dirname, '../../src/core');

describe('src/core', () => {
  it('imports nothing but its own modules', () => {
    const offending: string[] = [];
    for (const file of readdirSync(coreDir).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(join(coreDir, file), 'utf8');
      for (const match of source.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)) {
        const specifier = match[1] ?? match[2] ?? '';
        if (!specifier.startsWith('./')) offending.push(`${file}: ${specifier}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
