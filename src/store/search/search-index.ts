/**
 * The optional store capability behind `searchSessions`: an index of the documents of every
 * session (see `documents.ts`), brought up to date from a high-water mark per session. A store
 * that offers one (SQLite: FTS5 tables in its own database; PostgreSQL: a `tsvector` table with
 * a GIN index) implements {@link SearchIndexedStore}; the JSONL store gets a file of its own
 * beside its logs; any other store (memory, a wrapper such as `EncryptedStore`) is scanned.
 */
import type { SessionStore } from '../contract/session-store.js';
import type { SearchDocument, SessionFacts } from './documents.js';
import type { SearchHit, SearchOptions } from './hits.js';
import type { SearchQuery } from './query.js';

/** How far a session is indexed, and what the store said of it then. */
export interface IndexedSession {
  readonly id: string;
  /** Its documents below this seq are in the index. */
  readonly indexed: number;
  /**
   * What the store's listing said of the session when it was indexed (last write, event count,
   * size): a listing that says the same needs no look at the log.
   */
  readonly stamp: string;
  /** The time of event `indexed - 1`, to notice a log rewritten under the mark. */
  readonly lastTime: number;
}

/** The documents of one session from `fromSeq` on, replacing what the index held from there. */
export interface IndexWrite {
  readonly id: string;
  readonly fromSeq: number;
  readonly documents: readonly SearchDocument[];
  readonly facts: SessionFacts;
  readonly mark: Omit<IndexedSession, 'id'>;
}

/** A search index a backend keeps. */
export interface SearchIndex {
  /** Every session the index holds, and how far. */
  indexed(): Promise<ReadonlyMap<string, IndexedSession>>;
  /** Replaces a session's documents from `fromSeq` on and moves its mark, atomically. */
  write(entry: IndexWrite): Promise<void>;
  /** Removes a session's documents and mark. */
  drop(id: string): Promise<void>;
  /** Removes everything (a rebuild starts from this). */
  clear(): Promise<void>;
  /** The hits of a query, best first. */
  query(
    query: SearchQuery,
    options: SearchOptions & { readonly limit: number },
  ): Promise<SearchHit[]>;
}

/** A store that keeps a search index of its own. */
export interface SearchIndexedStore {
  /** The store's index, or `undefined` when it cannot keep one (a read-only connection). */
  searchIndex(): Promise<SearchIndex | undefined>;
}

/** Whether a store offers {@link SearchIndexedStore}. */
export function hasSearchIndex(store: SessionStore): store is SessionStore & SearchIndexedStore {
  return typeof (store as Partial<SearchIndexedStore>).searchIndex === 'function';
}
