/**
 * The FTS5 search index: in the SQLite store's own database (its tables created by the first
 * search, its rows erased by triggers in the same transaction as the events they index), or in
 * a file of its own beside a JSONL store. A document's rowid is its session's key times 2^32
 * plus its seq, so a session's rows are one rowid range and a trigger finds an event's row
 * without a scan. `search_messages` holds each document's text and facts by that rowid, and so
 * lists the rowids in use: FTS5 answers a rowid range by scanning the whole table, an `IN` list
 * of rowids by looking each up, so ranges are taken from there.
 *
 * FTS5 indexes the words `searchWords` cut and folded, joined by spaces, with its `ascii`
 * tokenizer, which splits at ASCII spaces and punctuation only, and the folded words hold none:
 * its words are exactly every other backend's. (It keeps them as its content: a contentless
 * table deletes by tombstones, which would leave erased words in the file.) The snippet is cut
 * from the message's text as the scan cuts it. The tables of the first format (`search_text`,
 * whose `unicode61` tokenizer folded differently from the query) are dropped when found.
 */
import type { SearchHit, SearchOptions } from '../search/hits.js';
import { type SearchQuery, searchWords } from '../search/query.js';
import { scanMatch } from '../search/scan.js';
import type { IndexedSession, IndexWrite, SearchIndex } from '../search/search-index.js';
import type { SqliteDatabase, SqliteStatement } from './schema.js';

const SPAN = 4294967296;

const TABLES_DDL = `
CREATE TABLE IF NOT EXISTS search_marks (
  key INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  indexed INTEGER NOT NULL,
  stamp TEXT NOT NULL,
  last_time INTEGER NOT NULL,
  kind TEXT NOT NULL,
  project TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS search_messages (
  doc INTEGER PRIMARY KEY,
  type TEXT NOT NULL,
  role TEXT NOT NULL,
  tools TEXT NOT NULL,
  model TEXT NOT NULL,
  time INTEGER NOT NULL,
  text TEXT NOT NULL
) STRICT;
CREATE VIRTUAL TABLE IF NOT EXISTS search_words USING fts5(words, tokenize = 'ascii');
INSERT INTO search_words (search_words, rank) VALUES ('secure-delete', 1);
`;

/** The first format's tables and triggers, folded by `unicode61` (see the module notes). */
const FIRST_FORMAT_DROP = `
DROP TRIGGER IF EXISTS search_event_erased;
DROP TRIGGER IF EXISTS search_session_deleted;
DROP TABLE IF EXISTS search_text;
DROP TABLE IF EXISTS search_docs;
DROP TABLE IF EXISTS search_sessions;
`;

/**
 * In the store's database: an erased or deleted message row takes its document with it, and
 * lowers the session's mark so the next search indexes what replaced it. Only message rows
 * (those with a `surface_op`) are indexed, so the chunk rows an append moves into runs skip it.
 */
const STORE_TRIGGERS_DDL = `
CREATE TRIGGER IF NOT EXISTS search_words_event_erased AFTER DELETE ON events
WHEN old.surface_op IS NOT NULL BEGIN
  DELETE FROM search_words WHERE rowid = old.session_id * ${SPAN} + old.seq;
  DELETE FROM search_messages WHERE doc = old.session_id * ${SPAN} + old.seq;
  UPDATE search_marks SET indexed = min(indexed, old.seq) WHERE key = old.session_id;
END;
CREATE TRIGGER IF NOT EXISTS search_words_session_deleted AFTER DELETE ON sessions BEGIN
  DELETE FROM search_words WHERE rowid IN (
    SELECT doc FROM search_messages
    WHERE doc BETWEEN old.key * ${SPAN} AND old.key * ${SPAN} + ${SPAN - 1}
  );
  DELETE FROM search_messages
    WHERE doc BETWEEN old.key * ${SPAN} AND old.key * ${SPAN} + ${SPAN - 1};
  DELETE FROM search_marks WHERE key = old.key;
END;
`;

/** Where the index lives: the store's own database, or a file beside a JSONL store. */
export type Fts5Placement = 'store' | 'file';

