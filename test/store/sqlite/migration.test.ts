/**
 * A store of the previous schema version (4, before the database named its ledger) keeps
 * working: a read-only open reads it as it is, changing nothing; the first writable open
 * migrates it beside its ledger, in one transaction; without its ledger it is refused like a
 * paired database (a schema-4 database always had one). The fixture was written by palimpsest
 * at schema 4: sessions with events, an empty one, a deleted one, a finished message's chunk run.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../../src/store/index.js';
import { openSqliteStore, SCHEMA_VERSION } from '../../../src/store/sqlite/index.js';
import { PREVIOUS_SCHEMA_VERSION } from '../../../src/store/sqlite/schema.js';
import { events, hashOf, header, rejection, useTempDir, withRaw } from './helpers.js';

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'sqlite-v4', 'sessions.db');
const tempDir = useTempDir();

/** A copy of the schema-4 store (database and, unless left out, its ledger). */
function v4Copy(withLedger = true): string {
  const file = join(tempDir(), 'sessions.db');
  copyFileSync(FIXTURE, file);
  if (withLedger) copyFileSync(`${FIXTURE}-lengths`, `${file}-lengths`);
  return file;
}

const userVersion = (file: string) =>
  withRaw(file, (db) => db.pragma('user_version', { simple: true }));

/** What every open must read from the fixture. */
async function expectFixtureSessions(file: string, readOnly: boolean): Promise<void> {
  const store = await openSqliteStore(file, { readOnly });
  try {
    const page = await store.list();
    expect(page.damaged).toBeUndefined();
    expect(page.sessions.map((summary) => [summary.header.id, summary.eventCount])).toEqual([
      ['chunks', 6],
      ['empty', 0],
      ['kept', 12],
    ]);
    expect((await store.load('kept')).events).toEqual(events(0, 12));
    const chunks = await store.load('chunks');
    expect(chunks.events.map((event) => event.type)).toEqual([
      'turn/start',
      'step/start',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/message',
    ]);
    expect(await rejection(store.load('gone'))).toMatchObject({ code: 'NOT_FOUND' });
  } finally {
    await store.close();
  }
}

describe(`a database of schema version ${PREVIOUS_SCHEMA_VERSION}`, () => {
  it('is read as it is by a read-only open, which changes no byte of it or its ledger', async () => {
    const file = v4Copy();
    expect(await userVersion(file)).toBe(PREVIOUS_SCHEMA_VERSION);
    const before = [hashOf(file), hashOf(`${file}-lengths`)];
    await expectFixtureSessions(file, true);
    expect([hashOf(file), hashOf(`${file}-lengths`)]).toEqual(before);
  });

  it('is migrated by the first writable open: paired with its ledger, every session vouched for up to what the ledger recorded', async () => {
    const file = v4Copy();
    await expectFixtureSessions(file, false);
    await withRaw(file, (db) => {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.prepare('SELECT id, next_seq, vouched FROM sessions ORDER BY key').all()).toEqual([
        { id: 'kept', next_seq: 12, vouched: 12 },
        { id: 'empty', next_seq: 0, vouched: 0 },
        { id: 'chunks', next_seq: 6, vouched: 6 },
      ]);
      const { ledger_id } = db.prepare('SELECT ledger_id FROM ledger_pairing').get() as {
        ledger_id: string;
      };
      expect(readFileSync(`${file}-lengths`, 'utf8')).toContain(`["i","${ledger_id}"]`);
    });
    // The same columns, in the same order, as a new database.
    const fresh = join(tempDir(), 'fresh.db');
    await (await openSqliteStore(fresh)).close();
    const columns = (path: string) =>
      withRaw(path, (db) =>
        ['sessions', 'ledger_pairing'].map((table) =>
          db
            .prepare('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)')
            .all(table),
        ),
      );
    expect(await columns(file)).toEqual(await columns(fresh));
    const store = await openSqliteStore(file);
    await store.append('kept', events(12, 3), { expectedSeq: 12 });
    await store.create(header('after'));
    await store.close();
    const reader = await openSqliteStore(file, { readOnly: true });
    expect((await reader.load('kept')).events).toEqual(events(0, 15));
    await reader.close();
  });

  it('without its ledger is LEDGER_MISSING, read-only or not, and is not migrated', async () => {
    const file = v4Copy(false);
    const before = hashOf(file);
    for (const readOnly of [true, false]) {
      const error = await rejection(openSqliteStore(file, { readOnly }));
      expect(error).toBeInstanceOf(LedgerError);
      expect(error).toMatchObject({ code: 'LEDGER_MISSING' });
      expect((error as Error).message).toContain(
        `is of schema version ${PREVIOUS_SCHEMA_VERSION}, which always kept a ledger`,
      );
    }
    expect(hashOf(file)).toBe(before);
    expect(await userVersion(file)).toBe(PREVIOUS_SCHEMA_VERSION);
  });

  it('is left as it was by a migration that fails before its commit, and the next open migrates it with the same identity', async () => {
    const file = v4Copy();
    const failed = await rejection(
      openSqliteStore(file, {
        failpoint: (name) => {
          if (name === 'pair:before-commit') throw new Error('crash before the migration commits');
        },
      }),
    );
    expect(failed).toBeInstanceOf(Error);
    expect(await userVersion(file)).toBe(PREVIOUS_SCHEMA_VERSION);
    await expectFixtureSessions(file, false);
    const identities = readFileSync(`${file}-lengths`, 'utf8').match(/\["i","[^"]+"\]/g) ?? [];
    expect(new Set(identities).size).toBe(1);
  });
});
