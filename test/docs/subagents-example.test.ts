/**
 * docs/subagents.md shows examples/subagents.ts verbatim, and the example runs (offline, on the
 * scripted model) and prints what its comments say.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const path = (file: string) => new URL(`../../${file}`, import.meta.url);
const read = (file: string) => readFileSync(path(file), 'utf8');

describe('docs/subagents.md', () => {
  it('shows examples/subagents.ts verbatim', () => {
    const example = read('examples/subagents.ts').trimEnd();
    expect(read('docs/subagents.md')).toContain(`\`\`\`ts\n${example}\n\`\`\``);
  });

  it('runs the example, which prints what its comments say', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', path('examples/subagents.ts').pathname],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      'call_weather ran in trip/subagents/call_weather',
      'call_museums ran in trip/subagents/call_museums',
      "{ session: 'trip', toolCallId: 'call_weather' }",
      '4 calls, 2 children',
      'Light rain on Sunday afternoon.',
    ]);
  });
});
