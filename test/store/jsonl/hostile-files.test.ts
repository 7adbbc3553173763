/**
 * The store directory is untrusted input: a FIFO, a device or a symbolic link where a session
 * log belongs is refused with `UnsafeFileError`, at once, and nothing is written through it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Session } from '../../../src/core/index.js';
import { UnsafeFileError } from '../../../src/store/contract/errors.js';
import { openSession } from '../../../src/store/index.js';
import { type JsonlStore, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { encodeSessionId, LOG_SUFFIX } from '../../../src/store/jsonl/paths.js';
import { cli } from '../../cli/helpers.js';

let dir: string;
let store: JsonlStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'palimpsest-hostile-'));
  store = await openJsonlStore(join(dir, 'sessions'));
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const logOf = (id: string) => join(dir, 'sessions', `${encodeSessionId(id)}${LOG_SUFFIX}`);

async function seeded(id: string): Promise<void> {
  const session = Session.create({ id });
  session.append('turn/start', { turn: 1 });
  await store.create(session.header);
  await store.append(id, session.events, { expectedSeq: 0 });
}

/** Settles `work`, failing the test if it takes longer than a hang would allow. */
async function promptly<T>(work: Promise<T>): Promise<PromiseSettledResult<T>> {
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('hung for 5 s')), 5000).unref(),
  );
  const [result] = await Promise.allSettled([Promise.race([work, timeout])]);
  return result;
}

function refusal(result: PromiseSettledResult<unknown>): unknown {
  expect(result.status).toBe('rejected');
  return (result as PromiseRejectedResult).reason;
}

describe('hostile files in a JSONL store', () => {
  it('a FIFO named like a session log is refused at once by load and openSession, and listed as damaged', async () => {
    execFileSync('mkfifo', [logOf('fifo')]);
    await seeded('fine');
    const listed = await promptly(store.list());
    expect(listed.status).toBe('fulfilled');
    const page = (listed as PromiseFulfilledResult<Awaited<ReturnType<typeof store.list>>>).value;
    expect(page.sessions.map((summary) => summary.header.id)).toEqual(['fine']);
    expect(page.damaged?.map((entry) => [entry.id, entry.error.code])).toEqual([
      ['fifo', 'UNSAFE_FILE'],
    ]);
    const attempts: Promise<unknown>[] = [store.load('fifo'), openSession(store, 'fifo')];
    for (const attempt of attempts) {
      const error = refusal(await promptly(attempt));
      expect(UnsafeFileError.isInstance(error), String(error)).toBe(true);
      expect((error as UnsafeFileError).found).toBe('a FIFO');
    }
  });

  it('a symbolic link to a device is refused instead of read forever', async () => {
    symlinkSync('/dev/zero', logOf('zero'));
    const error = refusal(await promptly(store.load('zero')));
    expect(UnsafeFileError.isInstance(error)).toBe(true);
    expect((error as UnsafeFileError).found).toBe('a device');
  });

  it('a log swapped for a symbolic link out of the store receives no append', async () => {
    await seeded('swapped');
    const stored = await store.load('swapped');
    const outside = join(dir, 'outside.jsonl');
    writeFileSync(outside, readFileSync(logOf('swapped')));
    unlinkSync(logOf('swapped'));
    symlinkSync(outside, logOf('swapped'));
    const before = readFileSync(outside, 'utf8');
    const next = Session.create({ id: 'swapped', seed: stored.events });
    next.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    const error = refusal(
      await promptly(store.append('swapped', next.events.slice(1), { expectedSeq: 1 })),
    );
    expect(UnsafeFileError.isInstance(error), String(error)).toBe(true);
    expect((error as UnsafeFileError).found).toBe('a symbolic link');
    expect(readFileSync(outside, 'utf8')).toBe(before);
  });

  it('the CLI ends at once with exit code 4 and names the file', () => {
    execFileSync('mkfifo', [logOf('fifo')]);
    // A CLI that opened the FIFO would block on it until cli()'s timeout kills it (code -1).
    const shown = cli(['show', 'fifo', '--store', `jsonl:${join(dir, 'sessions')}`]);
    expect(shown.code).toBe(4);
    expect(shown.stderr).toMatch(/fifo\.jsonl: expected a regular file of the store, found a FIFO/);
  });
});
