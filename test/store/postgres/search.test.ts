/**
 * What the PostgreSQL search index adds to the search every backend answers (test/store/
 * search.test.ts): its tables and GIN index made by the first search only, lexemes folded as every
 * backend folds them whatever the server's configuration, the index (not a scan) answering, rows
 * erased in the transaction that erases the events, and the server's limits on a `tsvector` met.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  openStore,
  rebuildSearchIndex,
  redact,
  type SessionStore,
  searchSessions,
} from '../../../src/store/index.js';
import { lexemesOf, tsqueryOf } from '../../../src/store/postgres/search-index.js';
import { parseSearchQuery } from '../../../src/store/search/query.js';
import { describePg, dropSchema, freshSchema, pgUrl, withClient } from '../../postgres/helpers.js';
import { writeTurn } from '../search/sessions.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

async function fresh(readOnly = false, schema = freshSchema('srch')): Promise<SessionStore> {
  if (!schemas.includes(schema)) schemas.push(schema);
  return openStore(`${pgUrl}?schema=${schema}`, { readOnly });
}

function schemaOf(store: SessionStore): string {
  return (store as SessionStore & { settings: { schema: string } }).settings.schema;
}

async function rows<R>(sql: string, values: unknown[] = []): Promise<R[]> {
  return withClient(async (client) => (await client.query(sql, values)).rows as R[]);
}

describe('the tsvector and tsquery literals', () => {
  it('hold the folded words with their positions, once per word', () => {
    expect(lexemesOf('Go, go Gophers!')).toBe("'go':1,2 'gophers':3");
    expect(lexemesOf('Café CAFE')).toBe("'cafe':1,2");
    expect(lexemesOf('')).toBe('');
  });

  it('keep PostgreSQL limits: 256 positions a word, positions up to 16383, no overlong word', () => {
    const many = lexemesOf(Array.from({ length: 20_000 }, () => 'spam').join(' '));
    expect(many.split(',')).toHaveLength(256);
    const late = lexemesOf(`${'x '.repeat(17_000)}tail`);
    expect(late.endsWith("'tail':16383")).toBe(true);
    expect(lexemesOf(`${'y'.repeat(3000)} short`)).toBe("'short':2");
  });

  it('turn a query into terms joined by &, a phrase by <->', () => {
    expect(tsqueryOf(parseSearchQuery('deploy "night train" read_file'))).toBe(
      "'deploy' & ('night' <-> 'train') & ('read' <-> 'file')",
    );
  });
});

describePg('the PostgreSQL search index', () => {
  it('is made by the first search only, with a GIN index the planner uses', async () => {
    const store = await fresh();
    const schema = schemaOf(store);
    try {
      await writeTurn(store, 'alpha', 'the flaky websocket test');
      const before = await rows(
        'SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2',
        [schema, 'search_docs'],
      );
      expect(before).toEqual([]);
      const found = await searchSessions(store, 'websocket');
      expect(found.method).toBe('index');
      expect(found.indexedSessions).toBe(1);
      const plan = await withClient(async (client) => {
        await client.query('SET enable_seqscan = off');
        const result = await client.query(
          `EXPLAIN SELECT seq FROM "${schema}".search_docs WHERE lexemes @@ $1::tsquery`,
          ["'websocket'"],
        );
        return result.rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n');
      });
      expect(plan).toContain('search_docs_lexemes');
    } finally {
      await store.close();
    }
  });

  it('folds words as every backend does, whatever the server’s text search configuration', async () => {
    const store = await fresh();
    try {
      await writeTurn(store, 'accents', 'Le CAFÉ crème, s’il vous plaît; the running dogs');
      const cafe = await searchSessions(store, 'cafe creme');
      // The user's message (seq 2) and the assistant's answer quoting it (seq 3).
      expect(cafe.hits.map((hit) => hit.seq).sort()).toEqual([2, 3]);
      expect(cafe.hits[0]?.snippet).toContain('«CAFÉ» «crème»');
      // No stemming: a word is found as written, as the FTS5 index and the scan find it.
      expect((await searchSessions(store, 'run')).hits).toEqual([]);
      expect((await searchSessions(store, '"running dogs"')).hits).toHaveLength(2);
      expect((await searchSessions(store, '"dogs running"')).hits).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  it('empties and rebuilds an index whose words were folded by another rule', async () => {
    const first = await fresh();
    const schema = schemaOf(first);
    try {
      await writeTurn(first, 'greek', 'Ο Σίσυφος στην οδό');
      expect((await searchSessions(first, 'Σίσυφος')).hits).toHaveLength(2);
    } finally {
      await first.close();
    }
    // As an index made before the rule was versioned: no note, lexemes a query no longer asks for.
    await rows(`COMMENT ON TABLE "${schema}".search_docs IS NULL`);
    await rows(`UPDATE "${schema}".search_docs SET lexemes = '''σίσυφος'':1'::tsvector`);
    const again = await fresh(false, schema);
    try {
      const found = await searchSessions(again, 'Σίσυφος');
      expect(found.indexedSessions).toBe(1);
      expect(found.hits.map((hit) => hit.seq).sort()).toEqual([2, 3]);
    } finally {
      await again.close();
    }
    const [note] = await rows<{ note: string }>(
      "SELECT obj_description($1::regclass, 'pg_class') AS note",
      [`"${schema}".search_docs`],
    );
    expect(note?.note).toMatch(/folded by rule \d+/);
  });

  it('keeps a text with NUL characters and a message larger than a tsvector may be', async () => {
    const store = await fresh();
    try {
      await writeTurn(store, 'nul', 'before\u0000after zzsentinel');
      const huge = Array.from({ length: 120_000 }, (_, i) => `w${i}x`).join(' ');
      await writeTurn(store, 'huge', `hugestart ${huge}`);
      expect((await searchSessions(store, 'zzsentinel')).hits[0]?.snippet).toContain('\uFFFD');
      expect((await searchSessions(store, 'hugestart')).hits.map((hit) => hit.session)).toEqual([
        'huge',
        'huge',
      ]);
    } finally {
      await store.close();
    }
  });

  it('loses a redacted or deleted message in the transaction that erases it, before any search', async () => {
    const store = await fresh();
    const schema = schemaOf(store);
    try {
      await writeTurn(store, 'secret', 'my card is ppmarker5151');
      await writeTurn(store, 'gone', 'delete me ggdeletedmarker');
      expect((await searchSessions(store, 'ppmarker5151')).hits).toHaveLength(2);
      await redact(store, 'secret', { match: /ppmarker5151/g }, { reason: 'test' });
      await store.delete('gone');
      const left = await rows<{ text: string }>(`SELECT text FROM "${schema}".search_docs`);
      expect(left.some((row) => row.text.includes('ppmarker5151'))).toBe(false);
      expect(left.some((row) => row.text.includes('ggdeletedmarker'))).toBe(false);
      const marks = await rows<{ indexed: string }>(
        `SELECT indexed FROM "${schema}".search_sessions`,
      );
      // The redacted session's mark went down to its first erased message; the deleted one's row went.
      expect(marks.map((mark) => Number(mark.indexed))).toEqual([2]);
      const card = (await searchSessions(store, 'card')).hits.map((hit) => hit.snippet);
      expect(card).toContain('my «card» is [redacted]');
    } finally {
      await store.close();
    }
  });

  it('is scanned from a read-only store, which cannot keep the index current', async () => {
    const schema = freshSchema('srch');
    const writer = await fresh(false, schema);
    await writeTurn(writer, 'alpha', 'read only words');
    await writer.close();
    const reader = await fresh(true, schema);
    try {
      const found = await searchSessions(reader, 'words');
      expect(found.method).toBe('scan');
      expect(found.hits.map((hit) => hit.seq)).toEqual([2, 3]);
    } finally {
      await reader.close();
    }
  });

  it('survives two stores’ first searches at once, and a rebuild', async () => {
    const schema = freshSchema('srch');
    const [a, b] = [await fresh(false, schema), await fresh(false, schema)];
    try {
      await writeTurn(a, 'one', 'concurrent qqword');
      await writeTurn(b, 'two', 'concurrent qqword again');
      const [left, right] = await Promise.all([
        searchSessions(a, 'qqword'),
        searchSessions(b, 'qqword'),
      ]);
      expect(left.hits).toHaveLength(4);
      expect(right.hits).toHaveLength(4);
      expect(await rebuildSearchIndex(a)).toBe(2);
      expect((await searchSessions(b, 'qqword', { catchUp: false })).hits).toHaveLength(4);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