/** Whether a database holds a table of this name. */
function hasTable(db: SqliteDatabase, name: string): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !==
    undefined
  );
}

interface HitRow {
  session: string;
  seq: number;
  type: string;
  role: string;
  time: number;
  model: string;
  tools: string;
  text: string;
  score: number;
}

/** The FTS5 form of a parsed query: each term a quoted string (its words are letters and digits). */
export function fts5Match(query: SearchQuery): string {
  return query.terms.map((term) => `"${term.words.join(' ')}"`).join(' ');
}

/** A {@link SearchIndex} in FTS5 tables. */
export class Fts5SearchIndex implements SearchIndex {
  readonly #db: SqliteDatabase;
  readonly #placement: Fts5Placement;
  readonly #sql: Record<
    | 'marks'
    | 'insertMessage'
    | 'clearDocs'
    | 'keyOf'
    | 'storeKey'
    | 'newKey'
    | 'clearFrom'
    | 'insertWords'
    | 'mark'
    | 'dropRows'
    | 'dropMark',
    SqliteStatement
  >;

  /** Creates the tables (and in the store, the triggers) when missing; call on a writable connection. */
  constructor(db: SqliteDatabase, placement: Fts5Placement) {
    this.#db = db;
    this.#placement = placement;
    db.transaction(() => {
      if (hasTable(db, 'search_text')) db.exec(FIRST_FORMAT_DROP);
      if (!hasTable(db, 'search_words')) db.exec(TABLES_DDL);
      if (placement === 'store') db.exec(STORE_TRIGGERS_DDL);
    }).immediate();
    this.#sql = {
      marks: db.prepare('SELECT id, indexed, stamp, last_time AS lastTime FROM search_marks'),
      keyOf: db.prepare('SELECT key FROM search_marks WHERE id = ?'),
      storeKey: db.prepare(
        placement === 'store' ? 'SELECT key FROM sessions WHERE id = ?' : 'SELECT NULL AS key',
      ),
      newKey: db.prepare('SELECT coalesce(max(key), 0) + 1 AS key FROM search_marks'),
      clearFrom: db.prepare(
        'DELETE FROM search_words WHERE rowid IN (SELECT doc FROM search_messages WHERE doc BETWEEN ? AND ?)',
      ),
      clearDocs: db.prepare('DELETE FROM search_messages WHERE doc BETWEEN ? AND ?'),
      insertMessage: db.prepare(
        'INSERT INTO search_messages (doc, type, role, tools, model, time, text) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      insertWords: db.prepare('INSERT INTO search_words (rowid, words) VALUES (?, ?)'),
      mark: db.prepare(
        `INSERT INTO search_marks (key, id, indexed, stamp, last_time, kind, project) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET indexed = excluded.indexed, stamp = excluded.stamp,
           last_time = excluded.last_time, kind = excluded.kind, project = excluded.project`,
      ),
      dropRows: db.prepare(
        'DELETE FROM search_words WHERE rowid IN (SELECT doc FROM search_messages WHERE doc BETWEEN ? AND ?)',
      ),
      dropMark: db.prepare('DELETE FROM search_marks WHERE key = ?'),
    };
  }

  async indexed(): Promise<ReadonlyMap<string, IndexedSession>> {
    const rows = this.#sql.marks.all() as IndexedSession[];
    return new Map(rows.map((row) => [row.id, row]));
  }

