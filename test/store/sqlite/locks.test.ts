import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  LeaseLostError,
  LockedError,
  type LockOwner,
  type SessionStore,
} from '../../../src/store/index.js';
import { openSqliteStore, type SqliteStoreOptions } from '../../../src/store/sqlite/index.js';
import { ManualLockClock } from '../manual-lock-clock.js';
import { events, header, rejection, useTempDir, withRaw } from './helpers.js';

const tempDir = useTempDir();
const opened: SessionStore[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

async function two(
  options: SqliteStoreOptions = {},
): Promise<{ file: string; a: SessionStore; b: SessionStore }> {
  const file = join(tempDir(), 'sessions.db');
  const a = await openSqliteStore(file, options);
  const b = await openSqliteStore(file, options);
  opened.push(a, b);
  return { file, a, b };
}

/** Writes a lock row as another process would have (with its heartbeat's time, if any). */
async function plantLock(
  file: string,
  id: string,
  owner: LockOwner & { readonly refreshedAt?: number },
): Promise<void> {
  await withRaw(file, (db) => {
    db.prepare('INSERT OR REPLACE INTO locks (session_id, owner) VALUES (?, ?)').run(
      id,
      JSON.stringify(owner),
    );
  });
}

async function lockRows(file: string): Promise<{ session_id: string; owner: string }[]> {
  return withRaw(file, (db) => db.prepare('SELECT session_id, owner FROM locks').all()) as Promise<
    { session_id: string; owner: string }[]
  >;
}

function deadPid(): number {
  const child = spawnSync('true');
  expect(child.status).toBe(0);
  return child.pid as number;
}

describe('the single-writer lock', () => {
  it('refuses a second store instance with LockedError naming the holder, and frees on release', async () => {
    const { a, b } = await two();
    const lock = await a.lock('s');
    expect(lock.owner).toMatchObject({ pid: process.pid, host: hostname() });
    const error = await rejection(b.lock('s'));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).owner).toEqual(lock.owner);
    expect(await rejection(a.lock('s'))).toBeInstanceOf(LockedError);
    await lock.release();
    await lock.release();
    const again = await b.lock('s');
    expect(again.owner.token).not.toBe(lock.owner.token);
  });

  it('does not let a released lock remove a later holder', async () => {
    const { file, a, b } = await two();
    const first = await a.lock('s');
    await first.release();
    const second = await b.lock('s');
    await first.release();
    expect(await lockRows(file)).toEqual([
      { session_id: 's', owner: JSON.stringify(second.owner) },
    ]);
  });

  it('takes over a stale lock whose owner process is dead', async () => {
    const { file, a } = await two();
    await plantLock(file, 's', { pid: deadPid(), host: hostname(), since: 1, token: 'dead' });
    const lock = await a.lock('s');
    expect(lock.owner.pid).toBe(process.pid);
    expect(await lockRows(file)).toEqual([{ session_id: 's', owner: JSON.stringify(lock.owner) }]);
  });

  it('takes over a lock whose pid was reused by a process that started later', async () => {
    const { file, a } = await two();
    const sleeper = spawn('sleep', ['30']);
    children.push(sleeper);
    await plantLock(file, 's', {
      pid: sleeper.pid as number,
      host: hostname(),
      since: 1,
      token: 'reused',
      processStart: 1,
    });
    expect((await a.lock('s')).owner.pid).toBe(process.pid);
  });

  it('takes over an unreadable lock row', async () => {
    const { file, a } = await two();
    await withRaw(file, (db) => {
      db.prepare("INSERT INTO locks (session_id, owner) VALUES ('s', '{not json')").run();
    });
    expect((await a.lock('s')).owner.pid).toBe(process.pid);
  });

  it('refuses a lock held by a live foreign process', async () => {
    const { file, a } = await two();
    const sleeper = spawn('sleep', ['30']);
    children.push(sleeper);
    const owner = { pid: sleeper.pid as number, host: hostname(), since: 1, token: 'live' };
    await plantLock(file, 's', owner);
    const error = await rejection(a.lock('s'));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).owner).toEqual(owner);
    expect((error as Error).message).toContain(`pid ${owner.pid}`);
    sleeper.kill('SIGKILL');
    await new Promise((resolve) => sleeper.once('exit', resolve));
    expect((await a.lock('s')).owner.pid).toBe(process.pid);
  });

  it('respects a lock from another host until the clock passes lockStaleMs since its last refresh, then takes it over', async () => {
    const clock = new ManualLockClock();
    const { file, a } = await two({ lockClock: clock });
    const far = { pid: deadPid(), host: `not-${hostname()}`, token: 'far', heartbeatMs: 5000 };
    // Taken long before the bound, refreshed a second ago: live.
    await plantLock(file, 's', {
      ...far,
      since: clock.now() - 60_000,
      refreshedAt: clock.now() - 1000,
    });
    const error = await rejection(a.lock('s'));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).holder).toEqual({
      basis: 'fresh',
      refreshedAt: clock.now() - 1000,
      staleMs: 30_000,
      judgedAt: clock.now(),
    });
    expect((error as Error).message).toMatch(
      /locked by pid \d+ on not-.* since .*; it heartbeats every 5\.0 s, last refreshed .* ago; it is taken over once not refreshed for 30 s/,
    );
    // Exactly at the bound it is still live; a millisecond past it (an OOM-killed container
    // that never refreshes again), it is stale.
    await clock.advance(29_000);
    expect(await rejection(a.lock('s'))).toBeInstanceOf(LockedError);
    await clock.advance(1);
    const lock = await a.lock('s');
    expect(lock.owner).toMatchObject({ pid: process.pid, since: clock.now() });
    expect(await lockRows(file)).toEqual([{ session_id: 's', owner: JSON.stringify(lock.owner) }]);
  });

  it('refreshes the lock row of a held lock each heartbeat of its clock, and stops on release', async () => {
    const clock = new ManualLockClock();
    const file = join(tempDir(), 'sessions.db');
    const store = await openSqliteStore(file, {
      lockHeartbeatMs: 50,
      lockStaleMs: 100,
      lockClock: clock,
    });
    opened.push(store);
    const lock = await store.lock('s');
    expect(clock.heartbeats).toBe(1);
    const stored = async (): Promise<{ token: string; refreshedAt?: number }> => {
      const [row] = await lockRows(file);
      return JSON.parse(row?.owner ?? '{}') as { token: string; refreshedAt?: number };
    };
    expect(await stored()).toEqual(JSON.parse(JSON.stringify(lock.owner)));
    await clock.advance(49);
    expect((await stored()).refreshedAt).toBeUndefined();
    // Beat after beat: each refresh writes the clock's time into the row.
    await clock.advance(1);
    expect(await stored()).toMatchObject({ token: lock.owner.token, refreshedAt: clock.now() });
    await clock.advance(50);
    expect(await stored()).toMatchObject({ token: lock.owner.token, refreshedAt: clock.now() });
    await lock.release();
    expect(clock.heartbeats).toBe(0);
    await clock.advance(500);
    expect(await lockRows(file)).toEqual([]);
  });

  it('stops the heartbeats of the locks a store holds when it closes', async () => {
    const clock = new ManualLockClock();
    const { a } = await two({ lockClock: clock });
    await a.lock('s');
    await a.lock('t');
    expect(clock.heartbeats).toBe(2);
    await a.close();
    expect(clock.heartbeats).toBe(0);
  });

  it('refuses lock timing that would lose a live writer its lock', async () => {
    const file = join(tempDir(), 'sessions.db');
    expect(
      await rejection(openSqliteStore(file, { lockHeartbeatMs: 50, lockStaleMs: 60 })),
    ).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('allows locking a session that does not exist yet', async () => {
    const { a } = await two();
    const lock = await a.lock('future');
    await a.create(header('future'));
    await lock.release();
  });

  it('releases the locks a store holds when it closes', async () => {
    const { file, a, b } = await two();
    await a.lock('s');
    await a.lock('t');
    await a.close();
    expect(await lockRows(file)).toEqual([]);
    await b.lock('s');
  });
});

