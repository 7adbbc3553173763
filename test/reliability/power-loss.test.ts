/**
 * Power loss (reliability plan T2).
 *
 * JSONL: the real backend runs on a CrashFs (lib/crash-fs.ts); at a random operation the file
 * system freezes and a crash image is built from what fdatasync and directory fsyncs made
 * durable, plus a random, possibly torn or garbled, part of what they did not. The session is
 * reopened from that image and checked: every acknowledged event is there, the repaired log is
 * well formed. The harness catches a writer that skips fsync and a create that skips the
 * directory fsync.
 *
 * SQLite (no VFS seam): a child writer records three sessions while the parent copies the
 * ledger, the database and the WAL at random moments, in either order, as a power cut could
 * catch files that are being written. Each copy must give, per session, a prefix holding at
 * least every event acknowledged before the copy began and nothing else (a copy taken
 * mid-write may lose only unacknowledged events), or a typed CorruptLogError; a copy that loads
 * is then opened for writing, repaired, and checked like a crash. The harness catches a store
 * that drops or alters the last event.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkInvariants, PalimpsestError } from '../../src/core/index.js';
import { CorruptLogError, openSession, type SessionStore } from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { BACKENDS } from './lib/backends.js';
import { CrashFs } from './lib/crash-fs.js';
import { mutantStore, type StoreMutant } from './lib/mutants.js';
import { type Acknowledged, checkAfterCrash, runAndKill } from './lib/oracle.js';
import {
  add,
  childScript,
  count,
  expectClean,
  fail,
  recordMutant,
  type Tally,
  tally,
  useScratch,
} from './lib/results.js';
import { crashSessionId, random, recordTurns } from './lib/workload.js';

const IMAGES = count(Number(process.env.PALIMPSEST_POWER_LOSS_IMAGES ?? 500));
const SQLITE_RUNS = count(8);
const COPIES_PER_RUN = 10;
const SESSIONS = 3;

const scratch = useScratch();

/** Runs `images` crash cycles with one seed; `mutate` sets mutant switches on the file system. */
async function jsonlPowerLoss(
  t: Tally,
  seed: number,
  images: number,
  mutate?: (fs: CrashFs) => void,
): Promise<void> {
  const next = random(seed);
  let fs = new CrashFs();
  mutate?.(fs);
  const acked = new Map<number, string>();
  for (let image = 0; image < images; image++) {
    const store = await openJsonlStore(`${fs.root}/sessions`, { fs });
    let live: Awaited<ReturnType<typeof openSession>>;
    t.runs++;
    t.faults++;
    try {
      live = await openSession(store, 'power', { durability: { mode: 'each' } });
    } catch (error) {
      if (PalimpsestError.isInstance(error))
        fail(t, 'lost', `seed ${seed} image ${image}: open failed: ${(error as Error).message}`);
      else fail(t, 'untyped', `seed ${seed} image ${image}: ${String(error)}`);
      return;
    }
    const events = live.events;
    t.acked += acked.size;
    if (live.openReport.repairedEvents > 0) add(t, 'repairs');
    if (live.openReport.tornBytesDropped > 0) add(t, 'torn tails dropped');
    for (const [seq, json] of acked) {
      const stored = events[seq];
      if (stored === undefined)
        fail(t, 'lost', `seed ${seed} image ${image}: acknowledged seq ${seq} lost`);
      else if (JSON.stringify(stored) !== json)
        fail(t, 'altered', `seed ${seed} image ${image}: acknowledged seq ${seq} changed`);
    }
    const violations = checkInvariants(events, { requireClosed: true });
    if (violations.length > 0)
      fail(
        t,
        'altered',
        `seed ${seed} image ${image}: ${violations[0]?.code} at seq ${violations[0]?.seq}`,
      );
    if (t.lost + t.altered > 0) return;
    // Write until the file system freezes at a random operation, acknowledging what flushed.
    fs.stopAfter(1 + Math.floor(next() * 120));
    const frozen = fs.whenStopped().then(() => 'frozen' as const);
    let acknowledged = live.seq;
    const workload = recordTurns(live, next, async () => {
      const outcome = await Promise.race([live.flush().then(() => 'flushed' as const), frozen]);
      if (outcome === 'frozen') await new Promise<never>(() => {});
      for (; acknowledged < live.seq; acknowledged++)
        acked.set(acknowledged, JSON.stringify(live.events[acknowledged]));
    });
    await Promise.race([workload, frozen]);
    // Power cut: build the disk image; the reboot makes every lock stale.
    fs = fs.crash(next);
    fs.removeAll('.lock');
  }
}

