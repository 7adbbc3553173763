/**
 * The PostgreSQL search index: a `tsvector` per document with a GIN index, in the store's own
 * schema, its tables made by the first search (additive, so the schema version does not move and
 * older palimpsest versions ignore them).
 *
 * The lexemes are not PostgreSQL's: each document's words are cut and folded in JavaScript by the
 * same `wordsAt` every backend uses and written as a `tsvector` literal with their positions, and
 * a query becomes a `tsquery` literal of the same folded words (`<->` inside a phrase). So the
 * index agrees with the FTS5 index and the scan on what a word is, whatever the server's text
 * search configuration or locale. The index finds candidates; the matched text is checked and its
 * snippet cut by `scanMatch`, as the scan does.
 *
 * Erasure follows the rows: a document's row goes with its session's mark row, which goes with
 * the session's row (foreign keys `ON DELETE CASCADE`), and a statement-level trigger on `events`
 * deletes the documents of the message rows a statement deletes (a redaction's rewrite, a
 * repair) and lowers the session's mark, so the next search indexes what replaced them.
 */
import type { SearchDocument } from '../search/documents.js';
import type { SearchHit, SearchOptions } from '../search/hits.js';
import type { SearchQuery } from '../search/query.js';
import { FOLD_VERSION, wordsAt } from '../search/query.js';
import { scanMatch } from '../search/scan.js';
import type { IndexedSession, IndexWrite, SearchIndex } from '../search/search-index.js';
import { type PgContext, transaction } from './context.js';
import type { PgQueryable } from './driver.js';

/** PostgreSQL keeps positions up to this one; later words share it. */
const MAX_POSITION = 16383;
/** PostgreSQL keeps at most this many positions of one lexeme. */
const MAX_POSITIONS = 256;
/** A lexeme longer than this (in UTF-8 bytes) is refused by PostgreSQL; such words are not indexed. */
const MAX_LEXEME_BYTES = 2046;
/**
 * What one document's `tsvector` may take, in PostgreSQL's own accounting (under its 1 MiB
 * limit): each lexeme 4 bytes of entry, its bytes aligned to 2 and 2 of position count, each
 * position 2. Words first seen past it are found by no search, and their later occurrences lose
 * their positions (docs/search.md).
 */
const MAX_TSVECTOR_BYTES = 1_000_000;
/** Documents inserted per statement. */
const INSERT_PAGE = 500;

const encoder = new TextEncoder();

/**
 * The comment on `search_docs` naming the rule its lexemes were folded by. An index without it
 * (made before the rule was versioned) or with another is emptied and built again by the next
 * catch-up: its lexemes would not be the words a query now asks for.
 */
const FOLD_NOTE = `palimpsest search index: words folded by rule ${FOLD_VERSION}`;

/** The tables, function and trigger of the index in schema `s` (quoted). */
function indexDdl(s: string): string {
  return `
CREATE TABLE IF NOT EXISTS ${s}.search_sessions (
  session_key bigint PRIMARY KEY REFERENCES ${s}.sessions (key) ON DELETE CASCADE,
  indexed bigint NOT NULL,
  stamp text NOT NULL,
  last_time bigint NOT NULL,
  kind text NOT NULL,
  project text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.search_docs (
  session_key bigint NOT NULL REFERENCES ${s}.search_sessions (session_key) ON DELETE CASCADE,
  seq bigint NOT NULL,
  type text NOT NULL,
  role text NOT NULL,
  tools text NOT NULL,
  model text NOT NULL,
  time bigint NOT NULL,
  text text NOT NULL,
  lexemes tsvector NOT NULL,
  PRIMARY KEY (session_key, seq)
);
CREATE INDEX IF NOT EXISTS search_docs_lexemes ON ${s}.search_docs USING gin (lexemes);
CREATE OR REPLACE FUNCTION ${s}.search_events_erased() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.search_docs AS d USING erased AS e
    WHERE e.surface_op IS NOT NULL AND d.session_key = e.session_key AND d.seq = e.seq;
  UPDATE ${s}.search_sessions AS m SET indexed = least(m.indexed, e.low)
    FROM (SELECT session_key, min(seq) AS low FROM erased WHERE surface_op IS NOT NULL
          GROUP BY session_key) AS e
    WHERE m.session_key = e.session_key;
  RETURN NULL;
END
$fn$;
DROP TRIGGER IF EXISTS search_events_erased ON ${s}.events;
CREATE TRIGGER search_events_erased AFTER DELETE ON ${s}.events
  REFERENCING OLD TABLE AS erased FOR EACH STATEMENT EXECUTE FUNCTION ${s}.search_events_erased();
`;
}

