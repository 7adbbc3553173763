/** Store URLs: each scheme opens its backend; anything else is a typed error. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidStoreError, MemoryStore, openStore, parseStoreUrl } from '../../src/store/index.js';

const root = mkdtempSync(join(tmpdir(), 'palimpsest-open-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('openStore', () => {
  it('opens jsonl, sqlite and memory stores by URL, passing backend options through', async () => {
    const jsonl = await openStore(`jsonl:${join(root, 'sessions')}`, { jsonl: { fsync: false } });
    expect(jsonl.location).toBe(`jsonl:${join(root, 'sessions')}`);
    await jsonl.close();
    const sqlite = await openStore(`sqlite:${join(root, 'sessions.db')}`, {
      sqlite: { synchronous: 'normal' },
    });
    expect(sqlite.location).toBe(`sqlite:${join(root, 'sessions.db')}`);
    await sqlite.close();
    expect(await openStore('memory:')).toBeInstanceOf(MemoryStore);
  });

  it('refuses unknown schemes and empty paths with InvalidStoreError', async () => {
    await expect(openStore('postgres2://x')).rejects.toBeInstanceOf(InvalidStoreError);
    await expect(openStore('jsonl:')).rejects.toBeInstanceOf(InvalidStoreError);
    await expect(openStore('./no-scheme')).rejects.toBeInstanceOf(InvalidStoreError);
  });
});

describe('parseStoreUrl', () => {
  it('takes a URL apart without opening anything, refusing what openStore refuses', () => {
    expect(parseStoreUrl('jsonl:./dir')).toEqual({ scheme: 'jsonl', path: './dir' });
    expect(parseStoreUrl('sqlite:/a:b.db')).toEqual({ scheme: 'sqlite', path: '/a:b.db' });
    expect(parseStoreUrl('memory:')).toEqual({ scheme: 'memory', path: '' });
    for (const url of ['postgres2://x', 'jsonl:', './no-scheme']) {
      expect(() => parseStoreUrl(url)).toThrow(InvalidStoreError);
    }
  });
});