describe('power loss on the JSONL backend (simulated file system)', () => {
  it(`keeps every acknowledged event across ${IMAGES} simulated power cuts`, async () => {
    const t = tally('power-loss', 'jsonl');
    const runs = 8;
    for (let seed = 1; seed <= runs; seed++)
      await jsonlPowerLoss(t, seed, Math.ceil(IMAGES / runs));
    t.figures.method =
      'CrashFs: durable image + random prefix of unsynced writes, torn or NUL-garbled';
    console.log(`power loss jsonl: ${JSON.stringify(t)}`);
    expectClean(t);
    expect(t.acked).toBeGreaterThan(100);
  });

  for (const [what, mutate] of [
    [
      'a writer that skips fsync (acknowledged events lost)',
      (fs: CrashFs) => {
        fs.skipFileSync = true;
      },
    ],
    [
      'a create that skips the directory fsync (the session vanishes)',
      (fs: CrashFs) => {
        fs.skipDirectorySync = true;
      },
    ],
  ] as const) {
    it(`catches ${what}`, async () => {
      const t = tally('power-loss', 'jsonl');
      for (let seed = 1; seed <= 20 && t.lost === 0; seed++)
        await jsonlPowerLoss(t, seed, 30, mutate);
      recordMutant('power-loss', 'jsonl', t.lost > 0);
      expect(t.failures.some((failure) => failure.includes('lost'))).toBe(true);
    });
  }
});

/** The events acknowledged so far, per session, as contiguous counts from seq 0. */
function ackedCounts(acked: Acknowledged): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [id, events] of acked) {
    let n = 0;
    while (events.has(n)) n++;
    counts.set(id, n);
  }
  return counts;
}

interface Snapshot {
  readonly location: string;
  readonly ackedBefore: Map<string, number>;
}

/**
 * Runs one child writer on a fresh database and takes `copies` snapshots of its files at
 * random moments while it writes; then kills it. Returns the snapshots and what was acknowledged.
 */
async function sqliteSnapshots(root: string, run: number, copies: number) {
  const dir = join(root, `run-${run}`);
  mkdirSync(dir);
  const location = join(dir, 'sessions.db');
  const acked: Acknowledged = new Map();
  const snapshots: Snapshot[] = [];
  const next = random(run + 1);
  await runAndKill({
    script: childScript('writer'),
    backend: 'sqlite',
    location,
    failpoint: 'random',
    hit: 1,
    seed: run + 1,
    sessions: SESSIONS,
    randomDelayMs: 0,
    acked,
    whileRunning: async () => {
      for (let copy = 0; copy < copies; copy++) {
        await new Promise((resolve) => setTimeout(resolve, 5 + next() * 40));
        const ackedBefore = ackedCounts(acked);
        const target = join(dir, `copy-${copy}`);
        mkdirSync(target);
        // The ledger first (it may only be behind what was acknowledged), then the database
        // and the WAL in either order: a checkpoint may run between the two copies.
        const order = next() < 0.5 ? ['-lengths', '', '-wal'] : ['-lengths', '-wal', ''];
        for (const suffix of order) {
          if (existsSync(`${location}${suffix}`))
            copyFileSync(`${location}${suffix}`, join(target, `sessions.db${suffix}`));
        }
        snapshots.push({ location: join(target, 'sessions.db'), ackedBefore });
      }
    },
  });
  return { snapshots, acked };
}

