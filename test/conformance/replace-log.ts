/**
 * `replaceLog`, the same in every backend: the whole log replaced in one step under the lock,
 * later appends continuing after it; a changed log, a shorter log, a lock of another session or
 * one no longer held refused with nothing written.
 */
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import { dataAsJson, InvalidArgumentError } from '../../src/core/index.js';
import { ConflictError, type SessionStore } from '../../src/store/index.js';
import { event } from '../core/builders.js';
import { rejection } from './helpers.js';

function notes(from: number, count: number, text = 'kept'): SessionEvent[] {
  return Array.from({ length: count }, (_, i) =>
    event(from + i, 'app/note', { n: from + i, text }, { time: 1000 + from + i }),
  ) as SessionEvent[];
}

export function describeReplaceLog(store: () => SessionStore): void {
  describe('replaceLog', () => {
    it('replaces the whole log in one step under the lock, and appends go on after it', async () => {
      const s = store();
      await s.create({ version: 1, id: 'r', createdAt: 1 });
      await s.append('r', notes(0, 3, 'secret'), { expectedSeq: 0 });
      const lock = await s.lock('r');
      try {
        await s.replaceLog('r', notes(0, 4, 'erased'), { expectedLength: 3 }, lock);
        await s.append('r', notes(4, 1, 'later'), { expectedSeq: 4 });
      } finally {
        await lock.release();
      }
      const { events } = await s.load('r');
      expect(events.map((e) => (dataAsJson(e) as { text: string }).text)).toEqual([
        'erased',
        'erased',
        'erased',
        'erased',
        'later',
      ]);
      expect((await s.summarize('r')).eventCount ?? events.length).toBe(5);
    });

    it('refuses a log that changed, a shorter log, another session’s lock and a released one, writing nothing', async () => {
      const s = store();
      await s.create({ version: 1, id: 'r2', createdAt: 1 });
      await s.create({ version: 1, id: 'other', createdAt: 1 });
      await s.append('r2', notes(0, 3), { expectedSeq: 0 });
      const lock = await s.lock('r2');
      const other = await s.lock('other');
      try {
        expect(
          await rejection(s.replaceLog('r2', notes(0, 4, 'x'), { expectedLength: 2 }, lock)),
        ).toBeInstanceOf(ConflictError);
        const shorter = await rejection(
          s.replaceLog('r2', notes(0, 2, 'x'), { expectedLength: 3 }, lock),
        );
        expect(shorter).toBeInstanceOf(InvalidArgumentError);
        expect((shorter as Error).message).toContain('never shortened');
        expect(
          await rejection(s.replaceLog('r2', notes(0, 3, 'x'), { expectedLength: 3 }, other)),
        ).toBeInstanceOf(InvalidArgumentError);
      } finally {
        await other.release();
        await lock.release();
      }
      const released = await rejection(
        s.replaceLog('r2', notes(0, 3, 'x'), { expectedLength: 3 }, lock),
      );
      expect((released as { code?: string }).code).toBe('LOCK_NOT_HELD');
      const { events } = await s.load('r2');
      expect(events.map((e) => (dataAsJson(e) as { text: string }).text)).toEqual([
        'kept',
        'kept',
        'kept',
      ]);
    });
  });
}
