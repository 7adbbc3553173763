/**
 * The single-writer lock: exclusive between stores and processes, recovered from dead owners
 * (kill -9, reused pid, reboot), never taken from a live one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LockedError, type LockOwner } from '../../../src/store/contract/errors.js';
import { currentOwner } from '../../../src/store/contract/lock-owner.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { type FsFacade, openJsonlStore } from '../../../src/store/jsonl/index.js';
import { UNREADABLE_LOCK_STALE_MS } from '../../../src/store/jsonl/lock.js';
import { encodeSessionId } from '../../../src/store/jsonl/paths.js';
import { untilOutput } from '../child-output.js';
import { ManualLockClock } from '../manual-lock-clock.js';
import { header, notes, rejection, tempDir } from './helpers.js';

const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function lockPath(dir: string, id: string): string {
  return join(dir, `${encodeSessionId(id)}.lock`);
}

/** Field 22 of /proc/<pid>/stat, as lock-owner.ts reads it. */
async function processStart(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

async function spawnSleeper(): Promise<ChildProcess & { pid: number }> {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(child);
  await once(child, 'spawn');
  return child as ChildProcess & { pid: number };
}

async function writeOwner(
  dir: string,
  id: string,
  owner: LockOwner & { transient?: boolean },
): Promise<void> {
  await writeFile(lockPath(dir, id), JSON.stringify(owner), { mode: 0o600 });
}

const linux = process.platform === 'linux';

/** Whether a promise has settled yet, asked without waiting for it. */
function track(promise: Promise<unknown>): { readonly settled: () => boolean } {
  let settled = false;
  const done = (): void => {
    settled = true;
  };
  promise.then(done, done);
  return { settled: () => settled };
}

/**
 * Moves the clock on in small steps until `promise` settles, but only while the code under test
 * sleeps on the clock: while it reads files, time stands still, so a slow disk can never make
 * a young lock look stale. Its rejection, or `undefined`.
 */
async function settleOn(clock: ManualLockClock, promise: Promise<unknown>): Promise<unknown> {
  const state = track(promise);
  for (let step = 0; !state.settled(); step++) {
    if (step > 100_000) throw new Error('the promise never settled');
    if (clock.sleeping > 0) await clock.advance(10);
    else await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** Sets a lock file's mtime (its last refresh) to a time of the test's clock. */
async function refreshedAt(dir: string, id: string, timeMs: number): Promise<void> {
  await utimes(lockPath(dir, id), timeMs / 1000, timeMs / 1000);
}

describe('lock', () => {
  it('writes the owner record to a 0600 lock file and gives a second taker LockedError with that owner', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const lock = await store.lock('s1');
    expect(lock.owner).toMatchObject({ pid: process.pid, host: hostname() });
    const file = lockPath(dir, 's1');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(lock.owner);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await rejection(store.lock('s1'));
    expect(again).toBeInstanceOf(LockedError);
    expect((again as LockedError).owner.token).toBe(lock.owner.token);
    const other = await openJsonlStore(dir);
    const fromOther = await rejection(other.lock('s1'));
    expect(fromOther).toBeInstanceOf(LockedError);
    expect((fromOther as LockedError).owner).toEqual(lock.owner);
    await store.close();
    await other.close();
  });

  it('leaves no temp files behind and needs no session to exist', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const lock = await store.lock('nothing-yet');
    expect(await readdir(dir)).toEqual(['nothing-yet.lock']);
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
    await store.close();
  });

  it('releases idempotently, and an old handle never removes a newer lock', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir);
    const first = await store.lock('s1');
    await first.release();
    await first.release();
    const second = await store.lock('s1');
    await first.release();
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe(second.owner.token);
    await second.release();
    expect(await readdir(dir)).toEqual([]);
    await store.close();
  });

  it.runIf(linux)('takes over the lock of a dead pid', async () => {
    const dir = await tempDir();
    const child = spawn('true');
    await once(child, 'exit');
    await writeOwner(dir, 's1', {
      pid: child.pid as number,
      host: hostname(),
      since: Date.now(),
      token: 'dead',
    });
    const store = await openJsonlStore(dir);
    const lock = await store.lock('s1');
    expect(lock.owner.pid).toBe(process.pid);
    expect(await readdir(dir)).toEqual(['s1.lock']); // the stale record is gone, not set aside
    await store.close();
  });

  it.runIf(linux)(
    'takes over a lock whose pid now belongs to a process started at another time',
    async () => {
      const dir = await tempDir();
      const start = await processStart(process.pid);
      await writeOwner(dir, 's1', {
        pid: process.pid,
        host: hostname(),
        since: 1,
        token: 'reused',
        processStart: start - 1,
      });
      const store = await openJsonlStore(dir);
      await store.lock('s1');
      await store.close();
    },
  );

  it('takes over a lock from before a reboot (another boot id)', async () => {
    const dir = await tempDir();
    const me = currentOwner();
    if (me.bootId === undefined) return; // no boot id on this platform
    await writeOwner(dir, 's1', { ...me, token: 'old-boot', bootId: 'another-boot' });
    const store = await openJsonlStore(dir);
    await store.lock('s1');
    await store.close();
  });

  it.runIf(linux)('refuses while another live process holds the lock', async () => {
    const dir = await tempDir();
    const sleeper = await spawnSleeper();
    const owner: LockOwner = {
      pid: sleeper.pid,
      host: hostname(),
      since: Date.now(),
      token: 'sleeper',
      processStart: await processStart(sleeper.pid),
      ...(currentOwner().bootId === undefined ? {} : { bootId: currentOwner().bootId as string }),
    };
    await writeOwner(dir, 's1', owner);
    // A lock() holder is not waited for: on a clock that never moves, a wait would never end.
    const store = await openJsonlStore(dir, { lockClock: new ManualLockClock() });
    const error = await rejection(store.lock('s1'));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).owner).toEqual(owner);
    await store.create(header('s1'));
    // An append from a process that does not hold the lock is refused too.
    expect(await rejection(store.append('s1', notes(0, 1), { expectedSeq: 0 }))).toBeInstanceOf(
      LockedError,
    );
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8'))).toEqual(owner);
    sleeper.kill('SIGKILL');
    await once(sleeper, 'exit');
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    await store.close();
  });

  it.runIf(linux)('waits for a live process that holds the lock for one append only', async () => {
    const dir = await tempDir();
    const sleeper = await spawnSleeper();
    const owner = {
      pid: sleeper.pid,
      host: hostname(),
      since: Date.now(),
      token: 't',
      transient: true,
    };
    const clock = new ManualLockClock();
    const store = await openJsonlStore(dir, { lockWaitMs: 5000, lockClock: clock });
    await store.create(header('s1'));
    await writeOwner(dir, 's1', owner);
    const append = store.append('s1', notes(0, 1), { expectedSeq: 0 });
    const appended = track(append);
    await clock.advance(1000);
    expect(appended.settled()).toBe(false); // still waiting: the holder has not released
    const { unlink } = await import('node:fs/promises');
    await unlink(lockPath(dir, 's1'));
    expect(await settleOn(clock, append)).toBeUndefined();
    expect((await store.load('s1')).events).toEqual(notes(0, 1));
    // A holder that never releases: the wait ends, with LockedError, once the clock passes it.
    await writeOwner(dir, 's1', owner);
    const impatient = await openJsonlStore(dir, { lockWaitMs: 2000, lockClock: clock });
    const started = clock.now();
    const refused = impatient.append('s1', notes(1, 1), { expectedSeq: 1 });
    const given = track(refused);
    await clock.advance(1990);
    expect(given.settled()).toBe(false);
    expect(await settleOn(clock, refused)).toBeInstanceOf(LockedError);
    expect(clock.now() - started).toBeGreaterThanOrEqual(2000);
    await store.close();
    await impatient.close();
  });

  it('treats an unreadable lock as held while young and as stale once older than 10 s', async () => {
    const dir = await tempDir();
    const clock = new ManualLockClock();
    await writeFile(lockPath(dir, 's1'), '');
    await refreshedAt(dir, 's1', clock.now());
    const store = await openJsonlStore(dir, { lockWaitMs: 20, lockClock: clock });
    // Waited for (it may be a lock being written), then refused once the wait is over.
    expect(await settleOn(clock, store.lock('s1'))).toBeInstanceOf(LockedError);
    await clock.advance(UNREADABLE_LOCK_STALE_MS);
    const lock = await store.lock('s1');
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe(lock.owner.token);
    await store.close();
  });

  it.runIf(linux)(
    'puts back a live lock that replaced the stale one during takeover and reports it',
    async () => {
      const dir = await tempDir();
      const sleeper = await spawnSleeper();
      const live: LockOwner = {
        pid: sleeper.pid,
        host: hostname(),
        since: Date.now(),
        token: 'live',
        processStart: await processStart(sleeper.pid),
      };
      await writeOwner(dir, 's1', { pid: 0x7ffffff0, host: hostname(), since: 1, token: 'dead' });
      const fs: FsFacade = {
        ...nodeFs,
        rename: async (from, to) => {
          // Another taker replaces the stale lock between our check and our rename.
          await writeOwner(dir, 's1', live);
          await rename(from, to);
        },
      };
      const store = await openJsonlStore(dir, { fs });
      const error = await rejection(store.lock('s1'));
      expect(error).toBeInstanceOf(LockedError);
      expect((error as LockedError).owner.token).toBe('live');
      expect(await readdir(dir)).toEqual(['s1.lock']);
      expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe('live');
      await store.close();
    },
  );

  it('takes a lock released just after its link found the name taken (not a dangling link)', async () => {
    const dir = await tempDir();
    await writeOwner(dir, 's1', { pid: process.pid, host: hostname(), since: 1, token: 'x' });
    let raced = false;
    const fs: FsFacade = {
      ...nodeFs,
      stat: async (path) => {
        // The holder releases between our link's EEXIST and the look at what took the name.
        if (!raced && path.endsWith('s1.lock')) {
          raced = true;
          await nodeFs.unlink(path);
        }
        return nodeFs.stat(path);
      },
    };
    const store = await openJsonlStore(dir, { fs });
    const lock = await store.lock('s1');
    expect(raced).toBe(true);
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe(lock.owner.token);
    await store.close();
  });

  it("leaves a new directory that reuses a deleted one's inode free of the locks held in the old one", async () => {
    const dir = await tempDir();
    const old = await openJsonlStore(dir);
    await old.lock('s1'); // never released: the directory goes with its lock still held
    await rm(dir, { recursive: true });
    // ext4 hands the freed inode number to the next directory made, as it did in CI.
    await mkdir(dir);
    const store = await openJsonlStore(dir);
    const lock = await store.lock('s1');
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe(lock.owner.token);
    await store.close();
    await old.close();
  });

  it('calls the lock:after-acquire failpoint and releases the lock if it throws', async () => {
    const dir = await tempDir();
    const seen: string[] = [];
    const store = await openJsonlStore(dir, {
      failpoint: (name) => {
        seen.push(name);
        if (name === 'lock:after-acquire') throw new Error('injected');
      },
    });
    expect(await rejection(store.lock('s1'))).toMatchObject({ code: 'STORAGE' });
    expect(seen).toEqual(['lock:after-acquire']);
    expect(await readdir(dir)).toEqual([]);
    await store.close();
  });

  it('respects a lock from another host while its file is refreshed, and takes it over once stale', async () => {
    const dir = await tempDir();
    const far = { pid: 1, host: `not-${hostname()}`, since: 1, token: 'far', heartbeatMs: 5000 };
    await writeOwner(dir, 's1', far);
    const clock = new ManualLockClock();
    await refreshedAt(dir, 's1', clock.now());
    const store = await openJsonlStore(dir, { lockClock: clock });
    // Taken long ago, but its mtime (the heartbeat) is fresh: live.
    const error = await rejection(store.lock('s1'));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).holder?.basis).toBe('fresh');
    expect((error as Error).message).toContain(`locked by pid 1 on not-${hostname()} since 1970`);
    expect((error as Error).message).toContain(
      'heartbeats every 5.0 s, last refreshed 0.0 s ago; it is taken over once not refreshed for 30 s',
    );
    // Not refreshed for exactly the bound (30 s): still respected, its age measured by the clock.
    await clock.advance(30_000);
    const atBound = await rejection(store.lock('s1'));
    expect((atBound as LockedError).holder).toMatchObject({ basis: 'fresh', staleMs: 30_000 });
    expect((atBound as Error).message).toContain('last refreshed 30 s ago');
    // Past the bound: a dead container's lock, taken over.
    await clock.advance(1);
    const lock = await store.lock('s1');
    expect(lock.owner.pid).toBe(process.pid);
    expect(lock.owner.heartbeatMs).toBe(5000);
    expect(lock.owner.since).toBe(clock.now());
    await store.close();
  });

  it('stops appending with LockedError once its heartbeat finds the lock file replaced', async () => {
    const dir = await tempDir();
    const clock = new ManualLockClock();
    const store = await openJsonlStore(dir, {
      lockHeartbeatMs: 20,
      lockStaleMs: 40,
      lockClock: clock,
    });
    await store.create(header('s1'));
    const lock = await store.lock('s1');
    await store.append('s1', notes(0, 1), { expectedSeq: 0 });
    // Another host judged this writer stale (it stalled past the bound) and took the lock.
    const taker = { pid: 1, host: `not-${hostname()}`, since: clock.now(), token: 'taker' };
    await writeOwner(dir, 's1', taker);
    // The next heartbeat finds the file replaced, and stops.
    for (let step = 0; clock.heartbeats > 0; step++) {
      if (step > 1000) throw new Error('the heartbeat never noticed the lock was taken');
      await clock.advance(20);
    }
    const error = await rejection(store.append('s1', notes(1, 1), { expectedSeq: 1 }));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).owner.token).toBe('taker');
    expect((await store.load('s1')).events).toEqual(notes(0, 1));
    await lock.release();
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe('taker');
    await store.close();
  });

  it('refreshes a held lock when its heartbeat falls due on the clock, and stops on release', async () => {
    const dir = await tempDir();
    const clock = new ManualLockClock();
    const start = clock.now();
    const store = await openJsonlStore(dir, { lockHeartbeatMs: 1000, lockClock: clock });
    try {
      const lock = await store.lock('s1');
      expect(lock.owner.since).toBe(start);
      expect(clock.heartbeats).toBe(1);
      let previous = (await stat(lockPath(dir, 's1'))).mtimeMs;
      for (const beat of [1, 2, 3]) {
        // The refresh (open, check the token, touch) runs on the file system between the steps;
        // a beat that falls due while the last one still runs is skipped.
        let refreshed = previous;
        for (let step = 0; refreshed === previous; step++) {
          if (step > 1000) throw new Error(`heartbeat ${beat} never refreshed the lock file`);
          await clock.advance(1000);
          refreshed = (await stat(lockPath(dir, 's1'))).mtimeMs;
        }
        // The mtime written is the clock's time of a beat.
        expect((refreshed - start) % 1000).toBe(0);
        expect(refreshed).toBeLessThanOrEqual(clock.now());
        previous = refreshed;
      }
      await lock.release();
      expect(clock.heartbeats).toBe(0);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('takes over its own lock when releasing it failed (a full disk refusing the unlink)', async () => {
    const dir = await tempDir();
    let full = false;
    const fs: FsFacade = {
      ...nodeFs,
      unlink: async (path) => {
        if (full && path.endsWith('.lock')) {
          throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        }
        return nodeFs.unlink(path);
      },
    };
    const store = await openJsonlStore(dir, { fs });
    const first = await store.lock('s1');
    full = true;
    expect(await rejection(first.release())).toMatchObject({ code: 'STORAGE' });
    full = false;
    // The file still names this live process, but no lock of this process holds it any more.
    expect(JSON.parse(await readFile(lockPath(dir, 's1'), 'utf8')).token).toBe(first.owner.token);
    const second = await store.lock('s1');
    expect(second.owner.token).not.toBe(first.owner.token);
    // Another process's view is unchanged: this process holds the session, once.
    const other = await openJsonlStore(dir);
    expect(await rejection(other.lock('s1'))).toBeInstanceOf(LockedError);
    await store.close();
    await other.close();
  });

  it('recovers the lock of a writer process killed with kill -9', async () => {
    const dir = await tempDir();
    const script = fileURLToPath(new URL('./fixtures/hold-lock.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, 's1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await untilOutput(child, 'LOCKED');
    const store = await openJsonlStore(dir);
    const held = await rejection(store.lock('s1'));
    expect((held as LockedError).owner.pid).toBe(child.pid);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const lock = await store.lock('s1');
    expect(lock.owner.pid).toBe(process.pid);
    await store.close();
  }, 20_000);
});
