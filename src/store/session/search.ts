/**
 * Full-text search across the sessions of a store: `searchSessions` brings the store's index up
 * to date (each session from its high-water mark) and asks it, or scans the logs when the store
 * keeps none. Which index a store has is decided here, the one floor that knows every backend:
 * its own (SQLite, PostgreSQL), a file beside the logs (JSONL), or none (memory, wrappers).
 */
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import type { SessionStore, SessionSummary } from '../contract/session-store.js';
import { decodeSessionId, isLogFileName, LOG_SUFFIX, SEARCH_INDEX_FILE } from '../jsonl/paths.js';
import { JsonlStore } from '../jsonl/store.js';
import { searchDocuments, sessionFacts } from '../search/documents.js';
import {
  checkSearchOptions,
  kindSearched,
  type SearchHit,
  type SearchOptions,
} from '../search/hits.js';
import { parseSearchQuery, type SearchQuery } from '../search/query.js';
import { scanMatch } from '../search/scan.js';
import { hasSearchIndex, type SearchIndex } from '../search/search-index.js';
import { isDamage, openSearchFile, removeSearchFile } from '../sqlite/search-file.js';
import { everySession } from './list-all.js';

/** What a search found, and how. */
export interface SearchResult {
  readonly hits: readonly SearchHit[];
  /** `index` when the store's index answered, `scan` when every log was read. */
  readonly method: 'index' | 'scan';
  /** Sessions (re)indexed before the query, by this search's catch-up. */
  readonly indexedSessions: number;
}

/**
 * Searches the messages of every session of a store (see docs/search.md): plain words must all
 * occur, "quoted phrases" must occur as written. Forks' copied events are found in their parent.
 *
 * @throws SearchQueryError (`BAD_QUERY`) for a query it cannot read; InvalidArgumentError for
 *   bad options; InvalidStoreError `DRIVER_NOT_INSTALLED` for a JSONL store without better-sqlite3.
 *
 * @example
 * ```ts
 * import { MemoryStore, openSession, searchSessions } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * const live = await openSession(store, 'trip');
 * live.append('turn/start', { turn: 1 });
 * live.append(
 *   'user/message',
 *   { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Book the night train to Vienna' }], source: { kind: 'user' } },
 *   { surfaceOp: 'append' },
 * );
 * live.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
 * await live.close();
 * const { hits } = await searchSessions(store, '"night train"');
 * console.log(hits[0]?.seq); // 1
 * console.log(hits[0]?.snippet); // 'Book the «night train» to Vienna'
 * ```
 */
export async function searchSessions(
  store: SessionStore,
  query: string,
  options: SearchOptions = {},
): Promise<SearchResult> {
  const parsed = parseSearchQuery(query);
  const checked = checkSearchOptions(options);
  return withIndex(store, async (index) => {
    if (index === undefined)
      return { hits: await scanStore(store, parsed, checked), method: 'scan', indexedSessions: 0 };
    const indexedSessions = checked.catchUp === false ? 0 : await catchUp(store, index);
    return { hits: await index.query(parsed, checked), method: 'index', indexedSessions };
  });
}

/**
 * Empties the store's index and indexes every session again; what `palimpsest search --rebuild`
 * runs. For a JSONL store the index file is deleted first, whatever state it is in.
 *
 * @returns how many sessions were indexed (0 for a store that keeps no index).
 *
 * @example
 * ```ts
 * import { MemoryStore, rebuildSearchIndex } from 'palimpsest/store';
 *
 * // The memory store keeps no index: a search scans it, and there is nothing to rebuild.
 * console.log(await rebuildSearchIndex(new MemoryStore())); // 0
 * ```
 */
export async function rebuildSearchIndex(store: SessionStore): Promise<number> {
  if (store instanceof JsonlStore) removeSearchFile(indexFileOf(store));
  return withIndex(store, async (index) => {
    if (index === undefined) return 0;
    await index.clear();
    return catchUp(store, index);
  });
}

/**
 * Takes sessions out of a JSONL store's index file at once, after their content was erased
 * (a redaction) or they left the store (a delete, through `openStore`'s `onSessionDeleted`),
 * rather than at the next search: the file beside the logs must not keep what the logs no
 * longer hold. A redacted session is
 * indexed again, from its rewritten log, by the next search. An index file that cannot be
 * opened or written is removed whole (it is a cache). Other stores erase their own index with
 * their rows, or keep none.
 */
export async function forgetInSearchIndex(
  store: SessionStore,
  ids: readonly string[],
): Promise<void> {
  if (!(store instanceof JsonlStore) || ids.length === 0) return;
  if (!existsSync(indexFileOf(store))) return;
  let file: Awaited<ReturnType<typeof openSearchFile>> | undefined;
  try {
    file = await openSearchFile(indexFileOf(store));
    for (const id of ids) await file.index.drop(id);
  } catch {
    file?.close();
    file = undefined;
    removeSearchFile(indexFileOf(store));
  } finally {
    file?.close();
  }
}

/** The search index file of a JSONL store. */
function indexFileOf(store: JsonlStore): string {
  return join(store.directory, SEARCH_INDEX_FILE);
}

/** Runs `work` over the store's index, opening (and for JSONL, repairing) it first. */
async function withIndex<T>(
  store: SessionStore,
  work: (index: SearchIndex | undefined) => Promise<T>,
): Promise<T> {
  if (hasSearchIndex(store)) return work(await store.searchIndex());
  if (!(store instanceof JsonlStore)) return work(undefined);
  let file = await openSearchFile(indexFileOf(store));
  try {
    return await work(file.index);
  } catch (error) {
    if (!isDamage(error)) throw error;
    // The file broke under us: it is a cache, so it is made again from the logs.
    file.close();
    removeSearchFile(indexFileOf(store));
    file = await openSearchFile(indexFileOf(store));
    return await work(file.index);
  } finally {
    file.close();
  }
}

