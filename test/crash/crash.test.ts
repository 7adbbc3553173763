/**
 * Crash tests: a child writer is killed with SIGKILL at every named failpoint of the write path
 * and at random times, at least 100 times per backend, on one session that keeps growing across
 * kills. After every kill the session is reopened and checked (see harness.ts): no acknowledged
 * event lost, contiguous seqs, a valid surface, paired tool calls, and a second open that writes
 * nothing. Set PALIMPSEST_CRASH_KILLS to change the number of kills per backend.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../src/store/index.js';
import {
  type Backend,
  copyLocation,
  type KillOutcome,
  runAndKill,
  verifyAfterKill,
} from './harness.js';

const KILLS = Number(process.env.PALIMPSEST_CRASH_KILLS ?? 100);

const FAILPOINTS: Record<Backend, readonly string[]> = {
  jsonl: [
    'append:before-write',
    'append:mid-write',
    // Right after a torn write, so the next open has a tail to truncate.
    'truncate:after-truncate',
    'append:after-write',
    'append:after-fsync',
    'lock:after-acquire',
    'random',
    'random',
  ],
  sqlite: ['append:before-commit', 'append:after-commit', 'lock:after-acquire', 'random', 'random'],
};
const CREATE_FAILPOINTS: Record<Backend, readonly string[]> = {
  jsonl: ['create:after-temp-fsync', 'create:after-link'],
  sqlite: [],
};

/** Failpoints a child passes at most once (creating, locking, repairing at open). */
const ONCE_PER_PROCESS = new Set([
  'create:after-temp-fsync',
  'create:after-link',
  'truncate:after-truncate',
  'lock:after-acquire',
]);

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

async function storeAt(backend: Backend, location: string): Promise<SessionStore> {
  if (backend === 'jsonl') {
    const { openJsonlStore } = await import('../../src/store/jsonl/index.js');
    return openJsonlStore(location);
  }
  const { openSqliteStore } = await import('../../src/store/sqlite/index.js');
  return openSqliteStore(location);
}

for (const backend of ['jsonl', 'sqlite'] as const) {
  describe(`crash recovery: ${backend}`, () => {
    it(`loses no acknowledged event over ${KILLS} kills at failpoints and random times, and repairs idempotently`, {
      timeout: 30 * 60_000,
    }, async () => {
      const root = mkdtempSync(join(tmpdir(), `palimpsest-crash-${backend}-`));
      roots.push(root);
      const outcomes: KillOutcome[] = [];
      let repairs = 0;
      let torn = 0;
      let location = '';
      let acked = new Map<number, string>();
      const fresh = (round: number): void => {
        location =
          backend === 'jsonl' ? join(root, `dir-${round}`) : join(root, `db-${round}.sqlite`);
        acked = new Map();
      };
      const createPoints = CREATE_FAILPOINTS[backend];
      const points = FAILPOINTS[backend];
      for (let round = 0; round < KILLS; round++) {
        // Each create failpoint gets a location of its own; then one session grows across kills.
        const createPoint = createPoints[round];
        if (createPoint !== undefined || round === createPoints.length) fresh(round);
        const failpoint = createPoint ?? (points[round % points.length] as string);
        const outcome = await runAndKill({
          backend,
          location,
          failpoint,
          hit: ONCE_PER_PROCESS.has(failpoint) ? 1 : 1 + (round % 4),
          seed: round + 1,
          randomDelayMs: Math.random() * 400,
          acked,
        });
        outcomes.push(outcome);
        // Check a copy: the next child must still find (and repair) what this one left.
        const copy = copyLocation(backend, location);
        const artifact = backend === 'jsonl' ? join(copy.location, 'crash.jsonl') : undefined;
        const verification = await verifyAfterKill(
          () => storeAt(backend, copy.location),
          acked,
          artifact,
        ).finally(copy.remove);
        if (verification.repairedEvents > 0) repairs++;
        if (verification.tornBytesDropped > 0) torn++;
      }
      const reached = new Set(
        outcomes.filter((outcome) => outcome.hit).map((outcome) => outcome.failpoint),
      );
      const named = [...CREATE_FAILPOINTS[backend], ...FAILPOINTS[backend]].filter(
        (point) => point !== 'random',
      );
      const ackedTotal = outcomes.reduce((sum, outcome) => sum + outcome.ackedEvents, 0);
      console.log(
        `${backend}: ${outcomes.length} kills, ${ackedTotal} acknowledged events, 0 lost; ${repairs} repairs, ${torn} torn tails dropped; failpoints reached: ${[...reached].sort().join(', ')}`,
      );
      expect(outcomes).toHaveLength(KILLS);
      expect(ackedTotal).toBeGreaterThan(0);
      expect([...named].filter((point) => !reached.has(point))).toEqual([]);
      expect(repairs).toBeGreaterThan(0);
    });
  });
}

describe('the crash harness', () => {
  it('catches a store that acknowledges appends before writing them', {
    timeout: 120_000,
  }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'palimpsest-crash-mutant-'));
    roots.push(root);
    const location = join(root, 'sessions');
    const acked = new Map<number, string>();
    const failures: string[] = [];
    for (let round = 0; round < 10 && failures.length === 0; round++) {
      await runAndKill({
        backend: 'jsonl',
        location,
        failpoint: 'random',
        hit: 1,
        seed: round + 1,
        randomDelayMs: 100 + Math.random() * 200,
        acked,
        mutant: 'ack-before-write',
      });
      const copy = copyLocation('jsonl', location);
      try {
        await verifyAfterKill(() => storeAt('jsonl', copy.location), acked, undefined);
      } catch (error) {
        failures.push((error as Error).message);
      } finally {
        copy.remove();
      }
    }
    expect(failures.join('\n')).toMatch(/acknowledged event \d+ is (missing|different)/);
  });
});
