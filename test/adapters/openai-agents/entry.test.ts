/**
 * The entry point needs the SDK only for its types: the built modules (dist/, built by the test
 * setup) never import it, so `palimpsest/openai-agents` loads where `@openai/agents` is absent.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const built = join(import.meta.dirname, '..', '..', '..', 'dist', 'adapters', 'openai-agents');

describe('palimpsest/openai-agents as built', () => {
  it('imports nothing of @openai/agents at run time', () => {
    const modules = readdirSync(built).filter((name) => name.endsWith('.js'));
    expect(modules).toContain('index.js');
    for (const name of modules) {
      const code = readFileSync(join(built, name), 'utf8');
      const imports = [...code.matchAll(/^\s*import\b[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
      expect(
        imports.filter((specifier) => specifier?.startsWith('@openai/')),
        name,
      ).toEqual([]);
    }
  });
});