/** Checks one snapshot, adding to `t`. */
async function checkSnapshot(
  t: Tally,
  snapshot: Snapshot,
  acked: Acknowledged,
  open: (location: string, readOnly: boolean) => Promise<SessionStore>,
): Promise<void> {
  t.runs++;
  t.faults++;
  let loads = true;
  try {
    const store = await open(snapshot.location, true);
    try {
      for (let n = 0; n < SESSIONS; n++) {
        const id = crashSessionId(n);
        const before = snapshot.ackedBefore.get(id) ?? 0;
        const known = acked.get(id) ?? new Map<number, string>();
        t.acked += before;
        try {
          const loaded = await store.load(id);
          if (loaded.events.length < before)
            fail(
              t,
              'lost',
              `${id}: ${loaded.events.length} events, ${before} acknowledged before the copy`,
            );
          loaded.events.forEach((event, seq) => {
            const json = known.get(seq);
            if (json !== undefined && JSON.stringify(event) !== json)
              fail(t, 'altered', `${id}: event ${seq} differs from the acknowledged one`);
          });
          add(t, 'unacknowledged events present', Math.max(0, loaded.events.length - known.size));
        } catch (error) {
          loads = false;
          if (CorruptLogError.isInstance(error)) t.detected++;
          else if (PalimpsestError.isInstance(error)) {
            t.detected++;
            add(t, `typed error ${(error as PalimpsestError).code}`);
          } else if (before === 0 && String(error).includes('NOT_FOUND')) {
            // Not created yet when the copy was taken, and nothing acknowledged.
          } else fail(t, 'untyped', `${id}: ${String(error)}`);
        }
      }
    } finally {
      await store.close();
    }
  } catch (error) {
    loads = false;
    if (PalimpsestError.isInstance(error)) t.detected++;
    else fail(t, 'untyped', `open: ${String(error)}`);
  }
  if (!loads) return;
  // Recovery as a restarted writer: repair each session, then check it like a crash.
  const store = await open(snapshot.location, false);
  try {
    for (let n = 0; n < SESSIONS; n++) {
      const id = crashSessionId(n);
      const before = snapshot.ackedBefore.get(id) ?? 0;
      const known = new Map(
        [...(acked.get(id) ?? new Map<number, string>())].filter(([seq]) => seq < before),
      );
      await checkAfterCrash(t, store, id, known, undefined);
    }
  } finally {
    await store.close();
  }
}

async function sqlitePowerLoss(
  t: Tally,
  runs: number,
  copies: number,
  mutant?: StoreMutant,
): Promise<void> {
  const backend = BACKENDS.find((entry) => entry.name === 'sqlite');
  if (backend === undefined) throw new Error('no sqlite backend');
  const root = scratch('power-sqlite');
  for (let run = 0; run < runs; run++) {
    const { snapshots, acked } = await sqliteSnapshots(root, run, copies);
    for (const snapshot of snapshots) {
      await checkSnapshot(t, snapshot, acked, async (location, readOnly) => {
        const store = await backend.open(location, { readOnly });
        return mutant === undefined ? store : mutantStore(store, mutant);
      });
    }
  }
}

describe('power loss on the SQLite backend (copies of live files)', () => {
  it(`gives an acknowledged prefix or a typed error in ${SQLITE_RUNS * COPIES_PER_RUN} copies taken during writes`, async () => {
    const t = tally('power-loss', 'sqlite');
    await sqlitePowerLoss(t, SQLITE_RUNS, COPIES_PER_RUN);
    t.figures.method = 'copies of ledger, database and WAL taken while a child process writes';
    console.log(`power loss sqlite: ${JSON.stringify(t)}`);
    expectClean(t);
    expect(t.runs).toBe(SQLITE_RUNS * COPIES_PER_RUN);
    expect(t.acked).toBeGreaterThan(0);
  });

  for (const mutant of ['drop-last-event', 'alter-last-event'] as const) {
    it(`catches a store with the mutation ${mutant}`, async () => {
      const t = tally('power-loss', 'sqlite');
      await sqlitePowerLoss(t, 2, 5, mutant);
      const caught = t.lost + t.altered > 0;
      recordMutant('power-loss', 'sqlite', caught);
      expect(caught, JSON.stringify(t)).toBe(true);
    });
  }
});
