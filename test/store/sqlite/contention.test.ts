/**
 * Contention between live writers in real processes on one database: 4 writers on 4 sessions,
 * and 3 writers taking turns on one session. With a busy timeout of a few ms every writer meets
 * SQLITE_BUSY constantly; writers must wait their turn within the retry bound (never a storage
 * error that stops a live session), a held session must be a `LockedError`, and every
 * acknowledged event must be stored exactly once, in order.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dataAsJson } from '../../../src/core/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import { useTempDir } from './helpers.js';

const WRITER = fileURLToPath(new URL('../fixtures/sqlite-writer.ts', import.meta.url));
const tempDir = useTempDir();

interface Outcome {
  readonly code: number | null;
  readonly acks: number;
  readonly locked: number;
  readonly output: string;
}

function writer(
  file: string,
  mode: 'own' | 'shared',
  id: string,
  count: number,
  startAt = 0,
): Promise<Outcome> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', WRITER, file, mode, id, String(count), '2', String(startAt)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    output += chunk;
  });
  return new Promise((resolve) => {
    child.once('exit', (code) =>
      resolve({
        code,
        acks: output.match(/^ACK /gm)?.length ?? 0,
        locked: output.match(/^LOCKED$/gm)?.length ?? 0,
        output: output
          .split('\n')
          .filter((line) => !/^(ACK \d+|LOCKED)$/.test(line))
          .join('\n')
          .trim(),
      }),
    );
  });
}

describe('SQLite writers in several processes', () => {
  it('4 writers on 4 sessions all finish, every acknowledged event stored once, in order', async () => {
    const file = join(tempDir(), 'shared.db');
    (await openSqliteStore(file)).close();
    const count = 150;
    const startAt = Date.now() + 5000;
    const outcomes = await Promise.all(
      [0, 1, 2, 3].map((n) => writer(file, 'own', `w${n}`, count, startAt)),
    );
    for (const outcome of outcomes) {
      expect(outcome.output).toBe('DONE');
      expect(outcome).toMatchObject({ code: 0, acks: count });
    }
    const store = await openSqliteStore(file, { readOnly: true });
    for (const n of [0, 1, 2, 3]) {
      const { events } = await store.load(`w${n}`);
      expect(events.map((event) => (dataAsJson(event) as { i: number }).i)).toEqual(
        Array.from({ length: count }, (_, i) => i),
      );
    }
    await store.close();
  }, 120_000);

  it('3 writers taking turns on one session: a held session is LockedError, and no event is lost or doubled', async () => {
    const file = join(tempDir(), 'shared.db');
    (await openSqliteStore(file)).close();
    const rounds = 15;
    // All three start at once (after their slowest start-up), and hold the session a while.
    const startAt = Date.now() + 5000;
    const outcomes = await Promise.all(
      [0, 1, 2].map(() => writer(file, 'shared', 's', rounds, startAt)),
    );
    for (const outcome of outcomes) {
      expect(outcome.output).toBe('DONE');
      expect(outcome).toMatchObject({ code: 0, acks: rounds });
    }
    // They did collide: some opens found the session held.
    expect(outcomes.reduce((sum, outcome) => sum + outcome.locked, 0)).toBeGreaterThan(0);
    const store = await openSqliteStore(file, { readOnly: true });
    const { events } = await store.load('s');
    expect(events).toHaveLength(3 * rounds * 5);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i));
    // Each writer's rounds come whole and in order: one holder at a time.
    for (let at = 0; at < events.length; at += 5) {
      const batch = events.slice(at, at + 5).map((event) => event.data as Record<string, number>);
      expect(new Set(batch.map((data) => `${data.writer}/${data.round}`)).size).toBe(1);
      expect(batch.map((data) => data.i)).toEqual([0, 1, 2, 3, 4]);
    }
    await store.close();
  }, 120_000);
});