describe('fencing: appends and the lock', () => {
  it('fences off a writer whose heartbeat finds its row taken over, and stops that heartbeat', async () => {
    const clock = new ManualLockClock();
    const { file, a, b } = await two({ lockClock: clock });
    await a.create(header('s'));
    await a.lock('s');
    await b.unlock('s', { force: true });
    const taken = await b.lock('s');
    expect(clock.heartbeats).toBe(2);
    // A's next beat names its own row's text, finds another, and counts the lock as lost.
    await clock.advance(5000);
    expect(clock.heartbeats).toBe(1);
    const [row] = await lockRows(file);
    expect(JSON.parse(row?.owner ?? '{}')).toMatchObject({
      token: taken.owner.token,
      refreshedAt: clock.now(),
    });
    const refused = await rejection(a.append('s', events(0, 1), { expectedSeq: 0 }));
    expect(refused).toBeInstanceOf(LeaseLostError);
    expect((refused as LeaseLostError).holder?.token).toBe(taken.owner.token);
    await b.append('s', events(0, 1), { expectedSeq: 0 });
    expect((await a.load('s')).events).toHaveLength(1);
  });

  it('refuses the append of a writer whose lock was taken over, writing nothing, while the new holder appends', async () => {
    const { a, b } = await two();
    await a.create(header('s'));
    await a.lock('s');
    await a.append('s', events(0, 2), { expectedSeq: 0 });
    await b.unlock('s', { force: true });
    await b.lock('s');
    const refused = await rejection(a.append('s', events(2, 2), { expectedSeq: 2 }));
    expect(refused).toBeInstanceOf(LeaseLostError);
    expect((refused as LeaseLostError).holder?.pid).toBe(process.pid);
    expect((await b.load('s')).events).toHaveLength(2);
    await b.append('s', events(2, 1), { expectedSeq: 2 });
    expect((await a.load('s')).events).toHaveLength(3);
    // Its seq is stale now too: it still hears that its lock is gone, not of a conflict.
    expect(await rejection(a.append('s', events(2, 2), { expectedSeq: 2 }))).toBeInstanceOf(
      LeaseLostError,
    );
  });

  it('keeps a writer whose lock was forced away fenced off until it locks the session again', async () => {
    const { a, b } = await two();
    await a.create(header('s'));
    await a.lock('s');
    await b.unlock('s', { force: true });
    expect(await rejection(a.append('s', events(0, 1), { expectedSeq: 0 }))).toBeInstanceOf(
      LeaseLostError,
    );
    expect(await rejection(a.append('s', events(0, 1), { expectedSeq: 0 }))).toBeInstanceOf(
      LeaseLostError,
    );
    await a.lock('s');
    await a.append('s', events(0, 1), { expectedSeq: 0 });
    expect((await b.load('s')).events).toHaveLength(1);
  });

  it('refuses the append of a store that does not hold the lock while a live writer does, and allows it once released', async () => {
    const { a, b } = await two();
    await a.create(header('s'));
    const lock = await a.lock('s');
    const refused = await rejection(b.append('s', events(0, 1), { expectedSeq: 0 }));
    expect(refused).toBeInstanceOf(LockedError);
    expect((refused as LockedError).owner.token).toBe(lock.owner.token);
    expect((await a.load('s')).events).toHaveLength(0);
    await lock.release();
    await b.append('s', events(0, 1), { expectedSeq: 0 });
    expect((await a.load('s')).events).toHaveLength(1);
  });
});

