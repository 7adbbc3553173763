/**
 * The package as a consumer meets it: ESM only, with a clear word for `require`, and
 * declarations that type-check without `skipLibCheck`.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

/** Entry points whose declarations import a framework's types (an optional peer). */
const FRAMEWORK_ENTRIES: ReadonlySet<string> = new Set([
  'palimpsest/openai-agents',
  'palimpsest/ai-sdk',
  'palimpsest/claude-agent-sdk',
  'palimpsest/mcp',
]);

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
    const program = typeCheckConsumer(
      'index',
      specifiers.filter((specifier) => !FRAMEWORK_ENTRIES.has(specifier)),
    );
    // The program read the built declarations, not the sources.
    expect(
      program.getSourceFiles().some((source) => source.fileName.endsWith('dist/core/index.d.ts')),
    ).toBe(true);
  });

  // Its declarations name the framework's types, so the consumer checks the framework's own
  // declarations too: about 700 more files, several times the cost of all the others.
  it.each([...FRAMEWORK_ENTRIES])(
    '%s has declarations that type-check with its framework, skipLibCheck off',
    (specifier) => {
      const program = typeCheckConsumer(specifier.replace(/\W/g, '-'), [specifier]);
      expect(program.getSourceFiles().some((source) => source.fileName.includes('/dist/'))).toBe(
        true,
      );
    },
    240_000,
  );
});

/** Type-checks a consumer file importing `entries` with the strictest options; no problem allowed. */
function typeCheckConsumer(name: string, entries: readonly string[]): ts.Program {
  const modules = join(consumer, 'node_modules');
  if (!existsSync(modules)) {
    mkdirSync(modules);
    symlinkSync(root, join(modules, 'palimpsest'), 'dir');
  }
  const file = join(consumer, `${name}.ts`);
  writeFileSync(
    file,
    `${entries.map((specifier, index) => `import * as entry${index} from '${specifier}';`).join('\n')}\nexport const entries = [${entries.map((_, index) => `entry${index}`).join(', ')}];\n`,
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
  const problems = ts.getPreEmitDiagnostics(program).flatMap((diagnostic) => {
    const where = diagnostic.file?.fileName ?? '';
    // @openai/agents-core 0.14's own declarations fail under exactOptionalPropertyTypes with
    // skipLibCheck off (RunResultBase.agentToolInvocation), for anyone who imports the SDK:
    // not a problem of palimpsest's declarations, which are what this test is about.
    if (where.includes('/node_modules/@openai/agents-core/')) return [];
    // The same holds for the `ai` package's own declarations (its `TOOLS[NAME]` constraint);
    // palimpsest/ai-sdk's declarations, which name its types, are still checked.
    if (where.includes('/node_modules/ai/')) return [];
    return [`${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`];
  });
  expect(problems).toEqual([]);
  return program;
}
