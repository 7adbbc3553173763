/**
 * The TypeScript files of a source tree, for the tests that read the code itself (the layer
 * rules, the TSDoc examples).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The project's `src/` folder. */
export const srcDir = join(import.meta.dirname, '..', 'src');

/** Every `.ts` file below `directory`, depth first. */
export function sourceFiles(directory: string = srcDir): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}