/** A listing's word on a session: when it changes, the log is read again. */
function stampOf(summary: SessionSummary): string {
  return `${summary.updatedAt ?? ''}/${summary.eventCount ?? ''}/${summary.sizeBytes ?? ''}`;
}

/** A session as the catch-up sees it: its id, its stamp, and its header when the listing has it. */
interface ListedSession {
  readonly id: string;
  readonly stamp: string;
  readonly header?: SessionHeader;
}

/**
 * Every session of the store with its stamp, and the ids to keep even if unreadable. A JSONL
 * store's listing reads each log's header and last batch; a file's size and modification time
 * say as much about whether it changed, for one `stat` a file (a hashed name, which does not
 * say its id, falls back to the listing).
 */
async function listForIndex(
  store: SessionStore,
): Promise<{ sessions: ListedSession[]; kept: Set<string> }> {
  if (store instanceof JsonlStore) {
    const names = (await readdir(store.directory)).filter(isLogFileName);
    const sessions: ListedSession[] = [];
    for (const name of names) {
      const id = decodeSessionId(name.slice(0, -LOG_SUFFIX.length));
      if (id === undefined) return listSummaries(store);
      try {
        const stats = await stat(join(store.directory, name));
        if (stats.isFile()) sessions.push({ id, stamp: `${stats.mtimeMs}/${stats.size}` });
      } catch {
        // Removed since the directory was read: it leaves the index with the others gone.
      }
    }
    return { sessions, kept: new Set() };
  }
  return listSummaries(store);
}

async function listSummaries(
  store: SessionStore,
): Promise<{ sessions: ListedSession[]; kept: Set<string> }> {
  const { sessions, damaged } = await everySession(store);
  const kept = new Set<string>();
  for (const entry of damaged) if (entry.id !== undefined) kept.add(entry.id);
  return {
    sessions: sessions.map((summary) => ({
      id: summary.header.id,
      stamp: stampOf(summary),
      header: summary.header,
    })),
    kept,
  };
}

/**
 * Brings the index up to date with the store: sessions gone from the store leave it, changed
 * ones are read and indexed from their mark (from the start when the log was rewritten under
 * the mark: a redaction, a shorter log, another event where the mark's was).
 *
 * @returns how many sessions were written to the index.
 */
export async function catchUp(store: SessionStore, index: SearchIndex): Promise<number> {
  const marks = await index.indexed();
  const { sessions, kept: listed } = await listForIndex(store);
  let written = 0;
  for (const { id, stamp, header } of sessions) {
    listed.add(id);
    const mark = marks.get(id);
    if (mark !== undefined && mark.stamp === stamp) continue;
    let loaded: Awaited<ReturnType<SessionStore['load']>>;
    try {
      loaded = await store.load(id, { elideFinishedChunks: true });
    } catch {
      // A session that cannot be read now keeps what was indexed of it; a later search retries.
      continue;
    }
    const events = loaded.events;
    const fromSeq = resumeAt(events, mark?.indexed ?? 0, mark?.lastTime);
    const facts = sessionFacts(header ?? loaded.header);
    await index.write({
      id,
      fromSeq,
      documents: searchDocuments(events, fromSeq, facts),
      facts,
      mark: { indexed: events.length, stamp, lastTime: events.at(-1)?.time ?? 0 },
    });
    written++;
  }
  for (const id of marks.keys()) if (!listed.has(id)) await index.drop(id);
  return written;
}

/** Where to index from: the mark, unless the log under it changed. */
function resumeAt(
  events: readonly SessionEvent[],
  indexed: number,
  lastTime: number | undefined,
): number {
  if (indexed === 0 || indexed > events.length) return 0;
  if (events[indexed - 1]?.time !== lastTime) return 0;
  for (let seq = indexed; seq < events.length; seq++) {
    if (events[seq]?.type === 'log/redaction') return 0;
  }
  return indexed;
}

/** The search of a store without an index: every searched session read and matched. */
async function scanStore(
  store: SessionStore,
  query: SearchQuery,
  options: SearchOptions & { readonly limit: number },
): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  const { sessions } = await everySession(store);
  const allowed = options.sessions === undefined ? undefined : new Set(options.sessions);
  for (const { header } of sessions) {
    if (allowed !== undefined && !allowed.has(header.id)) continue;
    const facts = sessionFacts(header);
    if (!kindSearched(facts.kind, options)) continue;
    if (options.project !== undefined && facts.project !== options.project) continue;
    const events = await loadQuietly(store, header);
    if (events === undefined) continue;
    for (const document of searchDocuments(events, 0, facts)) {
      if (options.since !== undefined && document.time < options.since) continue;
      if (options.until !== undefined && document.time >= options.until) continue;
      if (options.model !== undefined && document.model !== options.model) continue;
      if (options.tool !== undefined && !document.tools.split(' ').includes(options.tool)) continue;
      const match = scanMatch(query, document.text);
      if (match === undefined) continue;
      const { text: _text, ...rest } = document;
      hits.push({ session: header.id, ...rest, ...match });
    }
  }
  hits.sort((a, b) => b.score - a.score || a.session.localeCompare(b.session) || a.seq - b.seq);
  return hits.slice(0, options.limit);
}

async function loadQuietly(
  store: SessionStore,
  header: SessionHeader,
): Promise<readonly SessionEvent[] | undefined> {
  try {
    return (await store.load(header.id, { elideFinishedChunks: true })).events;
  } catch {
    return undefined;
  }
}
