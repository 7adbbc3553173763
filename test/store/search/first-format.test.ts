/**
 * An index of the first format (FTS5 cutting and folding the words with `unicode61`, which
 * folded differently from the query) is replaced, not searched: the fixture was written by
 * palimpsest before the words were folded in JavaScript (test/fixtures/search-v1/README.md).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, searchSessions } from '../../../src/store/index.js';
import { withRaw } from '../sqlite/helpers.js';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'search-v1');
const directory = mkdtempSync(join(tmpdir(), 'palimpsest-search-v1-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function copyOfFixture(): string {
  const copy = mkdtempSync(join(directory, 'copy-'));
  cpSync(FIXTURE, copy, { recursive: true });
  return copy;
}

/** The names of the search tables and triggers in a database. */
function searchObjects(file: string): Promise<string[]> {
  return withRaw(file, (db) =>
    (
      db
        .prepare(
          "SELECT name FROM sqlite_schema WHERE name LIKE 'search%' AND type IN ('table', 'trigger') ORDER BY name",
        )
        .all() as Array<{ name: string }>
    ).map((row) => row.name),
  );
}

describe('a search index of the first format', () => {
  it('in a SQLite store is dropped and made again, so a Greek or Russian word is found as written', async () => {
    const file = join(copyOfFixture(), 'sessions.db');
    expect(await searchObjects(file)).toContain('search_text');
    const store = await openStore(`sqlite:${file}`);
    try {
      const greek = await searchSessions(store, 'Σίσυφος');
      expect(greek.indexedSessions).toBe(2);
      expect(greek.hits.map((hit) => `${hit.session}:${hit.seq}`).sort()).toEqual([
        'greek:2',
        'greek:3',
      ]);
      expect((await searchSessions(store, 'мой')).hits.map((hit) => hit.session)).toEqual([
        'russian',
        'russian',
      ]);
      // No trigger of the first format is left to fire on a delete.
      await store.delete('russian');
      expect((await searchSessions(store, 'мой')).hits).toEqual([]);
    } finally {
      await store.close();
    }
    expect((await searchObjects(file)).filter((name) => !name.startsWith('search_words'))).toEqual([
      'search_marks',
      'search_messages',
    ]);
  });

  it('in a JSONL store’s index file is replaced by a file of the current format', async () => {
    const stores = join(copyOfFixture(), 'jsonl');
    const store = await openStore(`jsonl:${stores}`);
    try {
      const greek = await searchSessions(store, 'σισυφος');
      expect(greek.indexedSessions).toBe(2);
      expect(greek.hits.map((hit) => hit.session)).toEqual(['greek', 'greek']);
    } finally {
      await store.close();
    }
    const objects = await searchObjects(join(stores, 'search-index.sqlite'));
    expect(objects).not.toContain('search_text');
    expect(objects).toContain('search_words');
  });
});
