/**
 * Runs the built `palimpsest` binary (dist/cli/main.js, built by test/build-once.ts) the way a
 * user's shell would: a separate process, stdout and stderr captured, no TTY.
 */
import { spawn, spawnSync } from 'node:child_process';
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
  const env = cliEnv(options.env);
  const result = spawnSync(process.execPath, [binary, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The environment of a binary run: this process's, without colour, and without the provider
 * keys and store variable unless `overrides` sets them (a developer's own keys must not leak in).
 */
function cliEnv(overrides: Record<string, string> | undefined): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', ...overrides };
  for (const key of [
    'DEEPSEEK_API_KEY',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'ANTHROPIC_API_KEY',
    'PALIMPSEST_STORE',
    'PALIMPSEST_KEY_VAULT',
    'PALIMPSEST_MASTER_KEY',
    'PALIMPSEST_MASTER_KEY_FILE',
  ]) {
    if (overrides?.[key] === undefined) delete env[key];
  }
  return env;
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

/** A running `palimpsest` process whose stdin the test writes line by line. */
export interface LiveCli {
  /** Writes `text` to the process's stdin. */
  write(text: string): void;
  /** Resolves once stdout or stderr so far matches `pattern` (rejects after `timeoutMs`). */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Ends stdin and resolves with the exit code and everything printed. */
  exit(): Promise<CliRun>;
}

/** Spawns `palimpsest ...args` with piped stdio, provider keys removed unless `env` sets them. */
export function liveCli(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): LiveCli {
  const child = spawn(process.execPath, [binary, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const printed = { stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  child.stdout.on('data', (data: Buffer) => {
    printed.stdout += data.toString();
    wake();
  });
  child.stderr.on('data', (data: Buffer) => {
    printed.stderr += data.toString();
    wake();
  });
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return {
    write: (text) => child.stdin.write(text),
    waitFor: (stream, pattern, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`timed out waiting for ${pattern} on ${stream}: ${printed[stream]}`)),
          timeoutMs,
        );
        const check = (): void => {
          if (pattern.test(printed[stream])) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      }),
    exit: async () => {
      child.stdin.end();
      const code = await exited;
      return { code, ...printed };
    },
  };
}
