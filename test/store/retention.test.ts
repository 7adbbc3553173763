/**
 * Retention (issue 37): the plan by age, count and size with an injected clock, what
 * `keepForks` keeps, the units policies are written in, and the plan applied on every backend,
 * where a session a live writer holds is skipped and reported, never half removed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyRetention,
  MemoryStore,
  openStore,
  parseByteSize,
  parseDuration,
  planRetention,
  type RetentionCandidate,
  retentionCandidates,
} from '../../src/store/index.js';
import { event } from '../core/builders.js';
import { everyBackend } from './store-urls.js';

const DAY = 86_400_000;
const NOW = 1_000 * DAY;

const session = (id: string, ageDays: number, sizeBytes = 100, parentSession?: string) => ({
  id,
  lastActivity: NOW - ageDays * DAY,
  sizeBytes,
  ...(parentSession === undefined ? {} : { parentSession }),
});

const removed = (candidates: RetentionCandidate[], policy: Parameters<typeof planRetention>[1]) =>
  planRetention(candidates, policy, NOW).remove.map((entry) => entry.id);

describe('a retention plan', () => {
  const store = [session('new', 1), session('month', 30), session('season', 100)];

  it('removes the sessions last active longer ago than the age bound, oldest first', () => {
    expect(removed(store, { olderThanMs: 20 * DAY })).toEqual(['season', 'month']);
    expect(removed(store, { olderThanMs: 100 * DAY })).toEqual([]);
  });

  it('keeps only the newest N by count', () => {
    expect(removed(store, { keep: 1 })).toEqual(['season', 'month']);
    expect(removed(store, { keep: 5 })).toEqual([]);
  });

  it('drops the oldest until the rest fits the byte budget', () => {
    const plan = planRetention(store, { maxSizeBytes: 150 }, NOW);
    expect(plan.remove.map((entry) => entry.id)).toEqual(['season', 'month']);
    expect(plan).toMatchObject({ bytesBefore: 300, bytesAfter: 100, kept: 1, overBudget: false });
  });

  it('names every criterion that selects a session, and removes what any one selects', () => {
    const plan = planRetention(store, { olderThanMs: 50 * DAY, keep: 2 }, NOW);
    expect(plan.remove).toEqual([{ ...session('season', 100), reasons: ['age', 'count'] }]);
  });

  it('orders sessions with the same activity by id, so a plan never depends on input order', () => {
    const tied = [session('b', 5), session('a', 5), session('c', 5)];
    expect(removed(tied, { keep: 1 })).toEqual(['c', 'b']);
    expect(removed([...tied].reverse(), { keep: 1 })).toEqual(['c', 'b']);
  });

  it('with keepForks, holds every ancestor of a kept fork and names the forks', () => {
    const family = [
      session('root', 300),
      session('child', 200, 100, 'root'),
      session('grandchild', 2, 100, 'child'),
      session('lonely', 250),
    ];
    const plan = planRetention(family, { olderThanMs: 90 * DAY, keepForks: true }, NOW);
    expect(plan.remove.map((entry) => entry.id)).toEqual(['lonely']);
    expect(plan.heldForForks.map(({ id, forks }) => ({ id, forks }))).toEqual([
      { id: 'root', forks: ['grandchild'] },
      { id: 'child', forks: ['grandchild'] },
    ]);
    expect(removed(family, { olderThanMs: 90 * DAY })).toEqual(['root', 'lonely', 'child']);
  });

  it('says when sessions held for forks keep the store over its byte budget', () => {
    const family = [session('parent', 10, 500), session('fork', 1, 100, 'parent')];
    const plan = planRetention(family, { maxSizeBytes: 200, keepForks: true }, NOW);
    expect(plan.remove).toEqual([]);
    expect(plan).toMatchObject({ bytesAfter: 600, overBudget: true });
  });

  it('refuses a policy without a criterion, or with a negative bound', () => {
    expect(() => planRetention(store, {}, NOW)).toThrow(
      'expected a retention policy with at least one of olderThanMs, keep or maxSizeBytes, found none',
    );
    expect(() => planRetention(store, { keep: -1 }, NOW)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('the units of a policy', () => {
  it('reads durations in minutes, hours, days and weeks', () => {
    expect(['30m', '12h', '90d', '2w'].map(parseDuration)).toEqual([
      30 * 60_000,
      12 * 3_600_000,
      90 * DAY,
      14 * DAY,
    ]);
  });

  it('reads sizes in bytes, decimal and binary units, any case', () => {
    expect(['4096', '500MB', '10GiB', '1kib', '2 tb'].map(parseByteSize)).toEqual([
      4096,
      500e6,
      10 * 2 ** 30,
      1024,
      2e12,
    ]);
  });

  it('refuses anything else, saying what it expected and found', () => {
    expect(() => parseDuration('90 days')).toThrow(
      "expected a duration as a whole number and a unit (m, h, d or w, as in 90d, 12h, 30m, 2w), found '90 days'",
    );
    for (const text of ['1.5GiB', '-1', '10XB', '']) {
      expect(() => parseByteSize(text)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
  });
});

for (const [name, newUrl] of everyBackend('retention')) {
  describe(`retention applied on ${name}`, () => {
    it('deletes what the plan removes and skips, whole, a session a live writer holds', async () => {
      const store = await openStore(newUrl());
      for (const id of ['a', 'b', 'held', 'kept']) {
        await store.create({ version: 1, id, createdAt: 1 });
        await store.append(id, [event(0, 'app/note', { id })], { expectedSeq: 0 });
      }
      const { candidates, damaged } = await retentionCandidates(store, { measure: true });
      expect(damaged).toEqual([]);
      expect(candidates.every((candidate) => candidate.sizeBytes > 0)).toBe(true);
      const lock = await store.lock('held');

      const plan = planRetention(
        candidates.map((candidate) =>
          candidate.id === 'kept' ? { ...candidate, lastActivity: Date.now() + DAY } : candidate,
        ),
        { keep: 1 },
        Date.now(),
      );
      const outcome = await applyRetention(store, plan, { kind: 'delete' });

      expect(outcome.removed.map((entry) => entry.id).sort()).toEqual(['a', 'b']);
      expect(outcome.skipped).toEqual([
        { id: 'held', code: 'LOCKED', message: expect.stringContaining("session 'held'") },
      ]);
      expect(outcome.failed).toEqual([]);
      await lock.release();
      expect((await store.load('held')).events).toEqual([event(0, 'app/note', { id: 'held' })]);
      const left = (await store.list()).sessions.map((summary) => summary.header.id).sort();
      expect(left).toEqual(['held', 'kept']);
      await store.close();
    });
  });
}

describe('retention candidates', () => {
  it('leave out a session deleted between the listing and its measuring', async () => {
    const store = new MemoryStore();
    await store.create({ version: 1, id: 'gone', createdAt: 1 });
    await store.create({ version: 1, id: 'here', createdAt: 2 });
    const list = store.list.bind(store);
    store.list = async (options) => {
      const page = await list(options);
      await store.delete('gone');
      return page;
    };

    const { candidates } = await retentionCandidates(store, { measure: true });

    expect(candidates.map((candidate) => candidate.id)).toEqual(['here']);
  });

  it('leave out a damaged session, reported apart, so that no plan removes it', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'palimpsest-retention-damaged-'));
    const store = await openStore(`jsonl:${directory}`);
    await store.create({ version: 1, id: 'fine', createdAt: 1 });
    writeFileSync(join(directory, 'broken.jsonl'), 'not a header\n');

    const { candidates, damaged } = await retentionCandidates(store);

    expect(candidates.map((candidate) => candidate.id)).toEqual(['fine']);
    expect(damaged.map(({ id, error }) => ({ id, code: error.code }))).toEqual([
      { id: 'broken', code: 'CORRUPT_LOG' },
    ]);
    expect(planRetention(candidates, { keep: 0 }, NOW).remove.map((entry) => entry.id)).toEqual([
      'fine',
    ]);
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });
});