/**
 * The `tsvector` literal of a text: its folded words with their positions (1-based), within
 * PostgreSQL's limits on positions, lexeme length and total size (`Go, go Gophers!` gives
 * `'go':1,2 'gophers':3`).
 */
export function lexemesOf(text: string): string {
  const positions = new Map<string, number[]>();
  let total = 0;
  let position = 0;
  for (const { word } of wordsAt(text)) {
    position = Math.min(position + 1, MAX_POSITION);
    let seen = positions.get(word);
    if (seen === undefined) {
      const bytes = encoder.encode(word).length;
      const entry = 4 + bytes + (bytes % 2) + 2;
      if (bytes > MAX_LEXEME_BYTES || total + entry + 2 > MAX_TSVECTOR_BYTES) continue;
      total += entry;
      seen = [];
      positions.set(word, seen);
    }
    if (
      seen.length < MAX_POSITIONS &&
      seen.at(-1) !== position &&
      total + 2 <= MAX_TSVECTOR_BYTES
    ) {
      seen.push(position);
      total += 2;
    }
  }
  let literal = '';
  for (const [word, at] of positions) {
    literal += `${literal === '' ? '' : ' '}${quoteLexeme(word)}:${at.join(',')}`;
  }
  return literal;
}

/** The `tsquery` literal of a parsed query: every term, a phrase's words adjacent. */
export function tsqueryOf(query: SearchQuery): string {
  return query.terms
    .map((term) => {
      const words = term.words.map(quoteLexeme);
      return words.length === 1 ? (words[0] as string) : `(${words.join(' <-> ')})`;
    })
    .join(' & ');
}

