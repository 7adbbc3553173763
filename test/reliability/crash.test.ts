/**
 * Crash (reliability plan T1): per backend, a child writer recording agent turns on three
 * sessions at once is killed with SIGKILL at every named failpoint of the write path and at
 * random times, at least 300 times per CI run. Three kill lanes run side by side, each on its own
 * store, which is replaced by a fresh one every few dozen kills (so the create failpoints are
 * hit again and logs stay small). After every kill a copy of the store is reopened and each
 * session checked (lib/oracle.ts): no acknowledged event lost or changed, contiguous seqs, the
 * surface folds, derived messages a provider accepts, repair written once.
 *
 * The harness is shown to catch a store that acknowledges before writing, and one whose load
 * drops or alters the last event.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionStore } from '../../src/store/index.js';
import { BACKENDS, type BackendUnderTest } from './lib/backends.js';
import { mutantStore, type StoreMutant } from './lib/mutants.js';
import { type Acknowledged, checkAfterCrash, runAndKill } from './lib/oracle.js';
import {
  add,
  brokenPromises,
  childScript,
  count,
  expectClean,
  fail,
  recordMutant,
  type Tally,
  tally,
  useScratch,
} from './lib/results.js';
import { crashSessionId } from './lib/workload.js';

const KILLS = count(Number(process.env.PALIMPSEST_CRASH_KILLS ?? 300));
const LANES = 3;
const SESSIONS = 3;
/** Kills on one store before the lane starts a fresh one. */
const PER_STORE = 10;

const FAILPOINTS: Record<string, readonly string[]> = {
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
    'random',
  ],
  sqlite: [
    'append:before-commit',
    // Committed, not yet in the ledger: the ledger is behind, and must raise no false alarm.
    'append:before-ledger',
    'append:after-commit',
    'lock:after-acquire',
    'random',
    'random',
    'random',
  ],
};
/** Failpoints of creating a session: the first kills on each fresh store. */
const CREATE_FAILPOINTS: Record<string, readonly string[]> = {
  jsonl: [
    'create:after-temp-write',
    'create:after-temp-fsync',
    'create:after-link',
    'create:after-dir-fsync',
  ],
  // A new database's ledger named before the database names it; a created session before its
  // ledger record.
  sqlite: ['pair:before-commit', 'create:before-ledger'],
};
/** Failpoints a child passes at most once per session (creating, locking, repairing at open). */
const ONCE = new Set([
  'pair:before-commit',
  'create:before-ledger',
  'create:after-temp-write',
  'create:after-temp-fsync',
  'create:after-link',
  'create:after-dir-fsync',
  'truncate:after-truncate',
  'lock:after-acquire',
]);

const tempRoot = useScratch();

/**
 * Checks every session of the store at `location` on a copy (the next child must still find,
 * and repair, what the killed one left), through `wrap` (a mutant, or the store as it is).
 */
