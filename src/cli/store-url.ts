/**
 * Store URLs in the CLI: as a person gives them (a bare directory or `.db` path is a store too),
 * and as the CLI prints them, without the password of a `postgres://user:password@host` URL or
 * of a `password=` query parameter, so a command's output never holds a credential.
 */

import { closeSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { CliError, EXIT } from './failure.js';

/** Query parameters of a connection URL that hold a secret. */
const SECRET_PARAMETERS = new Set(['password', 'sslpassword']);

/** `url` with every credential replaced by `***`; a URL it cannot parse is shown by scheme only. */
export function printableStoreUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//i.test(url)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url.slice(0, url.indexOf(':'))}:(connection string)`;
  }
  if (parsed.password !== '') parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMETERS.has(key.toLowerCase())) parsed.searchParams.set(key, '***');
  }
  return parsed.toString();
}

/** The schemes a store URL may start with (`openStore`'s). */
const STORE_SCHEMES = /^(jsonl|sqlite|memory|postgres|postgresql):/i;
/** File names a bare path is read as an SQLite database by, before looking at the file. */
const SQLITE_NAME = /\.(db|sqlite|sqlite3)$/i;
/** The first 16 bytes of every SQLite database file. */
const SQLITE_MAGIC = 'SQLite format 3\0';

/**
 * The store URL a `--store` value names. A URL is kept as it is; a bare path is read as a store
 * the way a person means it: an existing directory, or a new path without an SQLite file name,
 * is a JSONL store (`jsonl:PATH`); a `.db`, `.sqlite` or `.sqlite3` path, or an existing file
 * that is an SQLite database, is an SQLite store (`sqlite:PATH`). Any other existing file is
 * refused: nothing would be created beside it by a guess.
 */
export function storeUrlOf(value: string): string {
  if (STORE_SCHEMES.test(value)) return value;
  let stats: Stats | undefined;
  try {
    stats = statSync(value);
  } catch {
    stats = undefined;
  }
  if (stats?.isDirectory() === true) return `jsonl:${value}`;
  if (SQLITE_NAME.test(value)) return `sqlite:${value}`;
  if (stats === undefined) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(value) && !value.includes('/')) {
      throw new CliError(
        `unknown store URL '${value.slice(0, 80)}': expected jsonl:DIR, sqlite:FILE, postgres://user@host/database, memory:, or the path of a store directory or SQLite file`,
        EXIT.usage,
      );
    }
    return `jsonl:${value}`;
  }
  if (stats.isFile() && startsWithSqliteMagic(value)) return `sqlite:${value}`;
  throw new CliError(
    `${value} is neither a store directory nor an SQLite database: expected a jsonl store's directory, a .db file, or a URL (jsonl:DIR, sqlite:FILE, postgres://…)`,
    EXIT.usage,
  );
}

function startsWithSqliteMagic(path: string): boolean {
  const bytes = Buffer.alloc(SQLITE_MAGIC.length);
  let descriptor: number | undefined;
  try {
    descriptor = openSync(path, 'r');
    return (
      readSync(descriptor, bytes, 0, bytes.length, 0) === bytes.length &&
      bytes.toString('latin1') === SQLITE_MAGIC
    );
  } catch {
    return false;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}