/** A lexeme quoted for a `tsvector` or `tsquery` literal. */
function quoteLexeme(word: string): string {
  return `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** PostgreSQL `text` holds no NUL: a document's text keeps a replacement character there. */
function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

interface MarkRow {
  id: string;
  indexed: string;
  stamp: string;
  last_time: string;
}

interface HitRow {
  session: string;
  seq: string;
  type: string;
  role: string;
  time: string;
  model: string;
  tools: string;
  text: string;
  score: number;
}

/** A {@link SearchIndex} in the store's PostgreSQL schema. Made by `PostgresStore.searchIndex`. */
export class PgSearchIndex implements SearchIndex {
  readonly #ctx: PgContext;
  #ready: Promise<void> | undefined;

  constructor(ctx: PgContext) {
    this.#ctx = ctx;
  }

  /**
   * Creates the tables when missing, and empties them when their words were folded by another
   * rule ({@link FOLD_NOTE}), once per store object, under the advisory lock that serialises
   * opens of the schema (two processes' first searches must not race the DDL).
   */
  ready(): Promise<void> {
    this.#ready ??= this.#ctx
      .retrying('search', (client) =>
        transaction(client, async () => {
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
            `palimpsest:${this.#ctx.settings.schema}`,
          ]);
          const { rows } = await client.query(
            'SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2',
            [this.#ctx.settings.schema, 'search_docs'],
          );
          const s = this.#ctx.s;
          if (rows.length === 0) await client.query(indexDdl(s));
          const { rows: notes } = await client.query<{ note: string | null }>(
            "SELECT obj_description($1::regclass, 'pg_class') AS note",
            [`${s}.search_docs`],
          );
          if (notes[0]?.note !== FOLD_NOTE) {
            await client.query(`TRUNCATE ${s}.search_docs, ${s}.search_sessions`);
            await client.query(`COMMENT ON TABLE ${s}.search_docs IS '${FOLD_NOTE}'`);
          }
        }),
      )
      .catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
    return this.#ready;
  }

  async indexed(): Promise<ReadonlyMap<string, IndexedSession>> {
    const s = this.#ctx.s;
    const { rows } = await this.#ctx.retrying('search', (client) =>
      client.query<MarkRow>(
        `SELECT s.id, m.indexed, m.stamp, m.last_time FROM ${s}.search_sessions AS m
         JOIN ${s}.sessions AS s ON s.key = m.session_key`,
      ),
    );
    return new Map(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          indexed: Number(row.indexed),
          stamp: row.stamp,
          lastTime: Number(row.last_time),
        },
      ]),
    );
  }

  async write(entry: IndexWrite): Promise<void> {
    const s = this.#ctx.s;
    const { mark, facts } = entry;
    await this.#ctx.retrying('search', (client) =>
      transaction(client, async () => {
        // The mark's row first: it locks the session's index against a concurrent search's
        // catch-up, and names no session that was deleted meanwhile.
        const { rows } = await client.query<{ session_key: string }>(
          `INSERT INTO ${s}.search_sessions (session_key, indexed, stamp, last_time, kind, project)
           SELECT key, $2, $3, $4, $5, $6 FROM ${s}.sessions WHERE id = $1
           ON CONFLICT (session_key) DO UPDATE SET indexed = excluded.indexed,
             stamp = excluded.stamp, last_time = excluded.last_time, kind = excluded.kind,
             project = excluded.project
           RETURNING session_key`,
          [entry.id, mark.indexed, mark.stamp, mark.lastTime, facts.kind, facts.project],
        );
        const key = rows[0]?.session_key;
        if (key === undefined) return;
        await client.query(`DELETE FROM ${s}.search_docs WHERE session_key = $1 AND seq >= $2`, [
          key,
          entry.fromSeq,
        ]);
        for (let start = 0; start < entry.documents.length; start += INSERT_PAGE) {
          await insertDocuments(client, s, key, entry.documents.slice(start, start + INSERT_PAGE));
        }
      }),
    );
  }

  async drop(id: string): Promise<void> {
    const s = this.#ctx.s;
    await this.#ctx.retrying('search', (client) =>
      client.query(
        `DELETE FROM ${s}.search_sessions WHERE session_key = (SELECT key FROM ${s}.sessions WHERE id = $1)`,
        [id],
      ),
    );
  }

  async clear(): Promise<void> {
    const s = this.#ctx.s;
    await this.#ctx.retrying('search', (client) =>
      transaction(client, async () => {
        await client.query(`DELETE FROM ${s}.search_docs`);
        await client.query(`DELETE FROM ${s}.search_sessions`);
      }),
    );
  }

  async query(
    query: SearchQuery,
    options: SearchOptions & { readonly limit: number },
  ): Promise<SearchHit[]> {
    const s = this.#ctx.s;
    const params: unknown[] = [tsqueryOf(query)];
    const where = ['d.lexemes @@ q.q'];
    const filter = (clause: (at: string) => string, value: unknown): void => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    if (options.since !== undefined) filter((at) => `d.time >= ${at}`, options.since);
    if (options.until !== undefined) filter((at) => `d.time < ${at}`, options.until);
    if (options.model !== undefined) filter((at) => `d.model = ${at}`, options.model);
    if (options.tool !== undefined)
      filter((at) => `${at} = ANY(string_to_array(d.tools, ' '))`, options.tool);
    if (options.project !== undefined) filter((at) => `m.project = ${at}`, options.project);
    if (options.sessions !== undefined)
      filter((at) => `s.id = ANY(${at}::text[])`, [...options.sessions]);
    const kinds = ['root'];
    if (options.includeForks === true) kinds.push('fork');
    if (options.includeChildren === true) kinds.push('child');
    filter((at) => `m.kind = ANY(${at}::text[])`, kinds);
    params.push(options.limit);
    const { rows } = await this.#ctx.retrying('search', (client) =>
      client.query<HitRow>(
        `SELECT s.id AS session, d.seq, d.type, d.role, d.time, d.model, d.tools, d.text,
           ts_rank(d.lexemes, q.q) AS score
         FROM ${s}.search_docs AS d
         JOIN ${s}.search_sessions AS m ON m.session_key = d.session_key
         JOIN ${s}.sessions AS s ON s.key = d.session_key,
         (SELECT $1::tsquery AS q) AS q
         WHERE ${where.join(' AND ')}
         ORDER BY score DESC, s.id, d.seq LIMIT $${params.length}`,
        params,
      ),
    );
    const hits: SearchHit[] = [];
    for (const { text, ...row } of rows) {
      // The index's positions stop at 16,383: a phrase it found past them is checked here.
      const match = scanMatch(query, text);
      if (match === undefined) continue;
      hits.push({
        ...row,
        seq: Number(row.seq),
        time: Number(row.time),
        score: row.score,
        snippet: match.snippet,
      });
    }
    return hits;
  }
}

async function insertDocuments(
  client: PgQueryable,
  s: string,
  key: string,
  documents: readonly SearchDocument[],
): Promise<void> {
  const column = <T>(pick: (document: SearchDocument) => T): T[] => documents.map(pick);
  await client.query(
    `INSERT INTO ${s}.search_docs (session_key, seq, type, role, tools, model, time, text, lexemes)
     SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],
       $7::bigint[], $8::text[], $9::tsvector[])`,
    [
      key,
      column((d) => d.seq),
      column((d) => d.type),
      column((d) => d.role),
      column((d) => d.tools),
      column((d) => d.model),
      column((d) => d.time),
      column((d) => storable(d.text)),
      column((d) => lexemesOf(d.text)),
    ],
  );
}