async function checkCopy(
  t: Tally,
  backend: BackendUnderTest,
  location: string,
  acked: Acknowledged,
  scratch: string,
  wrap: (store: SessionStore) => SessionStore = (store) => store,
): Promise<void> {
  const dir = mkdtempSync(join(scratch, 'copy-'));
  try {
    const copy = backend.copy(location, dir);
    const store = wrap(await backend.open(copy));
    try {
      for (let n = 0; n < SESSIONS; n++) {
        const id = crashSessionId(n);
        const artifact = backend.name === 'jsonl' ? join(copy, `${id}.jsonl`) : undefined;
        await checkAfterCrash(t, store, id, acked.get(id) ?? new Map(), artifact);
        add(t, 'sessions checked');
      }
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `kills` kills in one lane; returns the failpoints reached. */
async function lane(
  t: Tally,
  backend: BackendUnderTest,
  lane: number,
  kills: number,
): Promise<Set<string>> {
  const root = tempRoot(`crash-${backend.name}-${lane}`);
  const scratch = join(root, 'scratch');
  mkdirSync(scratch);
  const reached = new Set<string>();
  let location = '';
  let acked: Acknowledged = new Map();
  let turn = 0;
  const createPoints = CREATE_FAILPOINTS[backend.name] ?? [];
  const points = FAILPOINTS[backend.name] ?? ['random'];
  for (let kill = 0; kill < kills; kill++) {
    const k = kill % PER_STORE;
    // Each create failpoint gets a fresh store of its own (a create in flight on another
    // session would otherwise finish first); then one store grows across kills.
    if (createPoints[k] !== undefined || k === createPoints.length) {
      const dir = join(root, `store-${kill}`);
      mkdirSync(dir);
      location = backend.location(dir);
      acked = new Map();
    }
    // Named failpoints in turn (a counter of their own, so every one comes up whatever the
    // store rotation), each create failpoint on the first kills of a fresh store.
    const failpoint = createPoints[k] ?? (points[(lane + turn++) % points.length] as string);
    const childStarted = Date.now();
    const outcome = await runAndKill({
      script: childScript('writer'),
      backend: backend.name,
      location,
      failpoint,
      hit: ONCE.has(failpoint) ? 1 : 1 + (kill % 7),
      seed: lane * 100_000 + kill + 1,
      sessions: SESSIONS,
      randomDelayMs: Math.random() * 150,
      acked,
    });
    t.runs++;
    t.faults++;
    if (outcome.hit) reached.add(failpoint);
    if (failpoint === 'random') add(t, 'kills at random times');
    else if (outcome.hit) add(t, 'kills at failpoints');
    if (outcome.hung) fail(t, 'hangs', `${failpoint}: the child never opened its sessions`);
    // A child that cannot open what the last kill left means a crash made a session unreadable.
    if (outcome.exited !== undefined)
      fail(t, 'lost', `the writer failed by itself: ${outcome.exited}`);
    const checkStarted = Date.now();
    add(t, 'ms in children', checkStarted - childStarted);
    await checkCopy(t, backend, location, acked, scratch);
    add(t, 'ms in checks', Date.now() - checkStarted);
    if (brokenPromises(t).length > 0) break;
  }
  return reached;
}

for (const backend of BACKENDS) {
  describe(`crash recovery: ${backend.name}`, () => {
    it(`loses no acknowledged event over ${KILLS} kills at failpoints and random times, and repairs once`, async () => {
      const t = tally('crash', backend.name);
      const started = Date.now();
      const reached = await Promise.all(
        Array.from({ length: LANES }, (_, i) => lane(t, backend, i, Math.ceil(KILLS / LANES))),
      );
      const all = new Set(reached.flatMap((set) => [...set]));
      const named = [
        ...(CREATE_FAILPOINTS[backend.name] ?? []),
        ...(FAILPOINTS[backend.name] ?? []),
      ].filter((point) => point !== 'random');
      t.figures['failpoints reached'] = `${[...all].sort().join(', ')}`;
      add(t, 'seconds', Math.round((Date.now() - started) / 1000));
      console.log(`crash ${backend.name}: ${JSON.stringify(t)}`);
      expectClean(t);
      expect(t.runs).toBeGreaterThanOrEqual(KILLS);
      expect(t.acked).toBeGreaterThan(0);
      expect(named.filter((point) => !all.has(point))).toEqual([]);
      expect(t.figures.repairs).toBeGreaterThan(0);
    });

    for (const mutant of ['drop-last-event', 'alter-last-event'] as const satisfies StoreMutant[]) {
      it(`catches a store whose load has the mutation ${mutant}`, async () => {
        const t = tally('crash', backend.name);
        const root = tempRoot(`crash-mutant-${backend.name}`);
        const location = backend.location(root);
        const acked: Acknowledged = new Map();
        for (let round = 0; round < 5 && brokenPromises(t).length === 0; round++) {
          await runAndKill({
            script: childScript('writer'),
            backend: backend.name,
            location,
            failpoint: 'random',
            hit: 1,
            seed: round + 1,
            sessions: SESSIONS,
            randomDelayMs: 100 + Math.random() * 100,
            acked,
          });
          await checkCopy(t, backend, location, acked, root, (store) => mutantStore(store, mutant));
        }
        recordMutant('crash', backend.name, brokenPromises(t).length > 0);
        expect(brokenPromises(t).length, 'the mutant went unnoticed').toBeGreaterThan(0);
      });
    }
  });
}

describe('the crash harness', () => {
  it('catches a store that acknowledges appends before writing them', async () => {
    const backend = BACKENDS[0] as BackendUnderTest;
    const t = tally('crash', backend.name);
    const root = tempRoot('crash-mutant-ack');
    const location = backend.location(root);
    const acked: Acknowledged = new Map();
    for (let round = 0; round < 10 && t.lost === 0; round++) {
      await runAndKill({
        script: childScript('writer'),
        backend: backend.name,
        location,
        failpoint: 'random',
        hit: 1,
        seed: round + 1,
        sessions: 1,
        randomDelayMs: 100 + Math.random() * 200,
        acked,
        mutant: 'ack-before-write',
      });
      await checkCopy(t, backend, location, acked, root);
    }
    recordMutant('crash', backend.name, t.lost > 0);
    expect(t.failures.join('\n')).toMatch(/acknowledged event \d+ is (missing|different)/);
  });
});
