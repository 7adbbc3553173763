/**
 * `x as unknown as T` tells the compiler to believe anything; in `src/` each one must be on the
 * list below with the reason no type does the job. Event data needs none: `event.type` narrows
 * `event.data`, and the log's data types are JSON by type. A new double cast fails here until it
 * is typed properly or listed, reason and all.
 */
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles, srcDir } from '../source-files.js';

/** `file (relative to src/): the cast's text` → why it must stay. Empty today. */
const ALLOWED: Readonly<Record<string, string>> = {};

/** The `as unknown as` casts of one file's text, each as `name: text` (whitespace collapsed). */
function doubleCastsIn(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isAsExpression(node) &&
      ts.isAsExpression(node.expression) &&
      node.expression.type.kind === ts.SyntaxKind.UnknownKeyword
    ) {
      found.push(`${name}: ${node.getText(source).replace(/\s+/g, ' ')}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('casts in src/', () => {
  it('has no `as unknown as` but the listed ones', () => {
    const found = sourceFiles().flatMap((file) =>
      doubleCastsIn(relative(srcDir, file).split(sep).join('/'), readFileSync(file, 'utf8')),
    );
    expect(found.sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it('finds a double cast however it is written, and not one in a comment', () => {
    const text = [
      '// event.data as unknown as X, in a comment',
      'const a = (event.data as unknown as { turn: number }).turn;',
      'const b = value as unknown as',
      '  Record<string, unknown>;',
    ].join('\n');
    expect(doubleCastsIn('probe.ts', text)).toEqual([
      'probe.ts: event.data as unknown as { turn: number }',
      'probe.ts: value as unknown as Record<string, unknown>',
    ]);
  });
});
