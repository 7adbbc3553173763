/**
 * Runs the built `palimpsest` binary (dist/cli/main.js, built by test/build-once.ts) the way a
 * user's shell would: a separate process, stdout and stderr captured, no TTY.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const binary = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `palimpsest ...args` in `cwd`, with provider keys removed unless `env` sets them. */
export function cli(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): CliRun {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...options.env };
  for (const key of [
    'DEEPSEEK_API_KEY',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'ANTHROPIC_API_KEY',
    'PALIMPSEST_STORE',
  ]) {
    if (options.env?.[key] === undefined) delete env[key];
  }
  const result = spawnSync(process.execPath, [binary, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** A temporary directory with a store URL of each embedded backend in it. */
export function tempStores(): {
  dir: string;
  urls: { jsonl: string; sqlite: string };
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-cli-'));
  return {
    dir,
    urls: { jsonl: `jsonl:${join(dir, 'sessions')}`, sqlite: `sqlite:${join(dir, 'sessions.db')}` },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
