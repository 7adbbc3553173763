/**
 * Simulated power loss (reliability plan T2) for the JSONL backend: the real backend code runs
 * on a CrashFs; at a random operation the file system freezes and a crash image is built from
 * what fdatasync and directory fsyncs made durable, plus a random, possibly torn or garbled,
 * part of what they did not. The session is then reopened from that image and checked: every
 * acknowledged event is there, the repaired log is well formed, a second open writes nothing.
 *
 * The harness is shown to catch the faults it exists for: with fsync skipped (acknowledged
 * events lost) or the directory fsync after create skipped (the session vanishes), it fails.
 */
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../src/core/index.js';
import { openSession } from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { CrashFs } from './lib/crash-fs.js';
import { random, recordTurns } from './lib/workload.js';

const IMAGES = Number(process.env.PALIMPSEST_POWER_LOSS_IMAGES ?? 400);

interface Harness {
  /** Crash images checked. */
  readonly images: number;
  readonly ackedEvents: number;
  /** Descriptions of every broken promise found (empty when the backend keeps them all). */
  readonly failures: string[];
}

/** Runs `images` crash cycles with one seed; `mutate` sets mutant switches on the file system. */
async function runPowerLoss(
  seed: number,
  images: number,
  mutate?: (fs: CrashFs) => void,
): Promise<Harness> {
  const next = random(seed);
  let fs = new CrashFs();
  mutate?.(fs);
  const acked = new Map<number, string>();
  const failures: string[] = [];
  let ackedEvents = 0;
  for (let image = 0; image < images; image++) {
    const store = await openJsonlStore(`${fs.root}/sessions`, { fs });
    let live: Awaited<ReturnType<typeof openSession>>;
    try {
      live = await openSession(store, 'power', { durability: { mode: 'each' } });
    } catch (error) {
      failures.push(`image ${image}: open failed: ${(error as Error).message}`);
      break;
    }
    const events = live.events;
    for (const [seq, json] of acked) {
      if (JSON.stringify(events[seq]) !== json)
        failures.push(`image ${image}: acknowledged seq ${seq} lost`);
    }
    const violations = checkInvariants(events, { requireClosed: true });
    if (violations.length > 0)
      failures.push(`image ${image}: ${violations[0]?.code} at seq ${violations[0]?.seq}`);
    if (failures.length > 0) break;
    // Write until the file system freezes at a random operation, acknowledging what flushed.
    fs.stopAfter(1 + Math.floor(next() * 120));
    const frozen = fs.whenStopped().then(() => 'frozen' as const);
    let acknowledged = live.seq;
    const workload = recordTurns(live, next, async () => {
      const outcome = await Promise.race([live.flush().then(() => 'flushed' as const), frozen]);
      if (outcome === 'frozen') await new Promise<never>(() => {});
      for (; acknowledged < live.seq; acknowledged++) {
        acked.set(acknowledged, JSON.stringify(live.events[acknowledged]));
        ackedEvents++;
      }
    });
    await Promise.race([workload, frozen]);
    // Power cut: build the disk image; the reboot makes every lock stale.
    fs = fs.crash(next);
    fs.removeAll('.lock');
  }
  return { images, ackedEvents, failures };
}

describe('power loss on the JSONL backend', () => {
  it(`keeps every acknowledged event across ${IMAGES} simulated power cuts`, async () => {
    let acked = 0;
    const failures: string[] = [];
    const runs = 8;
    for (let seed = 1; seed <= runs; seed++) {
      const result = await runPowerLoss(seed, Math.ceil(IMAGES / runs));
      acked += result.ackedEvents;
      failures.push(...result.failures.map((failure) => `seed ${seed}: ${failure}`));
    }
    console.log(
      `power loss: ${IMAGES} crash images, ${acked} acknowledged events, ${failures.length} broken promises`,
    );
    expect(failures).toEqual([]);
    expect(acked).toBeGreaterThan(100);
  });

  it('catches a writer that skips fsync (acknowledged events lost)', async () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= 10 && failures.length === 0; seed++) {
      const result = await runPowerLoss(seed, 40, (fs) => {
        fs.skipFileSync = true;
      });
      failures.push(...result.failures);
    }
    expect(failures.some((failure) => failure.includes('lost'))).toBe(true);
  });

  it('catches a create that skips the directory fsync (the session vanishes)', async () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= 20 && failures.length === 0; seed++) {
      const result = await runPowerLoss(seed, 10, (fs) => {
        fs.skipDirectorySync = true;
      });
      failures.push(...result.failures);
    }
    expect(failures.some((failure) => failure.includes('lost'))).toBe(true);
  });
});
