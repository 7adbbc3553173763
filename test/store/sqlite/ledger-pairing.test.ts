/**
 * A SQLite database and its ledger pair up (src/store/sqlite/pairing.ts): a copy of the database
 * without its ledger, with another database's, or with an older copy of its own, is detected
 * (`LedgerError`), never read as if the ledger vouched for it and never given a ledger rebuilt
 * from it; a database restored from an older copy beside its newer ledger reports what it lost;
 * `adoptSqliteLedger` is the explicit way back, and says what it vouches for anew.
 */
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFailure, EXIT } from '../../../src/cli/failure.js';
import {
  CorruptLogError,
  LedgerError,
  type LedgerErrorCode,
  openSession,
} from '../../../src/store/index.js';
import {
  adoptSqliteLedger,
  openSqliteStore,
  type SqliteStore,
} from '../../../src/store/sqlite/index.js';
import { events, hashOf, header, listing, rejection, useTempDir, withRaw } from './helpers.js';

const tempDir = useTempDir();

/** Opens `file`, runs `work` on the store, closes it (each open fsyncs the ledger). */
async function withStore<T>(
  file: string,
  work: (store: SqliteStore) => Promise<T>,
  readOnly = false,
): Promise<T> {
  const store = await openSqliteStore(file, { readOnly });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Appends `batches` batches of 3 events to session `id` (created when new). */
async function grow(store: SqliteStore, id: string, batches: number): Promise<void> {
  let next = await store.load(id).then(
    (loaded) => loaded.events.length,
    async () => {
      await store.create(header(id));
      return 0;
    },
  );
  for (let n = 0; n < batches; n++) {
    await store.append(id, events(next, 3), { expectedSeq: next });
    next += 3;
  }
}

/** A copy of the database file alone (closed stores leave no -wal) under another name. */
function copyDatabase(file: string, to: string): string {
  copyFileSync(file, to);
  return to;
}

async function ledgerError(promise: Promise<unknown>, code: LedgerErrorCode): Promise<LedgerError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(LedgerError);
  expect(error).toMatchObject({ code });
  return error as LedgerError;
}

/**
 * Two stores in `dir`, `one.db` (session `a`) and `other.db` (session `z`), the other's ledger
 * copied beside the first database in place of its own.
 */
async function foreignLedger(dir: string): Promise<{ file: string; other: string }> {
  const file = join(dir, 'one.db');
  const other = join(dir, 'other.db');
  await withStore(file, (store) => grow(store, 'a', 1));
  await withStore(other, (store) => grow(store, 'z', 1));
  copyFileSync(`${other}-lengths`, `${file}-lengths`);
  return { file, other };
}

async function pairingId(file: string): Promise<string> {
  return withRaw(
    file,
    (db) =>
      (db.prepare('SELECT ledger_id FROM ledger_pairing').get() as { ledger_id: string }).ledger_id,
  );
}

