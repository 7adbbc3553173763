/**
 * The backends every harness runs against, as one list: a PostgreSQL backend joins the suite as
 * one more entry here. Each entry says how to open a store at a location and, for backends whose
 * state is in local files, which files make up that state (what a copy or a damage case takes).
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SessionStore } from '../../../src/store/index.js';

export interface BackendUnderTest {
  readonly name: 'jsonl' | 'sqlite';
  /** A fresh store location inside `dir`. */
  location(dir: string): string;
  /** The store URL the CLI takes for that location. */
  url(location: string): string;
  open(location: string, options?: { readOnly?: boolean }): Promise<SessionStore>;
  /** The files of the store's durable state that exist now (never locks or SQLite's -shm). */
  files(location: string): string[];
  /** Copies the durable state into `dir` and returns the copy's location. */
  copy(location: string, dir: string): string;
}

const jsonl: BackendUnderTest = {
  name: 'jsonl',
  location: (dir) => join(dir, 'sessions'),
  url: (location) => `jsonl:${location}`,
  async open(location, options = {}) {
    const { openJsonlStore } = await import('../../../src/store/jsonl/index.js');
    return openJsonlStore(location, { readOnly: options.readOnly === true });
  },
  files: (location) =>
    existsSync(location)
      ? readdirSync(location)
          .filter((name) => name.endsWith('.jsonl'))
          .sort()
          .map((name) => join(location, name))
      : [],
  copy(location, dir) {
    const target = join(dir, basename(location));
    if (existsSync(location)) cpSync(location, target, { recursive: true });
    else mkdirSync(target, { recursive: true });
    return target;
  },
};

/** The files of a SQLite store: the database, its WAL and the ledger (-shm holds no data). */
export const SQLITE_SUFFIXES = ['', '-wal', '-lengths'] as const;

const sqlite: BackendUnderTest = {
  name: 'sqlite',
  location: (dir) => join(dir, 'sessions.db'),
  url: (location) => `sqlite:${location}`,
  async open(location, options = {}) {
    const { openSqliteStore } = await import('../../../src/store/sqlite/index.js');
    return openSqliteStore(location, { readOnly: options.readOnly === true });
  },
  files: (location) =>
    SQLITE_SUFFIXES.map((suffix) => `${location}${suffix}`).filter((file) => existsSync(file)),
  copy(location, dir) {
    const target = join(dir, basename(location));
    for (const suffix of SQLITE_SUFFIXES) {
      if (existsSync(`${location}${suffix}`))
        copyFileSync(`${location}${suffix}`, `${target}${suffix}`);
    }
    return target;
  },
};

export const BACKENDS: readonly BackendUnderTest[] = [jsonl, sqlite];
