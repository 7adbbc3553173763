/**
 * docs/replay.md shows the whole replay example; CI runs examples/replay.ts. The two must be the
 * same program, or the guide would show code nobody runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/replay.md', () => {
  it('shows examples/replay.ts, the example CI runs, verbatim', () => {
    const example = read('examples/replay.ts').trimEnd();
    expect(read('docs/replay.md')).toContain(`\`\`\`ts\n${example}\n\`\`\``);
  });
});
