/**
 * `list` filters, the same in every backend: created after/before, parent session and id prefix,
 * alone and together, page by page.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/index.js';
import type { ListOptions, SessionStore } from '../../src/store/index.js';
import { rejection } from './helpers.js';

async function all(store: SessionStore, options: ListOptions): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(
      cursor === undefined ? { ...options, limit: 2 } : { ...options, limit: 2, cursor },
    );
    ids.push(...page.sessions.map((summary) => summary.header.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

export function describeListFilters(store: () => SessionStore): void {
  describe('list filters', () => {
    async function seed(s: SessionStore): Promise<void> {
      const sessions: [string, number, string?][] = [
        ['job-1', 100],
        ['job-2', 200, 'job-1'],
        ['job-3', 300, 'job-1'],
        ['task_1', 400],
        ['task%1', 500, 'job-2'],
        ['Job-4', 600],
      ];
      for (const [id, createdAt, parentSession] of sessions) {
        await s.create({
          version: 1,
          id,
          createdAt,
          ...(parentSession === undefined ? {} : { parentSession }),
        });
      }
    }

    it('keeps the sessions created after or before a time, page by page', async () => {
      const s = store();
      await seed(s);
      expect(await all(s, { createdAfter: 200 })).toEqual(['Job-4', 'task%1', 'task_1', 'job-3']);
      expect(await all(s, { createdBefore: 300 })).toEqual(['job-2', 'job-1']);
      expect(await all(s, { createdAfter: 100, createdBefore: 500 })).toEqual([
        'task_1',
        'job-3',
        'job-2',
      ]);
    });

    it('keeps the children of a session', async () => {
      const s = store();
      await seed(s);
      expect(await all(s, { parentSession: 'job-1' })).toEqual(['job-3', 'job-2']);
      expect(await all(s, { parentSession: 'nobody' })).toEqual([]);
    });

    it('keeps the ids with a prefix, case-sensitive and without wildcards', async () => {
      const s = store();
      await seed(s);
      expect(await all(s, { idPrefix: 'job-' })).toEqual(['job-3', 'job-2', 'job-1']);
      expect(await all(s, { idPrefix: 'task_' })).toEqual(['task_1']);
      expect(await all(s, { idPrefix: 'task%' })).toEqual(['task%1']);
      expect(await all(s, { idPrefix: '' })).toHaveLength(6);
    });

    it('combines filters', async () => {
      const s = store();
      await seed(s);
      expect(await all(s, { idPrefix: 'job', parentSession: 'job-1', createdAfter: 200 })).toEqual([
        'job-3',
      ]);
    });

    it('refuses a filter of the wrong kind', async () => {
      const s = store();
      expect(await rejection(s.list({ createdAfter: 1.5 }))).toBeInstanceOf(InvalidArgumentError);
      expect(await rejection(s.list({ parentSession: '' }))).toBeInstanceOf(InvalidArgumentError);
      expect(await rejection(s.list({ idPrefix: 7 as unknown as string }))).toBeInstanceOf(
        InvalidArgumentError,
      );
    });
  });
}
