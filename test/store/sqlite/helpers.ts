/**
 * Fixtures of the SQLite store tests: temp directories, raw connections, file hashes, events.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { SessionEvent, SessionHeader } from '../../../src/core/index.js';
import { loadDriver, type SqliteDatabase } from '../../../src/store/sqlite/schema.js';

/** A fresh temporary directory per test, removed after it. */
export function useTempDir(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'palimpsest-sqlite-'));
    dirs.push(dir);
    return dir;
  };
}

/** A raw better-sqlite3 connection with the extra calls the tests need. */
export interface RawDatabase extends SqliteDatabase {
  pragma(source: string, options?: { readonly simple: boolean }): unknown;
}

/** Opens a raw connection to `file`, bypassing the store. */
export async function raw(
  file: string,
  options: { readonly?: boolean } = {},
): Promise<RawDatabase> {
  const Database = await loadDriver();
  return new Database(file, options) as RawDatabase;
}

/** Runs `fn` on a raw connection and closes it. */
export async function withRaw<T>(file: string, fn: (db: RawDatabase) => T): Promise<T> {
  const db = await raw(file);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** SHA-256 of a file's bytes. */
export function hashOf(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The names in a directory, sorted. */
export function listing(dir: string): string[] {
  return readdirSync(dir).sort();
}

export function header(id: string, createdAt = 1_700_000_000_000): SessionHeader {
  return { version: 1, id, createdAt };
}

/** `count` simple events from seq `from`: notes, with a user message every third. */
export function events(from: number, count: number): SessionEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const seq = from + i;
    return seq % 3 === 0
      ? {
          seq,
          time: 1000 + seq,
          type: 'user/message',
          data: { id: `u${seq}`, role: 'user', content: [{ type: 'text', text: `hi ${seq}` }] },
          surfaceOp: 'append',
        }
      : { seq, time: 1000 + seq, type: 'app/note', data: { n: seq } };
  }) as SessionEvent[];
}

/** Awaits a promise that must reject and returns the reason. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
