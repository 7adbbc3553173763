/**
 * The `@example` blocks of the TSDoc in `src/` are complete programs a reader can paste, and this
 * file holds them to that: each ```ts fence is type-checked (strict, against the sources behind
 * the package's entry points) and then run. A `console.log(x); // 'value'` line is a claim: the
 * value printed there must be the literal in the comment (a quoted string, a number, a boolean).
 * An example that needs files makes its own temporary directory.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { sourceFiles, srcDir } from '../source-files.js';

const root = join(import.meta.dirname, '../..');
// Inside the project so that packages resolve from its node_modules; removed after the run.
const workDir = mkdtempSync(join(root, 'test/docs/.examples-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface Example {
  /** `file:line` of the fence. */
  readonly where: string;
  readonly code: string;
}

interface PackageJson {
  readonly exports: Record<string, string | { readonly import: string }>;
}

/** The ```ts fences inside `@example` sections of doc comments. */
function examplesOf(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const found: Example[] = [];
  let inExample = false;
  let fence: { start: number; body: string[] } | undefined;
  lines.forEach((line, index) => {
    const text = line.replace(/^\s*\*\s?/, '');
    if (/^\s*\/\*\*/.test(line) || /\*\/\s*$/.test(line)) inExample = false;
    if (text.startsWith('@example')) inExample = true;
    else if (text.startsWith('@') && fence === undefined) inExample = false;
    if (!inExample) return;
    if (fence === undefined && /^```ts\s*$/.test(text)) fence = { start: index + 1, body: [] };
    else if (fence !== undefined && /^```\s*$/.test(text)) {
      found.push({ where: `${relative(root, file)}:${fence.start}`, code: fence.body.join('\n') });
      fence = undefined;
    } else fence?.body.push(text);
  });
  return found;
}

/** `palimpsest/...` specifiers → the source modules behind them. */
function entryModules(): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  const modules = new Map<string, string>();
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target !== 'object') continue;
    const specifier = subpath === '.' ? 'palimpsest' : `palimpsest/${subpath.slice(2)}`;
    modules.set(specifier, join(root, target.import.replace(/^\.\/dist\//, 'src/')));
  }
  return modules;
}

/** Writes each example as a module whose palimpsest imports point at the sources. */
function materialise(examples: readonly Example[]): string[] {
  const modules = entryModules();
  return examples.map((example, index) => {
    const directory = join(workDir, String(index));
    mkdirSync(directory);
    const file = join(directory, 'example.ts');
    const code = example.code.replace(/from '(palimpsest(?:\/[a-z-]+)?)'/g, (match, name) => {
      const target = modules.get(name as string);
      if (target === undefined) return match;
      return `from '${relative(directory, target).split('\\').join('/')}'`;
    });
    writeFileSync(file, `${code}\nexport {};\n`);
    return file;
  });
}

const NO_CLAIM = Symbol('no claim');

/** Per `console.log` line of the example, in order, the value its comment claims it prints. */
function claimedOutput(code: string): (string | number | boolean | typeof NO_CLAIM)[] {
  return code
    .split('\n')
    .filter((line) => /^\s*console\.log\(/.test(line))
    .map((line) => {
      const comment = /\/\/\s*('(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false)(?=[\s:;,.]|$)/.exec(
        line,
      );
      const literal = comment?.[1];
      if (literal === undefined) return NO_CLAIM;
      if (literal.startsWith("'")) return literal.slice(1, -1).replace(/\\(.)/g, '$1');
      if (literal === 'true' || literal === 'false') return literal === 'true';
      return Number(literal);
    });
}

function typeErrors(files: readonly string[]): string[] {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    allowImportingTsExtensions: false,
    skipLibCheck: true,
    noEmit: true,
  });
  const wanted = new Set(files);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file !== undefined && wanted.has(diagnostic.file.fileName))
    .map((diagnostic) => {
      const file = diagnostic.file as ts.SourceFile;
      const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      return `${relative(workDir, file.fileName)}:${line + 1}: ${message}`;
    });
}

const examples = sourceFiles(srcDir).flatMap(examplesOf);
const files = materialise(examples);

describe('TSDoc examples', () => {
  it('are found in the entry points a newcomer meets first', () => {
    const where = examples.map((example) => example.where.split(':')[0]);
    for (const file of [
      'src/core/session.ts',
      'src/core/errors.ts',
      'src/store/session/open-session.ts',
      'src/agent/turn.ts',
      'src/compaction/compact.ts',
    ]) {
      expect(where, file).toContain(file);
    }
  });

  it('type-check as strict TypeScript against the sources', () => {
    expect(typeErrors(files)).toEqual([]);
  });

  it.each(examples.map((example, index) => [example.where, index] as const))(
    '%s runs to completion',
    async (_where, index) => {
      const printed = vi.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        await import(pathToFileURL(files[index] as string).href);
        const claims = claimedOutput((examples[index] as Example).code);
        expect(printed.mock.calls.map((call) => call[0])).toHaveLength(claims.length);
        claims.forEach((claim, at) => {
          if (claim !== NO_CLAIM)
            expect(printed.mock.calls[at]?.[0], `print ${at + 1}`).toBe(claim);
        });
      } finally {
        printed.mockRestore();
      }
    },
  );
});
