/**
 * The page runs in the browser: its files import core, the viewer's shared protocol, the pure
 * call pricing of the model layer, each other, and the one package it bundles (markdown-it),
 * never the store, a `node:` module or the server half of the viewer. (The layer test checks the viewer as a whole; this is the
 * stricter rule for the part esbuild bundles.)
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles, srcDir } from '../source-files.js';

const pageDir = join(srcDir, 'viewer', 'page');
const allowed = [
  join(srcDir, 'core'),
  pageDir,
  join(srcDir, 'viewer', 'protocol.ts'),
  // The session view prices calls as `palimpsest cost` does: these two model modules (and the
  // price table they read) are pure, with no `node:` import or provider runtime.
  join(srcDir, 'model', 'call-cost.ts'),
  join(srcDir, 'model', 'call-costs.ts'),
];

function violations(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(pageDir)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      const name = `${relative(srcDir, file)}: ${fileName}`;
      if (fileName.startsWith('.')) {
        const target = resolve(dirname(file), fileName).replace(/\.js$/, '.ts');
        if (!allowed.some((root) => target === root || target.startsWith(`${root}/`)))
          found.push(name);
      } else if (fileName !== 'markdown-it') found.push(name);
    }
  }
  return found;
}

describe('the browser page', () => {
  it('imports only core, the protocol, its own files and markdown-it', () => {
    expect(violations()).toEqual([]);
  });

  it('has imports for the rule to check', () => {
    const files = sourceFiles(pageDir);
    expect(files.length).toBeGreaterThan(5);
    expect(files.some((file) => readFileSync(file, 'utf8').includes("from 'markdown-it'"))).toBe(
      true,
    );
  });
});
