/**
 * Disk faults (reliability plan T3), per backend. When the suite runs as root and can mount a
 * tmpfs, the faults are real: a file system that fills up (ENOSPC) under a live writer, and one
 * remounted read-only. Otherwise, and for the faults a tmpfs cannot give (EIO on write and on
 * fdatasync, short writes), the JSONL backend's fault-injecting fs facade throws them at random
 * calls. SQLite has no such seam (no VFS from JavaScript): its EIO cases are not injected, as
 * the report says.
 *
 * Each case checks: the failure is a typed error; every acknowledged event is there after the
 * fault clears and the session is reopened; no partial batch is left behind (no torn tail
 * after a failed JSONL append); the reopened session repairs to a valid log and writes again;
 * after a failed fdatasync no later append is accepted by the same store.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkInvariants, PalimpsestError, type SessionEvent } from '../../src/core/index.js';
import { type LiveSession, openSession, type SessionStore } from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { rawEvent } from '../core/builders.js';
import { errno, faultyFs } from '../store/jsonl/helpers.js';
import { BACKENDS } from './lib/backends.js';
import { mutantStore } from './lib/mutants.js';
import {
  add,
  count,
  expectClean,
  fail,
  recordMutant,
  type Tally,
  tally,
  useScratch,
} from './lib/results.js';
import { random, recordTurns } from './lib/workload.js';

const FACADE_CASES = count(120);

const mounts: string[] = [];
const scratch = useScratch(tmpdir());
afterAll(() => {
  for (const mount of mounts) spawnQuiet('umount', ['-l', mount]);
});

function spawnQuiet(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A fresh tmpfs of `kib` KiB, or undefined when this process may not mount one. */
function smallFileSystem(kib: number): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = scratch('disk');
  if (!spawnQuiet('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir]))
    return undefined;
  mounts.push(dir);
  return dir;
}

const canMount = smallFileSystem(64) !== undefined;
/** The smallest file system the disk-full cases mount, KiB. */
const FULL_DISK_KIB = 320;

/**
 * Records turns on `session` until a flush fails or `stop` says so; returns the acknowledged
 * events (JSON by seq) and the error that stopped it.
 */
async function writeUntilFailure(
  live: LiveSession,
  seed: number,
  stop: () => boolean = () => false,
): Promise<{ acked: Map<number, string>; error: unknown }> {
  const acked = new Map<number, string>();
  let acknowledged = live.seq;
  for (let seq = 0; seq < live.seq; seq++) acked.set(seq, JSON.stringify(live.events[seq]));
  try {
    await recordTurns(
      live,
      random(seed),
      async () => {
        await live.flush();
        for (; acknowledged < live.seq; acknowledged++)
          acked.set(acknowledged, JSON.stringify(live.events[acknowledged]));
        if (stop()) throw new StopSignal();
      },
      400,
    );
    return { acked, error: undefined };
  } catch (error) {
    return { acked, error: error instanceof StopSignal ? undefined : error };
  }
}

class StopSignal extends Error {}

/** Checks the acknowledged events after a reopen, its repair, and that it writes again. */
async function checkRecovered(
  t: Tally,
  store: SessionStore,
  id: string,
  acked: ReadonlyMap<number, string>,
  what: string,
): Promise<void> {
  t.acked += acked.size;
  let live: LiveSession;
  try {
    live = await openSession(store, id);
  } catch (error) {
    if (PalimpsestError.isInstance(error))
      fail(t, 'lost', `${what}: reopen failed: ${String(error)}`);
    else fail(t, 'untyped', `${what}: reopen: ${String(error)}`);
    return;
  }
  try {
    const events: readonly SessionEvent[] = live.events;
    for (const [seq, json] of acked) {
      if (events[seq] === undefined) fail(t, 'lost', `${what}: acknowledged seq ${seq} missing`);
      else if (JSON.stringify(events[seq]) !== json)
        fail(t, 'altered', `${what}: acknowledged seq ${seq} changed`);
    }
    if (live.openReport.tornBytesDropped > 0) {
      // A failed append must leave no partial batch behind it.
      fail(
        t,
        'altered',
        `${what}: ${live.openReport.tornBytesDropped} bytes of a failed append were left`,
      );
    }
    const violations = checkInvariants(events, { requireClosed: true });
    if (violations.length > 0) fail(t, 'altered', `${what}: invariants ${violations[0]?.code}`);
    live.append('turn/start', { turn: 10_000 });
    live.append('turn/end', { turn: 10_000, reason: { kind: 'completed' } });
    await live.flush();
  } catch (error) {
    fail(t, PalimpsestError.isInstance(error) ? 'lost' : 'untyped', `${what}: ${String(error)}`);
  } finally {
    await live.close().catch(() => {});
  }
}

function typed(t: Tally, error: unknown, what: string): void {
  if (error === undefined) return;
  if (PalimpsestError.isInstance(error)) {
    t.detected++;
    add(t, `typed error ${(error as PalimpsestError).code}`);
  } else fail(t, 'untyped', `${what}: ${String(error)}`);
}

for (const backend of BACKENDS) {
  describe(`disk faults on a real file system: ${backend.name}`, () => {
    it.skipIf(!canMount)(
      'a file system that fills up loses no acknowledged event, and the session continues once space is freed',
      async () => {
        const t = tally('disk-faults', backend.name);
        for (let round = 0; round < count(4); round++) {
          // Room for a new SQLite database with its WAL and wal-index (about 180 KiB since
          // schema 4 added a table) and a few batches more: the disk fills while appending.
          const mount = smallFileSystem(FULL_DISK_KIB + round * 64) as string;
          const location = backend.location(mount);
          const store = await backend.open(location);
          const live = await openSession(store, 'full', { durability: { mode: 'each' } });
          const { acked, error } = await writeUntilFailure(live, round + 1);
          t.runs++;
          t.faults++;
          add(t, 'ENOSPC (tmpfs full)');
          if (error === undefined) fail(t, 'hangs', `round ${round}: the file system never filled`);
          typed(t, error, `round ${round}: the failed append`);
          await live.close().catch(() => {});
          // The same process, the same store: its own lock must not keep it out.
          try {
            const again = await openSession(store, 'full');
            await again.close();
            add(t, 'reopened by the same store while full');
          } catch (reopenError) {
            typed(t, reopenError, `round ${round}: reopen while full`);
            add(
              t,
              `reopen while full refused: ${(reopenError as PalimpsestError).code ?? 'untyped'}`,
            );
          }
          // Closing may checkpoint (SQLite), which a full disk can refuse too: typed, or a failure.
          await store.close().catch((closeError: unknown) => {
            typed(t, closeError, `round ${round}: close while full`);
            add(
              t,
              `close while full refused: ${(closeError as PalimpsestError).code ?? 'untyped'}`,
            );
          });
          execFileSync('mount', ['-o', `remount,size=${4096}k`, mount]);
          const reopened = await backend.open(location);
          await checkRecovered(t, reopened, 'full', acked, `round ${round} after space was freed`);
          await reopened.close();
        }
        console.log(`ENOSPC ${backend.name}: ${JSON.stringify(t)}`);
        expectClean(t);
      },
    );

    it.skipIf(!canMount)(
      'after a disk-full failure the process is not locked out by its own lock',
      async () => {
        const mount = smallFileSystem(FULL_DISK_KIB) as string;
        const location = backend.location(mount);
        const store = await backend.open(location);
        const live = await openSession(store, 'full', { durability: { mode: 'each' } });
        await writeUntilFailure(live, 1);
        await live.close().catch(() => {});
        await store.close().catch(() => {});
        execFileSync('mount', ['-o', 'remount,size=4096k', mount]);
        const reopened = await backend.open(location);
        try {
          const again = await openSession(reopened, 'full');
          await again.close();
        } finally {
          await reopened.close();
        }
      },
    );

    it.skipIf(!canMount)(
      'a read-only remount refuses writes with a typed error and loses nothing',
      async () => {
        const t = tally('disk-faults', backend.name);
        const mount = smallFileSystem(8192) as string;
        const location = backend.location(mount);
        const store = await backend.open(location);
        const live = await openSession(store, 'ro', { durability: { mode: 'each' } });
        let writes = 0;
        const { acked } = await writeUntilFailure(live, 7, () => ++writes > 30);
        await live.close();
        // Linux refuses a read-only remount while a file is open for writing (EBUSY): try it with
        // the store open, and if refused, between the writer's sessions (store closed).
        let remounted = spawnQuiet('mount', ['-o', 'remount,ro', mount]);
        add(
          t,
          remounted
            ? 'remounted read-only under an open store'
            : 'remount refused while the store is open (EBUSY)',
        );
        if (!remounted) {
          await store.close();
          remounted = spawnQuiet('mount', ['-o', 'remount,ro', mount]);
        }
        expect(remounted).toBe(true);
        t.runs++;
        t.faults++;
        add(t, 'EROFS (read-only remount)');
        const writer = await backend.open(location).catch((error: unknown) => error);
        if (writer instanceof Error || !('append' in (writer as object))) {
          typed(t, writer, 'open for writing on a read-only file system');
        } else {
          const refused = await openSession(writer as SessionStore, 'ro')
            .then(async (session) => {
              session.append('turn/start', { turn: 9_999 });
              await session.flush();
              return undefined;
            })
            .catch((error: unknown) => error);
          if (refused === undefined)
            fail(t, 'altered', 'an append on a read-only file system succeeded');
          typed(t, refused, 'append on a read-only file system');
          await (writer as SessionStore).close().catch(() => {});
        }
        // Reading still works, and returns what was acknowledged.
        try {
          const reader = await backend.open(location, { readOnly: true });
          const loaded = await reader.load('ro');
          t.acked += acked.size;
          for (const [seq, json] of acked) {
            if (JSON.stringify(loaded.events[seq]) !== json)
              fail(t, 'lost', `read-only load: seq ${seq}`);
          }
          add(t, 'read-only load on a read-only file system');
          await reader.close();
        } catch (error) {
          typed(t, error, 'read-only load on a read-only file system');
          add(
            t,
            `read-only load on a read-only file system refused: ${(error as PalimpsestError).code ?? 'untyped'}`,
          );
        }
        execFileSync('mount', ['-o', 'remount,rw', mount]);
        await store.close().catch(() => {});
        const reopened = await backend.open(location);
        await checkRecovered(t, reopened, 'ro', acked, 'after the remount read-write');
        await reopened.close();
        console.log(`EROFS ${backend.name}: ${JSON.stringify(t)}`);
        expectClean(t);
      },
    );
  });
}

describe('the disk-fault harness', () => {
  for (const backend of BACKENDS) {
    it(`catches a ${backend.name} store that loses the last acknowledged event after a fault`, async () => {
      const t = tally('disk-faults', backend.name);
      const dir = scratch(`disk-mutant-${backend.name}`);
      const location = backend.location(dir);
      const store = await backend.open(location);
      const live = await openSession(store, 'io', { durability: { mode: 'each' } });
      let writes = 0;
      const { acked } = await writeUntilFailure(live, 5, () => ++writes > 5);
      await live.close();
      await store.close();
      const reopened = mutantStore(await backend.open(location), 'drop-last-event');
      await checkRecovered(t, reopened, 'io', acked, 'mutant');
      await reopened.close();
      recordMutant('disk-faults', backend.name, t.lost + t.altered > 0);
      expect(t.lost + t.altered).toBeGreaterThan(0);
    });
  }
});

type FaultPoint = 'write' | 'short-write' | 'datasync';

/**
 * JSONL through the fault-injecting facade: after a random number of log writes or fdatasyncs,
 * one fails (EIO, ENOSPC or EROFS; a short write first for `short-write`). Returns the tally.
 */
async function facadeCases(
  cases: number,
  mutant?: 'keep-writing-after-fsync-error',
): Promise<Tally> {
  const t = tally('disk-faults', 'jsonl');
  const root = scratch('facade');
  const next = random(0xfa17);
  for (let n = 0; n < cases; n++) {
    const dir = join(root, `case-${n}`);
    mkdirSync(dir);
    const point: FaultPoint = (['write', 'short-write', 'datasync'] as const)[n % 3] as FaultPoint;
    const code = (['EIO', 'ENOSPC', 'EROFS'] as const)[Math.floor(next() * 3)] as string;
    let countdown = 1 + Math.floor(next() * 25);
    let armed = true;
    let injected = false;
    const isLog = (path: string) => path.endsWith('.jsonl');
    const fs = faultyFs({
      write: (path, length) => {
        if (!armed || !isLog(path) || point === 'datasync' || --countdown > 0) return undefined;
        if (point === 'short-write' && countdown === 0) return Math.max(1, Math.floor(length / 2));
        injected = true;
        armed = false;
        throw errno(code, `injected ${code}`);
      },
      datasync: (path) => {
        if (!armed || !isLog(path) || point !== 'datasync' || --countdown > 0) return;
        injected = true;
        armed = false;
        throw errno(code, `injected ${code} on fdatasync`);
      },
    });
    const store = await openJsonlStore(dir, { fs });
    const live = await openSession(store, 'io', { durability: { mode: 'each' } });
    const { acked, error } = await writeUntilFailure(live, n + 1, () => injected);
    t.runs++;
    if (injected) {
      t.faults++;
      add(t, `${code} on ${point}`);
      typed(t, error, `case ${n}: ${code} on ${point}`);
    }
    await live.close().catch(() => {});
    if (injected && point === 'datasync') {
      // After a failed fsync the store must refuse the session's appends until reopened.
      const probe = (await openJsonlStore(dir)).load('io');
      const length = (await probe).events.length;
      const accepted = await store
        .append('io', [rawEvent({ seq: length, time: 1, type: 'app/probe', data: {} })], {
          expectedSeq: length,
        })
        .then(() => true)
        .catch(() => false);
      if (accepted && mutant === undefined)
        fail(t, 'altered', `case ${n}: an append after a failed fdatasync was accepted`);
      if (accepted) add(t, 'appends accepted after a failed fdatasync');
    }
    await store.close();
    const reopened = await openJsonlStore(dir);
    await checkRecovered(t, reopened, 'io', acked, `case ${n} (${code} on ${point})`);
    await reopened.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return t;
}

describe('disk faults through the fault-injecting facade: jsonl', () => {
  it(`EIO, ENOSPC and EROFS on write, after a short write, and on fdatasync: ${FACADE_CASES} cases`, async () => {
    const t = await facadeCases(FACADE_CASES);
    console.log(`facade jsonl: ${JSON.stringify(t)}`);
    expectClean(t);
    expect(t.faults).toBeGreaterThan(FACADE_CASES / 2);
  });

  it('catches a session reopened over the damage a failed append left (a store that keeps a torn tail is caught)', async () => {
    // The mutant: an acknowledged-events check that forgives a partial batch left behind. The
    // harness counts torn bytes after a failed append as a broken promise, so planting one must
    // register: write half a batch by hand after the failure and reopen.
    const t = tally('disk-faults', 'jsonl');
    const dir = scratch('facade-mutant');
    const store = await openJsonlStore(dir);
    const live = await openSession(store, 'io', { durability: { mode: 'each' } });
    let writes = 0;
    const { acked } = await writeUntilFailure(live, 3, () => ++writes > 5);
    await live.close();
    await store.close();
    const { appendFileSync } = await import('node:fs');
    appendFileSync(join(dir, 'io.jsonl'), '{"seq":999,"time":1,"ty');
    const reopened = await openJsonlStore(dir);
    await checkRecovered(t, reopened, 'io', acked, 'planted partial batch');
    await reopened.close();
    const caught = t.altered > 0;
    recordMutant('disk-faults', 'jsonl', caught);
    expect(caught).toBe(true);
  });
});
