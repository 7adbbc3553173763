/**
 * `palimpsest unlock`: refuses a holder alive on this host (exit 5, naming it), removes the lock
 * of a writer killed with kill -9, says when there is nothing to remove, and forces with
 * `--force`. Holders are real child processes; the CLI runs as a separate process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { untilOutput } from '../store/child-output.js';
import { cli, tempStores } from './helpers.js';

const HOLDER = fileURLToPath(new URL('../store/fixtures/lock-holder.ts', import.meta.url));
const stores = tempStores();
afterAll(() => stores.remove());
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function holder(url: string, id: string): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, url, id, '5000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await untilOutput(child, 'LOCKED');
  return child as ChildProcess & { pid: number };
}

describe.each(['jsonl', 'sqlite'] as const)('palimpsest unlock on a %s store', (backend) => {
  const store = stores.urls[backend];
  const run = (...args: string[]) => cli([...args, '--store', store], { cwd: stores.dir });

  it('refuses a live holder, removes a killed one, and forces with --force', async () => {
    const live = await holder(store, 'held');
    const refused = run('unlock', 'held');
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain(`locked by pid ${live.pid} on ${hostname()} since `);
    expect(refused.stderr).toContain('running on this host (it heartbeats every 5.0 s)');
    // Writing commands name the holder the same way, and point at unlock.
    expect(run('repair', 'held').stderr).toContain('palimpsest unlock ID');

    live.kill('SIGKILL');
    await once(live, 'exit');
    const removed = run('unlock', 'held');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(
      new RegExp(
        `removed the lock of session 'held' held by pid ${live.pid} on .* since .*, last refreshed `,
      ),
    );
    expect(removed.stdout).not.toContain('forced');
    expect(run('unlock', 'held').stdout).toContain("session 'held' is not locked");

    const second = await holder(store, 'held');
    const forced = run('unlock', 'held', '--force', '--json');
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      id: 'held',
      removed: true,
      wasLive: true,
      owner: { pid: second.pid },
    });
  }, 30_000);
});
