/**
 * The page runs in the browser: its files import core, the viewer's shared protocol, the pure
 * call pricing of the model layer, each other, and the packages it bundles (markdown-it, the
 * highlighter), never the store, a `node:` module or the server half of the viewer. (The layer test checks the viewer as a whole; this is the
 * stricter rule for the part esbuild bundles.)
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles, srcDir } from '../source-files.js';

const pageDir = join(srcDir, 'viewer', 'page');
/**
 * Beside core: the trace and the session view price calls as the CLI does, with model's price
 * tables and the functions that apply them, which import core alone (no digest, no `node:`, no
 * provider SDK).
 */
const pricing = ['call-costs.ts', 'call-cost.ts', 'price-table.ts', 'default-prices.ts'].map(
  (file) => join(srcDir, 'model', file),
);
const allowed = [join(srcDir, 'core'), pageDir, join(srcDir, 'viewer', 'protocol.ts'), ...pricing];
/**
 * The packages it bundles: markdown-it, and the conversation's code highlighting (lowlight, the
 * highlight.js grammars it runs, and hast, whose types alone describe lowlight's tree).
 */
const PACKAGES = ['markdown-it', 'lowlight', 'highlight.js', 'hast'];

function violations(): string[] {
  const found: string[] = [];
  for (const file of [...sourceFiles(pageDir), ...pricing]) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      const name = `${relative(srcDir, file)}: ${fileName}`;
      if (fileName.startsWith('.')) {
        const target = resolve(dirname(file), fileName).replace(/\.js$/, '.ts');
        if (!allowed.some((root) => target === root || target.startsWith(`${root}/`)))
          found.push(name);
      } else if (!PACKAGES.some((pkg) => fileName === pkg || fileName.startsWith(`${pkg}/`)))
        found.push(name);
    }
  }
  return found;
}

describe('the browser page', () => {
  it('imports only core, the protocol, its own files, the price tables, markdown-it and the highlighter', () => {
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
