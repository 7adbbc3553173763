/**
 * A session whose header is damaged is shown by `ls` as damaged and fails `verify --all`, for
 * both file backends; never "no sessions" with exit code 0.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { withRaw } from '../store/sqlite/helpers.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());

beforeAll(async () => {
  for (const url of Object.values(stores.urls)) {
    const store = await openStore(url);
    await store.create({ version: 1, id: 'hidden', createdAt: 1 });
    await store.close();
  }
  const log = join(stores.dir, 'sessions', 'hidden.jsonl');
  writeFileSync(log, readFileSync(log, 'utf8').replace('"id":', '"iX":'));
  await withRaw(join(stores.dir, 'sessions.db'), (db) => {
    db.prepare("UPDATE sessions SET header = '{' WHERE id = 'hidden'").run();
  });
});

describe.each(['jsonl', 'sqlite'] as const)('a damaged header (%s)', (backend) => {
  const run = (...args: string[]) => cli(['--store', stores.urls[backend], ...args]);

  it('is listed as damaged by ls', () => {
    const listed = run('ls');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/DAMAGED hidden: /);
    expect(listed.stdout).not.toContain('no sessions');
    const json = JSON.parse(run('ls', '--json').stdout) as { id: string; damaged?: boolean }[];
    expect(json).toEqual([
      expect.objectContaining({ id: 'hidden', damaged: true, code: 'CORRUPT_LOG' }),
    ]);
  });

  it('fails verify --all', () => {
    const verified = run('verify', '--all');
    expect(verified.code).toBe(7);
    expect(verified.stdout).toMatch(/hidden\s+0\s+1 problem/);
  });
});
