/**
 * Store URLs: `jsonl:./dir` (the default), `sqlite:./file.db`, `postgres://user@host/db?schema=s`,
 * `memory:`.
 */

import { InvalidStoreError } from '../contract/errors.js';
import type { SessionStore } from '../contract/session-store.js';
import type { JsonlStoreOptions } from '../jsonl/index.js';
import { MemoryStore } from '../memory/store.js';
import type { PostgresStoreOptions } from '../postgres/index.js';
import type { SqliteStoreOptions } from '../sqlite/index.js';

/** Backend options for {@link openStore}; each applies only to its own scheme. */
export interface OpenStoreOptions {
  readonly jsonl?: JsonlStoreOptions;
  readonly sqlite?: SqliteStoreOptions;
  /** Options of a `postgres://` store (the URL gives the connection and the schema). */
  readonly postgres?: Omit<PostgresStoreOptions, 'pool' | 'connectionString' | 'schema'>;
  /**
   * Open for reading only, whatever the backend (overrides the backends' own `readOnly`):
   * nothing is created and no stored byte is changed; every write is refused.
   */
  readonly readOnly?: boolean;
}

/** Where sessions live when no URL is given. */
export const DEFAULT_STORE_URL = 'jsonl:./.palimpsest/sessions';

/** The schemes of store URLs. */
export type StoreScheme = 'jsonl' | 'sqlite' | 'postgres' | 'memory';

/**
 * A store URL taken apart: its scheme and what follows the colon (a path, for files; the whole
 * URL for PostgreSQL, whose `schema` query parameter names the store's schema).
 */
export interface StoreUrl {
  readonly scheme: StoreScheme;
  readonly path: string;
}

/**
 * Parses a store URL without opening anything.
 *
 * @throws InvalidStoreError for an unknown scheme, or a file scheme naming no path.
 */
export function parseStoreUrl(url: string): StoreUrl {
  const colon = url.indexOf(':');
  const scheme = colon === -1 ? '' : url.slice(0, colon);
  const rest = colon === -1 ? url : url.slice(colon + 1);
  switch (scheme) {
    case 'jsonl':
    case 'sqlite':
      if (rest === '')
        throw new InvalidStoreError('INVALID_URL', `store URL '${url}' names no path`);
      return { scheme, path: rest };
    case 'memory':
      return { scheme, path: rest };
    case 'postgres':
    case 'postgresql':
      if (!rest.startsWith('//')) {
        throw new InvalidStoreError(
          'INVALID_URL',
          `store URL '${url.slice(0, 80)}' is not a PostgreSQL URL; expected postgres://user@host:port/database`,
        );
      }
      return { scheme: 'postgres', path: url };
    default:
      throw new InvalidStoreError(
        'UNKNOWN_SCHEME',
        `unknown store URL '${url.slice(0, 80)}'; expected jsonl:<directory>, sqlite:<file>, postgres://user@host/database or memory:`,
      );
  }
}

/**
 * Opens the store a URL names. Backends are loaded on demand, so an application that only uses
 * JSONL never loads the SQLite driver.
 *
 * @throws InvalidStoreError for an unknown scheme or an empty path.
 */
export async function openStore(
  url: string = DEFAULT_STORE_URL,
  options: OpenStoreOptions = {},
): Promise<SessionStore> {
  const { scheme, path } = parseStoreUrl(url);
  switch (scheme) {
    case 'jsonl': {
      const { openJsonlStore } = await import('../jsonl/index.js');
      // A session deleted through the store leaves the search index file at once, row by row.
      const store: SessionStore = await openJsonlStore(path, {
        onSessionDeleted: async (id) => {
          const { forgetInSearchIndex } = await import('./search.js');
          await forgetInSearchIndex(store, [id]);
        },
        ...withReadOnly(options.jsonl, options.readOnly),
      });
      return store;
    }
    case 'sqlite': {
      const { openSqliteStore } = await import('../sqlite/index.js');
      return openSqliteStore(path, withReadOnly(options.sqlite, options.readOnly));
    }
    case 'postgres': {
      const { openPostgresStore } = await import('../postgres/index.js');
      const { connectionString, schema } = splitSchema(path);
      return openPostgresStore({
        ...options.postgres,
        connectionString,
        ...(schema === undefined ? {} : { schema }),
        ...(options.readOnly === undefined ? {} : { readOnly: options.readOnly }),
      });
    }
    case 'memory':
      return new MemoryStore();
  }
}

/** The `schema` query parameter of a PostgreSQL URL, taken out (the server would refuse it). */
function splitSchema(url: string): { connectionString: string; schema?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new InvalidStoreError('INVALID_URL', `store URL is not a valid PostgreSQL URL`, {
      cause: error,
    });
  }
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  return schema === undefined
    ? { connectionString: parsed.toString() }
    : { connectionString: parsed.toString(), schema };
}

function withReadOnly<T extends { readonly readOnly?: boolean }>(
  options: T | undefined,
  readOnly: boolean | undefined,
): T | undefined {
  return readOnly === undefined ? options : ({ ...options, readOnly } as T);
}