  async write(entry: IndexWrite): Promise<void> {
    this.#db
      .transaction(() => {
        const key = this.#keyFor(entry.id);
        if (key === undefined) return;
        const base = key * SPAN;
        this.#sql.clearFrom.run(base + entry.fromSeq, base + SPAN - 1);
        this.#sql.clearDocs.run(base + entry.fromSeq, base + SPAN - 1);
        for (const document of entry.documents) {
          const doc = base + document.seq;
          this.#sql.insertWords.run(doc, searchWords(document.text).join(' '));
          const { text, type, role, tools, model, time } = document;
          this.#sql.insertMessage.run(doc, type, role, tools, model, time, text);
        }
        const { mark, facts } = entry;
        this.#sql.mark.run(
          key,
          entry.id,
          mark.indexed,
          mark.stamp,
          mark.lastTime,
          facts.kind,
          facts.project,
        );
      })
      .immediate();
  }

  async drop(id: string): Promise<void> {
    this.#db
      .transaction(() => {
        const row = this.#sql.keyOf.get(id) as { key: number } | undefined;
        if (row === undefined) return;
        this.#sql.dropRows.run(row.key * SPAN, row.key * SPAN + SPAN - 1);
        this.#sql.clearDocs.run(row.key * SPAN, row.key * SPAN + SPAN - 1);
        this.#sql.dropMark.run(row.key);
      })
      .immediate();
  }

  async clear(): Promise<void> {
    this.#db
      .transaction(() => {
        this.#db.exec(
          'DELETE FROM search_words; DELETE FROM search_messages; DELETE FROM search_marks;',
        );
      })
      .immediate();
  }

  async query(
    query: SearchQuery,
    options: SearchOptions & { readonly limit: number },
  ): Promise<SearchHit[]> {
    const where = ['search_words MATCH ?'];
    const params: unknown[] = [fts5Match(query)];
    const filter = (clause: string, value: unknown): void => {
      where.push(clause);
      params.push(value);
    };
    if (options.since !== undefined) filter('t.time >= ?', options.since);
    if (options.until !== undefined) filter('t.time < ?', options.until);
    if (options.model !== undefined) filter('t.model = ?', options.model);
    if (options.tool !== undefined)
      filter("instr(' ' || t.tools || ' ', ' ' || ? || ' ') > 0", options.tool);
    // A filter above reads a message's facts (`t`): only then is each match's row joined.
    const byFacts = where.length > 1;
    if (options.project !== undefined) filter('s.project = ?', options.project);
    if (options.sessions !== undefined) {
      filter('s.id IN (SELECT value FROM json_each(?))', JSON.stringify(options.sessions));
    }
    const kinds = ["'root'"];
    if (options.includeForks === true) kinds.push("'fork'");
    if (options.includeChildren === true) kinds.push("'child'");
    where.push(`s.kind IN (${kinds.join(', ')})`);
    const rows = this.#db
      .prepare(
        // The best documents first, from the index and the session's mark (and the message's
        // facts when a filter asks); only theirs are the facts and text read (a message's text
        // is its row's last column, so a filter reads the facts without it).
        `SELECT s.id AS session, top.doc - s.key * ${SPAN} AS seq, t.type, t.role, t.time, t.model,
           t.tools, t.text, top.score
         FROM (
           SELECT search_words.rowid AS doc, -bm25(search_words) AS score, s.id
           FROM search_words JOIN search_marks AS s ON s.key = (search_words.rowid >> 32)
             ${byFacts ? 'JOIN search_messages AS t ON t.doc = search_words.rowid' : ''}
           WHERE ${where.join(' AND ')}
           ORDER BY bm25(search_words), s.id, search_words.rowid LIMIT ?
         ) AS top
         JOIN search_messages AS t ON t.doc = top.doc JOIN search_marks AS s ON s.id = top.id
         ORDER BY top.score DESC, s.id, top.doc`,
      )
      .all(...params, options.limit) as HitRow[];
    const hits: SearchHit[] = [];
    for (const { text, ...row } of rows) {
      // The index found every word in place; the snippet is cut as every backend cuts it.
      const match = scanMatch(query, text);
      if (match !== undefined) hits.push({ ...row, snippet: match.snippet });
    }
    return hits;
  }

  /** The session's key: the store's own in its database, the index's next free one in a file. */
  #keyFor(id: string): number | undefined {
    if (this.#placement === 'store') {
      return (this.#sql.storeKey.get(id) as { key: number } | undefined)?.key;
    }
    const known = this.#sql.keyOf.get(id) as { key: number } | undefined;
    return known?.key ?? (this.#sql.newKey.get() as { key: number }).key;
  }
}