describe('pairing a database with its ledger', () => {
  it('a new database names the identity its new ledger begins with', async () => {
    const file = join(tempDir(), 'sessions.db');
    await withStore(file, (store) => grow(store, 's', 1));
    const first = readFileSync(`${file}-lengths`, 'utf8').split('\n')[0] ?? '';
    expect(first).toMatch(/^\["i","[0-9a-f-]{36}"\] [0-9a-f]{8}$/);
    expect(first).toContain(await pairingId(file));
  });

  it('a deleted ledger is LEDGER_MISSING, read-only or not, and no ledger is made', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, (store) => grow(store, 's', 2));
    rmSync(`${file}-lengths`);
    const before = hashOf(file);
    const readOnly = await ledgerError(openSqliteStore(file, { readOnly: true }), 'LEDGER_MISSING');
    expect(readOnly.message).toContain(`no ledger at ${file}-lengths`);
    expect(readOnly.message).toContain('was paired with the ledger');
    await ledgerError(openSqliteStore(file), 'LEDGER_MISSING');
    expect(existsSync(`${file}-lengths`)).toBe(false);
    expect(hashOf(file)).toBe(before);
  });

  it('a database copied without its ledger and opened for writing is refused, not given one', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, (store) => grow(store, 's', 2));
    const copy = copyDatabase(file, join(dir, 'copy.db'));
    const error = await ledgerError(openSqliteStore(copy), 'LEDGER_MISSING');
    expect(error).toMatchObject({ file: copy, ledger: `${copy}-lengths` });
    expect(listing(dir)).not.toContain('copy.db-lengths');
  });

  it('the ledger of another database is LEDGER_MISMATCH, naming both identities', async () => {
    const { file: one, other } = await foreignLedger(tempDir());
    const otherLedger = readFileSync(`${other}-lengths`);
    for (const readOnly of [true, false]) {
      const error = await ledgerError(openSqliteStore(one, { readOnly }), 'LEDGER_MISMATCH');
      expect(error.message).toContain(`names the ledger '${await pairingId(one)}'`);
      expect(error.message).toContain(`named '${await pairingId(other)}'`);
    }
    expect(readFileSync(`${one}-lengths`)).toEqual(otherLedger);
  });

  it('a new database beside a ledger that records sessions is not paired with it', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, (store) => grow(store, 's', 1));
    const ledger = readFileSync(`${file}-lengths`);
    rmSync(file);
    const error = await ledgerError(openSqliteStore(file), 'LEDGER_MISMATCH');
    expect(error.message).toContain('names no ledger, but the ledger');
    expect(readFileSync(`${file}-lengths`)).toEqual(ledger);
    // Adopting sets that ledger aside and starts the new database's own.
    expect((await adoptSqliteLedger(file)).found).toBe('foreign');
    await withStore(file, (store) => grow(store, 't', 1));
  });

  it('a ledger from an older copy of the database is LEDGER_STALE for each session it cannot vouch for', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, async (store) => {
      for (const id of ['grown', 'twice', 'once', 'still']) await grow(store, id, 1);
    });
    copyFileSync(`${file}-lengths`, join(dir, 'older-lengths'));
    await withStore(file, async (store) => {
      // Three appends back to back: the row vouches at least for the first.
      await grow(store, 'grown', 3);
      await grow(store, 'twice', 1);
      await grow(store, 'once', 1);
      await grow(store, 'new', 2);
    });
    // Two writes apart in time (another open): the row vouches for the first.
    await withStore(file, (store) => grow(store, 'twice', 1));
    copyFileSync(join(dir, 'older-lengths'), `${file}-lengths`);
    await withStore(
      file,
      async (store) => {
        const stale = await ledgerError(store.load('grown'), 'LEDGER_STALE');
        expect(stale.sessionId).toBe('grown');
        expect(stale.message).toMatch(
          /has 12 events .* had recorded (6|9) of them on disk, but the ledger .* records 3/,
        );
        expect((await ledgerError(store.load('twice'), 'LEDGER_STALE')).message).toMatch(
          /has 9 events .* had recorded 6 of them on disk, but the ledger .* records 3/,
        );
        await ledgerError(store.load('new'), 'LEDGER_STALE');
        await ledgerError(store.summarize('grown'), 'LEDGER_STALE');
        // One commit past what the ledger saw is what a crash between a commit and its record
        // leaves: not a stale ledger.
        expect((await store.load('once')).events).toEqual(events(0, 6));
        expect((await store.load('still')).events).toEqual(events(0, 3));
        const page = await store.list();
        expect(page.sessions.map((summary) => summary.header.id).sort()).toEqual(['once', 'still']);
        expect(
          (page.damaged ?? []).map((damaged) => [damaged.id, damaged.error.code]).sort(),
        ).toEqual([
          ['grown', 'LEDGER_STALE'],
          ['new', 'LEDGER_STALE'],
          ['twice', 'LEDGER_STALE'],
        ]);
      },
      true,
    );
    // A writer cannot re-vouch a stale session by appending to it; the others go on.
    await withStore(file, async (store) => {
      await ledgerError(store.append('grown', events(12, 3), { expectedSeq: 12 }), 'LEDGER_STALE');
      await ledgerError(openSession(store, 'grown'), 'LEDGER_STALE');
      await store.append('still', events(3, 3), { expectedSeq: 3 });
    });
    await withStore(
      file,
      async (store) => {
        await ledgerError(store.load('grown'), 'LEDGER_STALE');
        expect((await store.load('still')).events).toEqual(events(0, 6));
      },
      true,
    );
    await withRaw(file, (db) => {
      expect(db.prepare("SELECT next_seq FROM sessions WHERE id = 'grown'").get()).toEqual({
        next_seq: 12,
      });
    });
  });

  it('a database restored from an older copy beside its newer ledger reports what it lost', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, async (store) => {
      await grow(store, 'grown', 1);
      await grow(store, 'kept', 1);
    });
    copyDatabase(file, join(dir, 'older.db'));
    await withStore(file, async (store) => {
      await grow(store, 'grown', 1);
      await grow(store, 'later', 1);
    });
    copyFileSync(join(dir, 'older.db'), file);
    await withStore(
      file,
      async (store) => {
        const lost = await rejection(store.load('grown'));
        expect(lost).toBeInstanceOf(CorruptLogError);
        expect((lost as Error).message).toContain(
          'has 3 events in the database but 6 were committed',
        );
        expect(await rejection(store.load('later'))).toBeInstanceOf(CorruptLogError);
        expect((await store.load('kept')).events).toEqual(events(0, 3));
        const page = await store.list();
        expect((page.damaged ?? []).map((damaged) => damaged.id).sort()).toEqual([
          'grown',
          'later',
        ]);
      },
      true,
    );
  });
});

