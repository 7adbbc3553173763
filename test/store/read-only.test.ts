/**
 * Read-only opens change no stored byte: for SQLite the database, its live WAL and the ledger
 * (no checkpoint, no WAL deletion); for JSONL the directory listing and every file (no
 * directory, lock or temporary file created). Writes are refused.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidStoreError, openStore, type SessionStore } from '../../src/store/index.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { LEDGER_SUFFIX } from '../../src/store/sqlite/ledger.js';
import { events, hashOf, header, rejection } from './sqlite/helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-read-only-'));
  dirs.push(dir);
  return dir;
}

/** Every file of a directory with its hash, sorted. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((name) => `${name} ${hashOf(join(dir, name))}`);
}

async function readEverything(store: SessionStore): Promise<void> {
  const page = await store.list();
  for (const summary of page.sessions) {
    await store.load(summary.header.id);
    await store.load(summary.header.id, { elideFinishedChunks: true });
  }
  expect(await rejection(store.create(header('new')))).toBeInstanceOf(InvalidStoreError);
  expect(await rejection(store.append('a', events(4, 1), { expectedSeq: 4 }))).toBeInstanceOf(
    InvalidStoreError,
  );
  expect(await rejection(store.lock('a'))).toBeInstanceOf(InvalidStoreError);
  expect(await rejection(store.delete('a'))).toBeInstanceOf(InvalidStoreError);
}

describe('read-only stores', () => {
  it('SQLite: a live WAL is read and left as it was, and the database is not checkpointed', async () => {
    const dir = tempDir();
    const live = join(dir, 'live.db');
    const writer = await openSqliteStore(live);
    for (const id of ['a', 'b']) {
      await writer.create(header(id));
      await writer.append(id, events(0, 4), { expectedSeq: 0 });
    }
    const file = join(dir, 'copy.db');
    for (const suffix of ['', '-wal', LEDGER_SUFFIX])
      copyFileSync(`${live}${suffix}`, `${file}${suffix}`);
    await writer.close();
    const before = ['', '-wal', LEDGER_SUFFIX].map((suffix) => hashOf(`${file}${suffix}`));
    const store = await openStore(`sqlite:${file}`, { readOnly: true });
    expect((await store.list()).sessions).toHaveLength(2);
    await readEverything(store);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(['', '-wal', LEDGER_SUFFIX].map((suffix) => hashOf(`${file}${suffix}`))).toEqual(before);
  });

  it('SQLite: a missing database is an error and nothing is created', async () => {
    const dir = tempDir();
    const file = join(dir, 'none', 'x.db');
    expect(await rejection(openSqliteStore(file, { readOnly: true }))).toMatchObject({
      code: 'STORAGE',
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('JSONL: no file, lock, temp file or directory is created or changed', async () => {
    const dir = join(tempDir(), 'sessions');
    const writer = await openStore(`jsonl:${dir}`);
    for (const id of ['a', 'b']) {
      await writer.create(header(id));
      await writer.append(id, events(0, 4), { expectedSeq: 0 });
    }
    await writer.close();
    const before = snapshot(dir);
    const store = await openStore(`jsonl:${dir}`, { readOnly: true });
    await readEverything(store);
    await store.close();
    expect(snapshot(dir)).toEqual(before);
    const missing = join(tempDir(), 'missing');
    expect(await rejection(openStore(`jsonl:${missing}`, { readOnly: true }))).toMatchObject({
      code: 'STORAGE',
    });
    expect(existsSync(missing)).toBe(false);
  });
});
