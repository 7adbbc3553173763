/**
 * Locks expire by heartbeat, for every backend with a durable lock: a holder in a real child
 * process refreshes its lock; a holder on another host (a child in its own UTS namespace, with
 * its own hostname, as a container has) is respected while it refreshes and taken over once it
 * was killed and the stale bound passed; the heartbeat never keeps a process alive.
 *
 * These run real processes, which an injected clock cannot reach: they check what happens, never
 * how fast (no duration, rate or timing bound is asserted; the deterministic timing tests of the
 * lock use a `ManualLockClock`, in `jsonl/lock.test.ts` and each backend's lock tests).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LockedError, openStore, type SessionStore } from '../../src/store/index.js';
import { untilOutput } from './child-output.js';

const HOLDER = fileURLToPath(new URL('./fixtures/lock-holder.ts', import.meta.url));
const BEAT_MS = 200;
const STALE_MS = 1000;
const timing = { lockHeartbeatMs: BEAT_MS, lockStaleMs: STALE_MS };

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Whether this machine lets a child have its own hostname (root, with UTS namespaces). */
function canUnshare(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = spawn('unshare', ['--uts', 'true']);
  return probe.pid !== undefined;
}
const foreignHosts = canUnshare();

function storeUrl(backend: 'jsonl' | 'sqlite'): string {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-heartbeat-'));
  dirs.push(dir);
  return backend === 'jsonl' ? `jsonl:${join(dir, 'sessions')}` : `sqlite:${join(dir, 's.db')}`;
}

/** Starts a lock holder, under another hostname when `foreign`; resolves once it holds the lock. */
async function holder(
  url: string,
  options: { foreign?: boolean; exit?: boolean } = {},
): Promise<{ child: ChildProcess; host: string }> {
  const node = [process.execPath, '--import', 'tsx', HOLDER, url, 's', String(BEAT_MS)];
  if (options.exit === true) node.push('--exit');
  const host = `elsewhere-${process.pid}`;
  const child =
    options.foreign === true
      ? spawn('unshare', ['--uts', 'sh', '-c', `hostname ${host} && exec "$@"`, 'sh', ...node], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
      : spawn(node[0] as string, node.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const output = await untilOutput(child, '\n'); // `LOCKED <hostname>`, a line
  return { child, host: /LOCKED (\S+)/.exec(output)?.[1] ?? '' };
}

async function open(url: string): Promise<SessionStore> {
  return openStore(url, { jsonl: timing, sqlite: timing });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of ['jsonl', 'sqlite'] as const) {
  describe(`lock heartbeat: ${backend}`, () => {
    it.runIf(foreignHosts)(
      'respects a lock held from another host while it heartbeats, and takes it over once its holder was killed and the bound passed',
      async () => {
        const url = storeUrl(backend);
        const { child, host } = await holder(url, { foreign: true });
        expect(host).not.toBe(hostname());
        const store = await open(url);
        // Longer than the stale bound: only the heartbeat keeps the lock live.
        await sleep(STALE_MS + 2 * BEAT_MS);
        const held = await rejection(store.lock('s'));
        expect(held).toBeInstanceOf(LockedError);
        const locked = held as LockedError;
        expect(locked.owner).toMatchObject({ pid: expect.any(Number), host, heartbeatMs: BEAT_MS });
        expect(locked.holder?.basis).toBe('fresh');
        expect(locked.message).toContain(`on ${host} since `);
        expect(locked.message).toMatch(/heartbeats every 0\.2 s, last refreshed \d+\.\d s ago/);
        // An OOM kill in a container: no release, and a pid this host cannot check.
        child.kill('SIGKILL');
        await once(child, 'exit');
        // Respected while its last refresh is fresh, taken over once it is stale.
        let lock: Awaited<ReturnType<SessionStore['lock']>> | undefined;
        for (let attempt = 0; lock === undefined; attempt++) {
          if (attempt > 400) throw new Error("the killed holder's lock was never taken over");
          try {
            lock = await store.lock('s');
          } catch (error) {
            if (!LockedError.isInstance(error)) throw error;
            expect(error.holder?.basis).toBe('fresh');
            expect(error.owner.host).toBe(host);
            await sleep(50);
          }
        }
        expect(lock.owner.pid).toBe(process.pid);
        await store.close();
      },
      20_000,
    );

    it('refreshes a held lock, stops when released, and never keeps a process alive', async () => {
      const url = storeUrl(backend);
      // The holder ends its script with the lock held: it must exit on its own.
      const { child } = await holder(url, { exit: true });
      const [code] = child.exitCode === null ? await once(child, 'exit') : [child.exitCode];
      expect(code).toBe(0);
      const store = await open(url);
      const lock = await store.lock('s');
      expect(lock.owner.heartbeatMs).toBe(BEAT_MS);
      const other = await open(url);
      const refreshedAt = async (): Promise<number> =>
        ((await rejection(other.lock('s'))) as LockedError).holder?.refreshedAt ?? 0;
      const first = await refreshedAt();
      // Time passes; the holder refreshes its lock at least once.
      let later = first;
      for (let attempt = 0; later <= first; attempt++) {
        if (attempt > 100) throw new Error('the held lock was never refreshed');
        await sleep(BEAT_MS);
        later = await refreshedAt();
      }
      expect(later).toBeGreaterThan(first);
      await lock.release();
      await sleep(2 * BEAT_MS);
      const again = await other.lock('s');
      await again.release();
      await store.close();
      await other.close();
    }, 20_000);

    it('unlock refuses a holder alive on this host, names it, and with force removes it', async () => {
      const url = storeUrl(backend);
      const { child } = await holder(url);
      const store = await open(url);
      const refused = await rejection(store.unlock('s'));
      expect(refused).toBeInstanceOf(LockedError);
      expect((refused as LockedError).owner.pid).toBe(child.pid);
      expect((refused as LockedError).message).toContain(`pid ${child.pid} on ${hostname()}`);
      expect((refused as LockedError).message).toContain('running on this host');
      const forced = await store.unlock('s', { force: true });
      expect(forced).toMatchObject({ removed: true, wasLive: true, owner: { pid: child.pid } });
      expect(await store.unlock('s')).toEqual({ removed: false });
      await (await store.lock('s')).release();
      await store.close();
    }, 20_000);

    it('unlock removes the lock of a writer killed with kill -9, without force', async () => {
      const url = storeUrl(backend);
      const { child } = await holder(url);
      child.kill('SIGKILL');
      await once(child, 'exit');
      const store = await open(url);
      expect(await store.unlock('s')).toMatchObject({
        removed: true,
        wasLive: false,
        owner: { pid: child.pid },
      });
      await store.close();
    }, 20_000);
  });
}
