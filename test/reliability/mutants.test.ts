/**
 * The reliability harnesses must fail when a component is broken on purpose; otherwise a green
 * run proves nothing. Each harness here runs once against the real component (it must pass) and
 * once against a deliberately broken one (it must report the fault):
 * - the single-writer harness against a lock that always grants;
 * - the corruption harness against a loader that skips lines it cannot parse.
 * (The fsync mutant runs in test/crash/power-loss.test.ts, the ack-before-write mutant in
 * test/crash/crash.test.ts.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import {
  CorruptLogError,
  LockedError,
  openSession,
  type SessionLock,
  type SessionStore,
} from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { childScript } from './lib/results.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'palimpsest-mutants-'));
  roots.push(root);
  return root;
}

/** A store whose `lock` always grants: the broken lock. */
function alwaysGrants(store: SessionStore): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'lock') {
        return async (sessionId: string): Promise<SessionLock> => ({
          sessionId,
          owner: { pid: process.pid, host: 'mutant', since: Date.now(), token: 'mutant' },
          release: async () => {},
        });
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/**
 * The single-writer harness: a child process opens the session and stays alive holding it;
 * opening it here must fail with LockedError. Returns the problem found, or undefined.
 */
async function secondWriterProblem(
  wrap: (store: SessionStore) => SessionStore,
): Promise<string | undefined> {
  const dir = join(tempRoot(), 'sessions');
  const child = spawn(
    process.execPath,
    [childScript('writer'), 'jsonl', dir, 'lock:after-acquire', '1', '1'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('FAILPOINT')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the child exited with ${code}`)));
    });
    const store = wrap(await openJsonlStore(dir));
    try {
      const second = await openSession(store, 'crash-0');
      await second.close();
      return 'a second writer opened the session while the first was alive';
    } catch (error) {
      return error instanceof LockedError ? undefined : `unexpected ${(error as Error).message}`;
    } finally {
      await store.close();
    }
  } finally {
    child.kill('SIGKILL');
  }
}

/** A loader like those of some peers: parse each line, skip what does not parse. */
function lenientLoad(file: string): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
    try {
      const value = JSON.parse(line) as { seq?: unknown };
      if (typeof value.seq === 'number') events.push(value as SessionEvent);
    } catch {
      // Skips the bad line silently: the fault under test.
    }
  }
  return events;
}

/**
 * The corruption harness: damage a line of an early, acknowledged batch; the loader must report
 * a CorruptLogError. Returns the problem found, or undefined.
 */
async function corruptionProblem(
  load: (store: SessionStore, file: string) => Promise<unknown>,
): Promise<string | undefined> {
  const dir = join(tempRoot(), 'sessions');
  const store = await openJsonlStore(dir);
  const note = (seq: number): SessionEvent => ({
    seq,
    time: 1,
    type: 'app/note',
    data: { text: `note ${seq}` },
  });
  await store.create({ version: 0, id: 's', createdAt: 1 });
  await store.append('s', [note(0), note(1)], { expectedSeq: 0 });
  await store.append('s', [note(2), note(3)], { expectedSeq: 2 });
  const file = join(dir, 's.jsonl');
  writeFileSync(file, readFileSync(file, 'utf8').replace('{"seq":1,', '{"seq":1,,'));
  try {
    const loaded = await load(store, file);
    return `the damaged log loaded (${JSON.stringify(loaded).length} bytes of events)`;
  } catch (error) {
    return error instanceof CorruptLogError ? undefined : `unexpected ${(error as Error).message}`;
  } finally {
    await store.close();
  }
}

describe('reliability harnesses against broken components', () => {
  it('the single-writer harness passes with the real lock and fails with one that always grants', {
    timeout: 60_000,
  }, async () => {
    expect(await secondWriterProblem((store) => store)).toBeUndefined();
    expect(await secondWriterProblem(alwaysGrants)).toBe(
      'a second writer opened the session while the first was alive',
    );
  });

  it('the corruption harness passes with the real loader and fails with one that skips bad lines', async () => {
    expect(await corruptionProblem((store) => store.load('s'))).toBeUndefined();
    expect(await corruptionProblem(async (_store, file) => lenientLoad(file))).toMatch(
      /the damaged log loaded/,
    );
  });
});
