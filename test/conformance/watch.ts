/**
 * `watch`, the same in every backend: the stored events, then each batch as another store
 * instance (another process, for the file and database backends) commits it, in order and each
 * exactly once; from a seq; until aborted.
 */

import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import { InvalidArgumentError } from '../../src/core/index.js';
import { NotFoundError, type SessionStore } from '../../src/store/index.js';
import { event } from '../core/builders.js';
import { rejection } from './helpers.js';

function notes(from: number, count: number): SessionEvent[] {
  return Array.from({ length: count }, (_, i) =>
    event(from + i, 'app/note', { n: from + i }, { time: 1000 + from + i }),
  ) as SessionEvent[];
}

/** Reads `count` events from the iterator, failing after `ms`. */
async function take(
  iterator: AsyncIterator<SessionEvent>,
  count: number,
  ms = 10_000,
): Promise<number[]> {
  const seqs: number[] = [];
  const deadline = Date.now() + ms;
  while (seqs.length < count) {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`watch gave ${seqs.length} of ${count} events in ${ms} ms`)),
        deadline - Date.now(),
      ),
    );
    const next = await Promise.race([iterator.next(), timeout]);
    if (next.done === true) break;
    seqs.push(next.value.seq);
  }
  return seqs;
}

export function describeWatch(
  store: () => SessionStore,
  reopen: () => Promise<SessionStore>,
): void {
  describe('watch', () => {
    it('yields the stored events, then each batch another store instance commits, in order and once', async () => {
      const s = store();
      await s.create({ version: 1, id: 'w', createdAt: 1 });
      await s.append('w', notes(0, 3), { expectedSeq: 0 });
      const stop = new AbortController();
      const iterator = s.watch('w', { signal: stop.signal })[Symbol.asyncIterator]();
      expect(await take(iterator, 3)).toEqual([0, 1, 2]);
      const writer = await reopen();
      try {
        const more = take(iterator, 7);
        await writer.append('w', notes(3, 4), { expectedSeq: 3 });
        await writer.append('w', notes(7, 3), { expectedSeq: 7 });
        expect(await more).toEqual([3, 4, 5, 6, 7, 8, 9]);
      } finally {
        stop.abort();
        await writer.close();
      }
      expect(await iterator.next()).toEqual({ done: true, value: undefined });
    });

    it('starts at fromSeq and ends without an error when aborted while waiting', async () => {
      const s = store();
      await s.create({ version: 1, id: 'w', createdAt: 1 });
      await s.append('w', notes(0, 5), { expectedSeq: 0 });
      const stop = new AbortController();
      const iterator = s.watch('w', { fromSeq: 3, signal: stop.signal })[Symbol.asyncIterator]();
      expect(await take(iterator, 2)).toEqual([3, 4]);
      const waiting = iterator.next();
      setTimeout(() => stop.abort(), 50);
      expect(await waiting).toEqual({ done: true, value: undefined });
    });

    it('rejects with NotFoundError once the session is deleted while watched', async () => {
      const s = store();
      await s.create({ version: 1, id: 'gone', createdAt: 1 });
      await s.append('gone', notes(0, 1), { expectedSeq: 0 });
      const iterator = s.watch('gone')[Symbol.asyncIterator]();
      expect(await take(iterator, 1)).toEqual([0]);
      const other = await reopen();
      try {
        await other.delete('gone');
      } finally {
        await other.close();
      }
      const next = iterator.next();
      const timeout = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 10_000));
      expect(await Promise.race([rejection(next), timeout])).toBeInstanceOf(NotFoundError);
    });

    it('rejects a session that does not exist, and a bad fromSeq', async () => {
      const s = store();
      const missing = s.watch('nobody')[Symbol.asyncIterator]();
      expect(await rejection(missing.next())).toBeInstanceOf(NotFoundError);
      await s.create({ version: 1, id: 'w', createdAt: 1 });
      const bad = s.watch('w', { fromSeq: -1 })[Symbol.asyncIterator]();
      expect(await rejection(bad.next())).toBeInstanceOf(InvalidArgumentError);
    });
  });
}
