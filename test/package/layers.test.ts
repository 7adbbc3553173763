/**
 * The layers of DESIGN §2 import one way only: store and model each build on core alone; agent on
 * both; compaction on core and model; import and viewer above them, adapters above import (the
 * Claude Agent SDK store writes what the importer reads); cli on top. Inside the store, its own floors do too: contract ← sql ← sqlite,
 * postgres; contract ← jsonl, memory; contract ← integrity (the hash chain) ← encryption (sealed payloads); the live session
 * (`session/`) above every backend and the chain.
 * Testing depends on core and the provider specification alone. Drivers and framework packages
 * are imported only by the files of their own backend or adapter. Type-only imports count: a
 * type that crosses against the grain couples the layers as much as a value does.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles, srcDir } from '../source-files.js';

/** For each layer (a folder of `src/`), the layers its files may import. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  core: [],
  store: ['core'],
  model: ['core'],
  agent: ['core', 'model', 'store'],
  compaction: ['core', 'model'],
  testing: ['core'],
  adapters: ['core', 'store', 'model', 'agent', 'compaction', 'import'],
  import: ['core', 'store'],
  // The server rebuilds a call's request (`requestAt`, the provider bodies) for the trace and runs
  // `palimpsest verify`'s checks (agent's `verifyStoredSession`); the page prices calls with
  // model's pure price modules (its own import rule says which).
  viewer: ['core', 'store', 'model', 'agent'],
  cli: ['core', 'store', 'model', 'agent', 'compaction', 'testing', 'adapters', 'import', 'viewer'],
};

/**
 * Inside the store, the floors of the store itself: the backend contract at the bottom, what the
 * SQL backends share above it, the backends, and the live session over any store on top. The
 * entry `store/index.ts` sits above them all.
 */
const STORE_FLOORS: Readonly<Record<string, readonly string[]>> = {
  contract: [],
  sql: ['contract'],
  memory: ['contract'],
  jsonl: ['contract'],
  integrity: ['contract'],
  search: ['contract'],
  encryption: ['contract', 'integrity'],
  sqlite: ['contract', 'sql', 'search'],
  postgres: ['contract', 'sql', 'search'],
  session: [
    'contract',
    'memory',
    'jsonl',
    'sqlite',
    'postgres',
    'integrity',
    'encryption',
    'search',
  ],
};

/** Packages each layer may import; `node:` built-ins are allowed everywhere but in core. */
const PACKAGES: Readonly<Record<string, readonly string[]>> = {
  core: [],
  store: ['better-sqlite3', 'pg'],
  model: ['@ai-sdk/provider'],
  agent: [
    '@ai-sdk/provider',
    '@ai-sdk/anthropic',
    '@ai-sdk/deepseek',
    '@ai-sdk/openai',
    '@ai-sdk/openai-compatible',
  ],
  compaction: ['@ai-sdk/provider'],
  testing: ['@ai-sdk/provider'],
  adapters: [
    '@ai-sdk/provider',
    'ai',
    '@openai/agents',
    '@openai/agents-core',
    '@anthropic-ai/claude-agent-sdk',
    '@opentelemetry/api',
    '@opentelemetry/core',
    '@opentelemetry/exporter-trace-otlp-http',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/semantic-conventions',
    '@modelcontextprotocol/sdk',
    'zod',
  ],
  import: [],
  // The page's bundle: markdown-it, and the conversation's code highlighter (lowlight, the
  // highlight.js grammars it runs, and hast, whose types alone describe lowlight's tree).
  viewer: ['markdown-it', 'lowlight', 'highlight.js', 'hast'],
  cli: ['@ai-sdk/provider', 'commander'],
};

/**
 * A driver or framework is imported only under its own folder. Drivers load on demand through a
 * specifier held in a constant, so the quoted name itself is what is confined.
 */
const CONFINED: Readonly<Record<string, string>> = {
  'better-sqlite3': 'store/sqlite/',
  pg: 'store/postgres/',
  '@openai/agents': 'adapters/openai-agents/',
  '@openai/agents-core': 'adapters/openai-agents/',
  '@anthropic-ai/claude-agent-sdk': 'adapters/claude-agent-sdk/',
  '@opentelemetry/api': 'adapters/otel/',
  '@opentelemetry/core': 'adapters/otel/',
  '@opentelemetry/exporter-trace-otlp-http': 'adapters/otel/',
  '@opentelemetry/resources': 'adapters/otel/',
  '@opentelemetry/sdk-trace-base': 'adapters/otel/',
  '@opentelemetry/semantic-conventions': 'adapters/otel/',
  '@modelcontextprotocol/sdk': 'adapters/mcp/',
};