describe('delete and the lock', () => {
  it('refuses to delete a session a live writer holds, and deletes it with its stale lock row', async () => {
    const { file, a, b } = await two();
    await a.create(header('s'));
    const lock = await a.lock('s');
    expect(await rejection(b.delete('s'))).toBeInstanceOf(LockedError);
    expect(await rejection(a.delete('s'))).toBeInstanceOf(LockedError);
    await lock.release();
    await plantLock(file, 's', { pid: deadPid(), host: hostname(), since: 1, token: 'dead' });
    await b.delete('s');
    expect(await lockRows(file)).toEqual([]);
  });
});

describe('a writer killed with SIGKILL', () => {
  it('leaves every acknowledged batch and a lock the next writer recovers', async () => {
    const file = join(tempDir(), 'sessions.db');
    const module = resolve(import.meta.dirname, '../../../src/store/sqlite/index.ts');
    const script = `
      import { openSqliteStore } from ${JSON.stringify(module)};
      const store = await openSqliteStore(${JSON.stringify(file)});
      await store.lock('s');
      await store.create({ version: 1, id: 's', createdAt: 1 });
      for (let seq = 0; ; seq++) {
        await store.append('s', [{ seq, time: seq, type: 'app/tick', data: { seq } }], { expectedSeq: seq });
        process.stdout.write('ACK ' + seq + '\\n');
      }`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    let acked = -1;
    await new Promise<void>((done, fail) => {
      child.once('exit', (code) => fail(new Error(`writer exited early with ${code}`)));
      child.stdout?.on('data', (chunk: Buffer) => {
        for (const match of chunk.toString().matchAll(/ACK (\d+)/g)) acked = Number(match[1]);
        if (acked >= 50) {
          child.removeAllListeners('exit');
          child.once('exit', () => done());
          child.kill('SIGKILL');
        }
      });
    });
    const store = await openSqliteStore(file);
    opened.push(store);
    const loaded = await store.load('s');
    expect(loaded.events.length).toBeGreaterThan(acked);
    expect(loaded.events.map((event) => event.seq)).toEqual(loaded.events.map((_, i) => i));
    const lock = await store.lock('s');
    expect(lock.owner.pid).toBe(process.pid);
    await store.append('s', events(loaded.events.length, 2), { expectedSeq: loaded.events.length });
  });
});
