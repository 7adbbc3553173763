/**
 * Store URLs: `jsonl:./dir` (the default), `sqlite:./file.db`, `memory:`.
 */
import type { SessionStore } from './contract.js';
import { InvalidStoreError } from './errors.js';
import type { JsonlStoreOptions } from './jsonl/index.js';
import { MemoryStore } from './memory.js';
import type { SqliteStoreOptions } from './sqlite/index.js';

/** Backend options for {@link openStore}; each applies only to its own scheme. */
export interface OpenStoreOptions {
  readonly jsonl?: JsonlStoreOptions;
  readonly sqlite?: SqliteStoreOptions;
}

/** Where sessions live when no URL is given. */
export const DEFAULT_STORE_URL = 'jsonl:./.palimpsest/sessions';

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
  const colon = url.indexOf(':');
  const scheme = colon === -1 ? '' : url.slice(0, colon);
  const rest = colon === -1 ? url : url.slice(colon + 1);
  switch (scheme) {
    case 'jsonl': {
      const { openJsonlStore } = await import('./jsonl/index.js');
      return openJsonlStore(requirePath(url, rest), options.jsonl);
    }
    case 'sqlite': {
      const { openSqliteStore } = await import('./sqlite/index.js');
      return openSqliteStore(requirePath(url, rest), options.sqlite);
    }
    case 'memory':
      return new MemoryStore();
    default:
      throw new InvalidStoreError(
        `unknown store URL '${url.slice(0, 80)}'; expected jsonl:<directory>, sqlite:<file> or memory:`,
      );
  }
}

function requirePath(url: string, path: string): string {
  if (path === '') throw new InvalidStoreError(`store URL '${url}' names no path`);
  return path;
}