interface Import {
  readonly file: string;
  readonly specifier: string;
}

function importsOf(file: string): Import[] {
  // TypeScript's own scanner: comments (TSDoc examples import the package) and strings are not
  // imports; static, type-only, re-export and dynamic imports are.
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map((reference) => ({ file, specifier: reference.fileName }));
}

function layerOf(path: string): string {
  return relative(srcDir, path).split(sep)[0] ?? '';
}

/** The store floor of a file of the store (`''` for the entry at its root). */
function storeFloorOf(path: string): string {
  const parts = relative(join(srcDir, 'store'), path).split(sep);
  return parts.length > 1 ? (parts[0] ?? '') : '';
}

/** An import between two floors of the store that goes against STORE_FLOORS, if it is one. */
function storeViolation(file: string, target: string): string | undefined {
  const from = storeFloorOf(file);
  const to = storeFloorOf(target);
  if (from === '' || from === to) return undefined;
  const allowed = STORE_FLOORS[from];
  if (allowed === undefined) return `the store floor '${from}' has no row in the store floors`;
  if (to === '') return `store/${from} may not import the store's entry`;
  return allowed.includes(to) ? undefined : `store/${from} may not import store/${to}`;
}

function posix(path: string): string {
  return path.split(sep).join('/');
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Every import in `src/` that goes against the layer rules, as `file: specifier (why)`. */
function violations(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const layer = layerOf(file);
    const allowed = ALLOWED[layer];
    const name = relative(srcDir, file);
    if (allowed === undefined) {
      found.push(`${name}: the layer '${layer}' has no row in the layer rules`);
      continue;
    }
    const source = readFileSync(file, 'utf8');
    for (const [pkg, home] of Object.entries(CONFINED)) {
      if (source.includes(`'${pkg}'`) && !posix(name).startsWith(home)) {
        found.push(`${name}: '${pkg}' (${pkg} belongs to ${home} only)`);
      }
    }
    for (const { specifier } of importsOf(file)) {
      if (specifier.startsWith('.')) {
        const targetPath = join(dirname(file), specifier);
        const target = layerOf(targetPath);
        if (target !== layer && !allowed.includes(target)) {
          found.push(`${name}: ${specifier} (${layer} may not import ${target})`);
        }
        const inStore = layer === 'store' && target === 'store';
        const why = inStore ? storeViolation(file, targetPath) : undefined;
        if (why !== undefined) found.push(`${name}: ${specifier} (${why})`);
      } else if (specifier.startsWith('node:')) {
        if (layer === 'core') found.push(`${name}: ${specifier} (core runs in the browser)`);
      } else {
        const pkg = packageName(specifier);
        if (!(PACKAGES[layer] ?? []).includes(pkg)) {
          found.push(`${name}: ${specifier} (${layer} may not import the package ${pkg})`);
        }
      }
    }
  }
  return found;
}

describe('layer rules', () => {
  const files = sourceFiles(srcDir);

  it('every import in src/ follows the direction of DESIGN §2', () => {
    expect(violations(files)).toEqual([]);
  });

  it('the scan sees the imports it checks', () => {
    // A scan that found nothing would pass the rule above on any tree.
    const all = files.flatMap(importsOf);
    expect(all.length).toBeGreaterThan(200);
    expect(all.some((entry) => entry.specifier === '@ai-sdk/provider')).toBe(true);
    expect(all.some((entry) => entry.specifier === 'node:fs')).toBe(true);
    expect(all.some((entry) => entry.specifier.startsWith('../core/'))).toBe(true);
    expect(all.some((entry) => entry.specifier.startsWith('../contract/'))).toBe(true);
  });

  it('the store floors are checked: a backend importing the live session is caught', () => {
    const backend = join(srcDir, 'store', 'sqlite', 'store.ts');
    expect(storeViolation(backend, join(srcDir, 'store', 'session', 'open-session.js'))).toBe(
      'store/sqlite may not import store/session',
    );
    expect(storeViolation(backend, join(srcDir, 'store', 'sql', 'chunk-runs.js'))).toBeUndefined();
    const contract = join(srcDir, 'store', 'contract', 'errors.ts');
    expect(storeViolation(contract, join(srcDir, 'store', 'index.js'))).toBe(
      "store/contract may not import the store's entry",
    );
  });
});
