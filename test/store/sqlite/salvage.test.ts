/**
 * Salvage of a database SQLite itself finds damaged: the rows before the damaged page still come
 * back, checked, and nothing after it.
 */
import { openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import { header, rejection, useTempDir, withRaw } from './helpers.js';

const tempDir = useTempDir();
const PAGE = 4096;

/** Notes of ~400 bytes each: a few thousand of them span hundreds of table pages. */
function notes(count: number): SessionEvent[] {
  return Array.from({ length: count }, (_, seq) => ({
    seq,
    time: 1000 + seq,
    type: 'app/note',
    data: { n: seq, text: `note ${seq} `.repeat(30) },
  })) as SessionEvent[];
}

describe('salvage of a database with a damaged page', () => {
  it('returns a strict prefix of the acknowledged events and the damage, wherever the page is', async () => {
    const file = join(tempDir(), 'sessions.db');
    const stored = notes(3000);
    const store = await openSqliteStore(file);
    await store.create(header('s'));
    for (let from = 0; from < stored.length; from += 100) {
      await store.append('s', stored.slice(from, from + 100), { expectedSeq: from });
    }
    await store.close();
    await withRaw(file, (db) => db.pragma('wal_checkpoint(TRUNCATE)'));
    const pages = statSync(file).size / PAGE;
    const pristine = readFileSync(file);
    let salvagedSome = 0;
    for (const fraction of [0.3, 0.5, 0.7, 0.9]) {
      const page = Math.floor(pages * fraction);
      const fd = openSync(file, 'r+');
      writeSync(fd, pristine, 0, pristine.length, 0);
      writeSync(fd, Buffer.alloc(PAGE, 0xa5), 0, PAGE, page * PAGE);
      const reader = await openSqliteStore(file, { readOnly: true });
      try {
        expect(await rejection(reader.load('s'))).toBeInstanceOf(CorruptLogError);
        const salvaged = await reader.load('s', { salvage: true });
        expect(salvaged.damage).toBeInstanceOf(CorruptLogError);
        expect(salvaged.events.length).toBeLessThan(stored.length);
        expect(salvaged.events).toEqual(stored.slice(0, salvaged.events.length));
        if (salvaged.events.length > 0) salvagedSome++;
      } finally {
        await reader.close();
      }
    }
    expect(salvagedSome).toBeGreaterThan(0);
  });
});