describe('adoptSqliteLedger', () => {
  it('gives a database without its ledger a new one, naming the sessions it vouches for anew', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, async (store) => {
      await grow(store, 'a', 2);
      await grow(store, 'b', 1);
    });
    const before = await pairingId(file);
    rmSync(`${file}-lengths`);
    const report = await adoptSqliteLedger(file);
    expect(report).toEqual({
      file,
      ledger: `${file}-lengths`,
      found: 'missing',
      sessions: 2,
      newlyVouched: [
        { id: 'a', events: 6, recorded: -1 },
        { id: 'b', events: 3, recorded: -1 },
      ],
      stillDamaged: [],
    });
    expect(await pairingId(file)).not.toBe(before);
    await withStore(file, async (store) => {
      expect((await store.load('a')).events).toEqual(events(0, 6));
      await grow(store, 'b', 1);
    });
    // The new ledger detects what it recorded from now on.
    copyDatabase(file, join(dir, 'before-c.db'));
    await withStore(file, (store) => grow(store, 'c', 1));
    copyFileSync(join(dir, 'before-c.db'), file);
    await withStore(
      file,
      async (store) => {
        expect(await rejection(store.load('c'))).toBeInstanceOf(CorruptLogError);
      },
      true,
    );
  });

  it('brings a stale ledger up to the database, keeping it', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, (store) => grow(store, 'a', 1));
    copyFileSync(`${file}-lengths`, join(dir, 'older-lengths'));
    await withStore(file, (store) => grow(store, 'a', 2));
    copyFileSync(join(dir, 'older-lengths'), `${file}-lengths`);
    const id = await pairingId(file);
    const report = await adoptSqliteLedger(file);
    expect(report).toMatchObject({
      found: 'own',
      newlyVouched: [{ id: 'a', events: 9, recorded: 3 }],
      stillDamaged: [],
    });
    expect(await pairingId(file)).toBe(id);
    await withStore(file, async (store) => {
      expect((await store.load('a')).events).toEqual(events(0, 9));
      await grow(store, 'a', 1);
    });
  });

  it('moves another database’s ledger aside, untouched, and makes a new one', async () => {
    const { file } = await foreignLedger(tempDir());
    const foreign = readFileSync(`${file}-lengths`);
    const report = await adoptSqliteLedger(file);
    expect(report.found).toBe('foreign');
    expect(report.setAside).toMatch(/one\.db-lengths\.set-aside-\d+$/);
    expect(readFileSync(report.setAside as string)).toEqual(foreign);
    expect(report.newlyVouched).toEqual([{ id: 'a', events: 3, recorded: -1 }]);
    await withStore(file, async (store) => {
      expect((await store.load('a')).events).toEqual(events(0, 3));
    });
  });

  it('vouches for nothing the kept ledger contradicts: a lost session stays damaged', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    await withStore(file, (store) => grow(store, 'a', 1));
    copyDatabase(file, join(dir, 'older.db'));
    await withStore(file, async (store) => {
      await grow(store, 'a', 1);
      await grow(store, 'b', 1);
    });
    copyFileSync(join(dir, 'older.db'), file);
    const report = await adoptSqliteLedger(file);
    expect(report).toMatchObject({ found: 'own', newlyVouched: [], stillDamaged: ['a', 'b'] });
    await withStore(file, async (store) => {
      expect(await rejection(store.load('a'))).toBeInstanceOf(CorruptLogError);
    });
  });

  it('changes nothing a paired, up-to-date store needs, and can run again', async () => {
    const file = join(tempDir(), 'sessions.db');
    await withStore(file, (store) => grow(store, 'a', 2));
    const id = await pairingId(file);
    for (let run = 0; run < 2; run++) {
      expect(await adoptSqliteLedger(file)).toMatchObject({
        found: 'own',
        sessions: 1,
        newlyVouched: [],
        stillDamaged: [],
      });
    }
    expect(await pairingId(file)).toBe(id);
    await withStore(file, async (store) => {
      expect((await store.load('a')).events).toEqual(events(0, 6));
    });
  });
});

