/**
 * The package as a consumer meets it: ESM only, with a clear word for `require`, and
 * declarations that type-check without `skipLibCheck`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  readonly exports: Record<string, string | Record<string, string>>;
};
const specifiers = Object.keys(manifest.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'palimpsest' : `palimpsest/${subpath.slice(2)}`));

const consumer = mkdtempSync(join(tmpdir(), 'palimpsest-consumer-'));
afterAll(() => rmSync(consumer, { recursive: true, force: true }));

describe('the package', () => {
  it('answers require() of every entry point with ERR_REQUIRE_ESM and how to import it', () => {
    // A package can require itself by name through its own exports map.
    const require = createRequire(join(root, 'package.json'));
    for (const specifier of specifiers) {
      expect(() => require(specifier), specifier).toThrow(
        expect.objectContaining({
          code: 'ERR_REQUIRE_ESM',
          message: expect.stringMatching(/ES module package.*await import\('palimpsest'\)/),
        }),
      );
    }
  });

  it('has declarations that type-check for a consumer with skipLibCheck off', () => {
    mkdirSync(join(consumer, 'node_modules'));
    symlinkSync(root, join(consumer, 'node_modules', 'palimpsest'), 'dir');
    const file = join(consumer, 'index.ts');
    writeFileSync(
      file,
      `${specifiers.map((specifier, index) => `import * as entry${index} from '${specifier}';`).join('\n')}\nexport const entries = [${specifiers.map((_, index) => `entry${index}`).join(', ')}];\n`,
    );
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
    });
    // The `ai` package's own declarations fail these settings (its `TOOLS[NAME]` constraint
    // under exactOptionalPropertyTypes), for any consumer of `ai`, with or without palimpsest;
    // palimpsest/ai-sdk's declarations, which name its types, are still checked.
    const ownProblems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => !diagnostic.file?.fileName.includes('/node_modules/ai/'));
    const problems = ownProblems.map((diagnostic) => {
      const where = diagnostic.file?.fileName ?? '';
      return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
    });
    expect(problems).toEqual([]);
    // The program read the built declarations, not the sources.
    expect(
      program.getSourceFiles().some((source) => source.fileName.endsWith('dist/core/index.d.ts')),
    ).toBe(true);
  });
});
