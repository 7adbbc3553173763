/**
 * Everything a store holds, as bytes, for tests that search it for what must not be there: its
 * files (JSONL, SQLite with its WAL and ledger), or its rows as `pg_dump` prints them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Every byte of every file under `directory`, as Latin-1 text (a byte search). */
export function filesUnder(directory: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory())
      for (const [inner, text] of filesUnder(path)) found.set(inner, text);
    else found.set(path, readFileSync(path).toString('latin1'));
  }
  return found;
}

/** `pg_dump` of the schema a PostgreSQL store URL names. */
export function pgDump(url: string): string {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  parsed.search = '';
  const binary = ['/usr/lib/postgresql/15/bin/pg_dump', 'pg_dump'].find(
    (candidate) => !candidate.startsWith('/') || existsSync(candidate),
  ) as string;
  return execFileSync(binary, ['--data-only', `--schema=${schema}`, parsed.toString()], {
    encoding: 'latin1',
    maxBuffer: 256 * 1024 * 1024,
  });
}

/** Everything the store at `url` holds, as bytes: its files, or its rows through `pg_dump`. */
export function storedBytes(url: string): Map<string, string> {
  if (url.startsWith('jsonl:')) return filesUnder(url.slice('jsonl:'.length));
  if (url.startsWith('sqlite:')) return filesUnder(dirname(url.slice('sqlite:'.length)));
  return new Map([['pg_dump', pgDump(url)]]);
}