describe('every LedgerError code', () => {
  /** Makes the condition in `dir`; returns the failing operation's promise. */
  const cases: Record<LedgerErrorCode, { reach(dir: string): Promise<unknown>; says: RegExp[] }> = {
    LEDGER_MISSING: {
      reach: async (dir) => {
        const file = join(dir, 'a.db');
        await withStore(file, (store) => grow(store, 's', 1));
        rmSync(`${file}-lengths`);
        return openSqliteStore(file);
      },
      says: [
        /was paired with the ledger .* on \d{4}-/,
        /but there is no ledger at .*a\.db-lengths/,
      ],
    },
    LEDGER_MISMATCH: {
      reach: async (dir) => openSqliteStore((await foreignLedger(dir)).file, { readOnly: true }),
      says: [/names the ledger '[0-9a-f-]+'/, /is named '[0-9a-f-]+': it is another database's/],
    },
    LEDGER_STALE: {
      reach: async (dir) => {
        const file = join(dir, 'a.db');
        await withStore(file, (store) => grow(store, 's', 1));
        copyFileSync(`${file}-lengths`, join(dir, 'older'));
        for (let open = 0; open < 2; open++) await withStore(file, (store) => grow(store, 's', 1));
        copyFileSync(join(dir, 'older'), `${file}-lengths`);
        return withStore(file, (store) => store.load('s'), true);
      },
      says: [
        /whose row says its ledger had recorded 6 of them on disk/,
        /records 3: the ledger is older/,
      ],
    },
  };

  it.each(Object.keys(cases) as LedgerErrorCode[])(
    '%s is reachable, says what was expected and what was found, and exits 4 in the CLI',
    async (code) => {
      const { reach, says } = cases[code];
      const error = await ledgerError(reach(tempDir()), code);
      for (const pattern of says) expect(error.message).toMatch(pattern);
      expect(error.message).toContain('palimpsest repair --adopt-ledger');
      expect(describeFailure(error).code).toBe(EXIT.corrupt);
    },
  );
});

describe('the window between a commit and its ledger record', () => {
  it('a failure after the commit, before the record, raises no false alarm, however often', async () => {
    const file = join(tempDir(), 'sessions.db');
    await withStore(file, (store) => grow(store, 's', 1));
    for (let round = 0; round < 3; round++) {
      const store = await openSqliteStore(file, {
        failpoint: (name) => {
          if (name === 'append:before-ledger') throw new Error('crash before the ledger record');
        },
      });
      const next = 3 + 3 * round;
      expect(
        await rejection(store.append('s', events(next, 3), { expectedSeq: next })),
      ).toMatchObject({ code: 'STORAGE' });
      await store.close();
    }
    await withStore(file, async (store) => {
      expect((await store.load('s')).events).toEqual(events(0, 12));
      await grow(store, 's', 1);
    });
  });

  it('a failure after a new ledger’s identity, before the database names it, leaves a store that opens', async () => {
    const file = join(tempDir(), 'sessions.db');
    const error = await rejection(
      openSqliteStore(file, {
        failpoint: (name) => {
          if (name === 'pair:before-commit') throw new Error('crash before pairing');
        },
      }),
    );
    expect(error).toBeInstanceOf(Error);
    const identity = readFileSync(`${file}-lengths`, 'utf8').split('\n')[0] ?? '';
    await withStore(file, (store) => grow(store, 's', 1));
    expect(identity).toContain(await pairingId(file));
  });
});
