/**
 * The search index of a store that has no database of its own (JSONL): an FTS5 database in a
 * file beside the logs. It is a cache of what the logs say: a file that is not the index (wrong
 * identity, unreadable, damaged) is deleted and built again from the logs, never trusted.
 */
import { rmSync } from 'node:fs';
import { driverCode } from './driver-errors.js';
import { loadDriver, type SqliteDatabase } from './schema.js';
import { Fts5SearchIndex } from './search-index.js';

/** Marks the file as palimpsest's search index, in `PRAGMA application_id` (ASCII `PaSx`). */
const INDEX_APPLICATION_ID = 0x50615378;
/** 2: the words folded by `foldWord`, FTS5 tokenizing them as ASCII (1 folded by `unicode61`). */
const INDEX_VERSION = 2;

/** An open index file: the index and its connection. */
export interface SearchFile {
  readonly path: string;
  readonly index: Fts5SearchIndex;
  /** Whether the file was (re)made by this open: every session is to be indexed. */
  readonly fresh: boolean;
  close(): void;
}

/** Whether a driver error says the file is not a sound database. */
export function isDamage(error: unknown): boolean {
  const code = driverCode(error);
  return code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT') === true;
}

/**
 * Opens (or makes) the index file at `path`. A file with another identity or one SQLite cannot
 * read is removed with its journal and made anew.
 *
 * @throws InvalidStoreError `DRIVER_NOT_INSTALLED` when better-sqlite3 is missing.
 */
export async function openSearchFile(path: string): Promise<SearchFile> {
  const Driver = await loadDriver();
  const attempt = (): SearchFile => {
    const db = new Driver(path);
    try {
      db.pragma('secure_delete = ON', { simple: true });
      db.pragma('trusted_schema = OFF', { simple: true });
      const id = Number(db.pragma('application_id', { simple: true }));
      const version = Number(db.pragma('user_version', { simple: true }));
      const empty =
        (db.prepare('SELECT count(*) AS n FROM sqlite_schema').get() as { n: number }).n === 0;
      const fresh = id === 0 && version === 0 && empty;
      if (!fresh && (id !== INDEX_APPLICATION_ID || version !== INDEX_VERSION)) {
        throw Object.assign(new Error(`${path} is not a search index`), { code: 'SQLITE_NOTADB' });
      }
      if (fresh) {
        db.pragma(`application_id = ${INDEX_APPLICATION_ID}`, { simple: true });
        db.pragma(`user_version = ${INDEX_VERSION}`, { simple: true });
      }
      const index = new Fts5SearchIndex(db, 'file');
      return { path, index, fresh, close: () => closeQuietly(db) };
    } catch (error) {
      closeQuietly(db);
      throw error;
    }
  };
  try {
    return attempt();
  } catch (error) {
    if (!isDamage(error)) throw error;
    removeSearchFile(path);
    return attempt();
  }
}

/** Deletes the index file at `path` and its journals, if present. */
export function removeSearchFile(path: string): void {
  for (const file of [path, `${path}-journal`, `${path}-wal`, `${path}-shm`]) {
    rmSync(file, { force: true });
  }
}

function closeQuietly(db: SqliteDatabase): void {
  try {
    if (db.open) db.close();
  } catch {
    // Closing a damaged file can fail; the file is removed or reopened next.
  }
}
