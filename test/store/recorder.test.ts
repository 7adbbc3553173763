/**
 * The recorder's group commit: batching window, one write at a time, the flush barrier, close.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type SessionEvent } from '../../src/core/index.js';
import {
  type AppendOptions,
  ClosedError,
  MemoryStore,
  openSession,
  type SessionStore,
  StoreBusyError,
} from '../../src/store/index.js';

/** A memory store whose appends take `delayMs` and that records every batch it wrote. */
function slowStore(delayMs: number): {
  store: SessionStore;
  batches: number[];
  maxInFlight: () => number;
} {
  const inner = new MemoryStore();
  const batches: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'append') {
        return async (id: string, events: readonly SessionEvent[], options: AppendOptions) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          try {
            await target.append(id, events, options);
            batches.push(events.length);
          } finally {
            inFlight--;
          }
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  return { store, batches, maxInFlight: () => maxInFlight };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Recorder', () => {
  it('keeps a batch that met contention queued and the writer usable, and writes it on the next flush', async () => {
    const inner = new MemoryStore();
    let busy = false;
    const store = new Proxy(inner, {
      get(target, property) {
        if (property === 'append') {
          return async (id: string, events: readonly SessionEvent[], options: AppendOptions) => {
            if (busy)
              throw new StoreBusyError(target.location, `append to session '${id}'`, 30_000);
            await target.append(id, events, options);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function'
          ? (value as (...args: unknown[]) => unknown).bind(target)
          : value;
      },
    });
    const live = await openSession(store, 's', { durability: { mode: 'each' } });
    live.append('app/tick', { i: 0 });
    await live.flush();
    busy = true;
    live.append('app/tick', { i: 1 });
    const error = await live.flush().then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(StoreBusyError);
    expect(error).toMatchObject({ code: 'STORE_BUSY', retryable: true });
    // Not poisoned: appends are still admitted, and queue behind the batch that waits.
    live.append('app/tick', { i: 2 });
    expect(await live.flush().catch((reason: unknown) => reason)).toBeInstanceOf(StoreBusyError);
    busy = false;
    await live.flush();
    expect((await inner.load('s')).events.map((event) => event.data)).toEqual([
      { i: 0 },
      { i: 1 },
      { i: 2 },
    ]);
    await live.close();
  });

  it('writes nothing before the window ends, then everything admitted in it as one batch', async () => {
    const { store, batches } = slowStore(0);
    const live = await openSession(store, 's', { durability: { mode: 'group', windowMs: 40 } });
    for (let i = 0; i < 10; i++) live.append('app/tick', { i });
    await sleep(10);
    expect(batches).toEqual([]);
    await sleep(80);
    expect(batches).toEqual([10]);
    await live.close();
  });

  it('never has two writes in flight, and groups what arrives during a write into the next batch', async () => {
    const { store, batches, maxInFlight } = slowStore(20);
    const live = await openSession(store, 's', { durability: { mode: 'each' } });
    live.append('app/tick', { i: 0 });
    await sleep(5);
    for (let i = 1; i < 30; i++) live.append('app/tick', { i });
    await live.flush();
    expect(maxInFlight()).toBe(1);
    expect(batches).toEqual([1, 29]);
    await live.close();
  });

  it('resolves concurrent flushes only once their events are durable', async () => {
    const { store } = slowStore(15);
    const live = await openSession(store, 's', { durability: { mode: 'group', windowMs: 1000 } });
    live.append('app/a', 1);
    const early = live.flush();
    live.append('app/b', 2);
    const late = live.flush();
    await early;
    expect((await store.load('s')).events.length).toBeGreaterThanOrEqual(1);
    await late;
    expect((await store.load('s')).events).toHaveLength(2);
    expect(live.recorderStats.durableSeq).toBe(2);
    await live.close();
  });

  it('flushes on close and refuses appends afterwards', async () => {
    const { store } = slowStore(5);
    const live = await openSession(store, 's', { durability: { mode: 'group', windowMs: 1000 } });
    live.append('app/a', 1);
    await live.close();
    expect((await store.load('s')).events).toHaveLength(1);
    expect(() => live.append('app/b', 2)).toThrow(ClosedError);
    expect(live.seq).toBe(1);
    await live.close();
  });

  it('refuses a negative window', async () => {
    const store = new MemoryStore();
    await expect(
      openSession(store, 's', { durability: { mode: 'group', windowMs: -1 } }),
    ).rejects.toThrow(InvalidArgumentError);
    const again = await openSession(store, 's');
    await again.close();
  });
});
