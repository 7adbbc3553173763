import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  FormatVersionError,
  type SessionStore,
} from '../../../src/store/index.js';
import { openSqliteStore } from '../../../src/store/sqlite/index.js';
import {
  events,
  hashOf,
  header,
  type RawDatabase,
  rejection,
  useTempDir,
  withRaw,
} from './helpers.js';

const tempDir = useTempDir();
const opened: SessionStore[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
});

/** A store with session 's' of 6 events, damaged by `damage` through a raw connection. */
async function damaged(
  damage: (db: RawDatabase) => void,
): Promise<{ file: string; store: SessionStore }> {
  const file = join(tempDir(), 'sessions.db');
  const store = await openSqliteStore(file);
  opened.push(store);
  await store.create(header('s'));
  await store.append('s', events(0, 6), { expectedSeq: 0 });
  await withRaw(file, damage);
  return { file, store };
}

async function corruption(store: SessionStore): Promise<CorruptLogError> {
  const error = await rejection(store.load('s'));
  expect(error).toBeInstanceOf(CorruptLogError);
  return error as CorruptLogError;
}

describe('a damaged session is a CorruptLogError, never a skipped row', () => {
  it('names the missing seq when a row is deleted from the middle', async () => {
    const { file, store } = await damaged((db) => {
      db.prepare(
        "DELETE FROM events WHERE session_id = (SELECT key FROM sessions WHERE id = 's') AND seq = 2",
      ).run();
    });
    const error = await corruption(store);
    expect(error).toMatchObject({ file, row: 2 });
    expect(error.reason).toContain('no event with seq 2 (the next row has seq 3)');
    expect(error.message).toContain(`corrupt session log ${file} at row seq 2`);
  });

  it('names the row whose data is not JSON, without quoting it', async () => {
    const { store } = await damaged((db) => {
      db.prepare('UPDATE events SET data = \'{"secret": "canary-7731"\' WHERE seq = 4').run();
    });
    const error = await corruption(store);
    expect(error.row).toBe(4);
    expect(error.reason).toBe("the data of session 's' is not valid JSON");
    expect(error.message).not.toContain('canary');
  });

  it('names the row whose surface op or provenance is damaged', async () => {
    const { store } = await damaged((db) => {
      db.prepare("UPDATE events SET surface_op = 'append' WHERE seq = 3").run();
    });
    expect((await corruption(store)).row).toBe(3);
    const other = await damaged((db) => {
      db.prepare('UPDATE events SET source_event_seqs = \'{"a":1}\' WHERE seq = 1').run();
    });
    expect((await corruption(other.store)).reason).toContain('source_event_seqs');
  });

  it('names the row whose type code is in no row of event_types', async () => {
    const { store } = await damaged((db) => {
      db.pragma('foreign_keys = OFF');
      db.prepare('UPDATE events SET type = 999 WHERE seq = 2').run();
    });
    const error = await corruption(store);
    expect(error.row).toBe(2);
    expect(error.reason).toBe("session 's' has an event of unknown type code 999");
  });

  it('reports rows beyond the recorded length', async () => {
    const { store } = await damaged((db) => {
      db.prepare("UPDATE sessions SET next_seq = 4 WHERE id = 's'").run();
    });
    const error = await corruption(store);
    expect(error.row).toBe(4);
    expect(error.reason).toContain('beyond its recorded length of 4');
  });

  it('reports rows missing at the end', async () => {
    const { store } = await damaged((db) => {
      db.prepare('DELETE FROM events WHERE seq = 5').run();
    });
    const error = await corruption(store);
    expect(error.row).toBe(5);
    expect(error.reason).toContain('records 6 events but the rows end at seq 5');
  });

  it('reports a header that is not JSON or not a session header', async () => {
    const { store } = await damaged((db) => {
      db.prepare("UPDATE sessions SET header = '{' WHERE id = 's'").run();
    });
    expect((await corruption(store)).reason).toContain('header');
    const renamed = await damaged((db) => {
      db.prepare(
        `UPDATE sessions SET header = json_set(header, '$.id', 'other') WHERE id = 's'`,
      ).run();
    });
    expect((await corruption(renamed.store)).reason).toContain('differs from session id');
    // Listed as damaged, with the error a load gives, never left out or failing the listing.
    const page = await renamed.store.list();
    expect(page.sessions).toEqual([]);
    expect(page.damaged).toHaveLength(1);
    expect(page.damaged?.[0]?.id).toBe('s');
    expect(page.damaged?.[0]?.error).toBeInstanceOf(CorruptLogError);
  });

  it('refuses a header of a newer format version with FormatVersionError', async () => {
    const { file, store } = await damaged((db) => {
      db.prepare(
        `UPDATE sessions SET header = json_set(header, '$.version', 7) WHERE id = 's'`,
      ).run();
    });
    const error = await rejection(store.load('s'));
    expect(error).toBeInstanceOf(FormatVersionError);
    expect(error).toMatchObject({ file, found: 7, direction: 'newer' });
  });

  it('reads without writing: loading a damaged session leaves the database unchanged', async () => {
    const { file, store } = await damaged((db) => {
      db.prepare('DELETE FROM events WHERE seq = 1').run();
    });
    await store.close();
    const before = hashOf(file);
    const reader = await openSqliteStore(file);
    opened.push(reader);
    await rejection(reader.load('s'));
    await reader.close();
    expect(hashOf(file)).toBe(before);
  });
});
