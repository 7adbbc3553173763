/**
 * Damaged sessions in listings, the same in every backend that keeps headers of its own: a
 * session whose header is damaged is listed as damaged (with the error a load gives), on exactly
 * one page, and never hidden.
 */
import { describe, expect, it } from 'vitest';
import { CorruptLogError, type SessionStore } from '../../src/store/index.js';
import { rejection } from './helpers.js';

function header(id: string, createdAt: number) {
  return { version: 1 as const, id, createdAt };
}

export function describeDamagedListing(
  store: () => SessionStore,
  plantDamagedHeader: () => ((id: string) => Promise<void>) | undefined,
): void {
  describe('damaged sessions in listings', () => {
    it('lists a session whose header is damaged as damaged, with the error a load gives', async (context) => {
      const plant = plantDamagedHeader();
      if (plant === undefined) return context.skip();
      const s = store();
      await s.create(header('good', 1));
      await s.create(header('bad', 2));
      await plant('bad');
      const loaded = await rejection(s.load('bad'));
      expect(loaded).toBeInstanceOf(CorruptLogError);
      const page = await s.list();
      expect(page.sessions.map((summary) => summary.header.id)).toEqual(['good']);
      expect(page.damaged?.map((damaged) => damaged.id)).toEqual(['bad']);
      expect(page.damaged?.[0]?.error).toBeInstanceOf(CorruptLogError);
      expect(page.damaged?.[0]?.error.code).toBe((loaded as CorruptLogError).code);
    });

    it('reports each damaged session on exactly one page', async (context) => {
      const plant = plantDamagedHeader();
      if (plant === undefined) return context.skip();
      const s = store();
      for (let i = 0; i < 5; i++) await s.create(header(`s${i}`, 10 + i));
      await plant('s1');
      await plant('s3');
      const seen: string[] = [];
      const damaged: (string | undefined)[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.list(cursor === undefined ? { limit: 1 } : { limit: 1, cursor });
        seen.push(...page.sessions.map((summary) => summary.header.id));
        damaged.push(...(page.damaged ?? []).map((entry) => entry.id));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(seen.sort()).toEqual(['s0', 's2', 's4']);
      expect(damaged.sort()).toEqual(['s1', 's3']);
    });
  });
}
