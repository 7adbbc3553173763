/**
 * A fresh, empty store of each backend for tests that must hold on every one: JSONL and SQLite
 * in a temporary directory, PostgreSQL in a fresh schema when the suite has a server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';
import { freshSchema } from '../postgres/helpers.js';

/** `[backend name, a function giving the URL of a new empty store]` for every backend at hand. */
export function everyBackend(prefix: string): Array<[string, () => string]> {
  const directory = mkdtempSync(join(tmpdir(), `palimpsest-${prefix}-`));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const pgUrl = inject('pgUrl') ?? '';
  return [
    ['JSONL', () => `jsonl:${mkdtempSync(join(directory, 'jsonl-'))}`],
    ['SQLite', () => `sqlite:${join(mkdtempSync(join(directory, 'sqlite-')), 'sessions.db')}`],
    ...(pgUrl === ''
      ? []
      : [
          ['PostgreSQL', () => `${pgUrl}?schema=${freshSchema(prefix.replaceAll('-', '_'))}`] as [
            string,
            () => string,
          ],
        ]),
  ];
}
