/**
 * Adopting a SQLite database whose ledger is gone, another database's, or older than it
 * ({@link adoptSqliteLedger}, `palimpsest repair --adopt-ledger`): the explicit way back to a
 * store that opens, after a `LedgerError`. Nothing else ever re-pairs a database (`pairing.ts`).
 *
 * The ledger is what would have shown a loss; adopting records the database as it is now, so a
 * loss that happened before (a damaged WAL that dropped acknowledged events while the ledger was
 * away) can no longer be detected. The report names the sessions this newly vouches for. What
 * the ledger kept does not go away: a session it records as longer than the database holds, or
 * under another id, or that the database lost, stays reported as damaged.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, renameSync } from 'node:fs';
import { StorageError } from '../contract/errors.js';
import { openDatabase, retryingCall } from './database.js';
import { closeQuietly } from './driver-errors.js';
import { Ledger, type LedgerEntry, ledgerPath } from './ledger.js';
import type { SqliteStoreOptions } from './open.js';
import { type DatabasePairing, migrate, readPairing, writePairing } from './pairing.js';
import type { SqliteDatabase } from './schema.js';

/** A session the ledger now vouches for further than it had recorded. */
export interface NewlyVouched {
  readonly id: string;
  /** Its events in the database, all vouched for now. */
  readonly events: number;
  /** How many the ledger had recorded (-1: the session was unknown to it). */
  readonly recorded: number;
}

/** What {@link adoptSqliteLedger} found and did. */
export interface LedgerAdoption {
  /** The database file. */
  readonly file: string;
  /** The ledger file the database is paired with now. */
  readonly ledger: string;
  /**
   * What lay beside the database: no ledger, another database's (moved to `setAside` and a new
   * one made), or its own (kept, and brought up to the database).
   */
  readonly found: 'missing' | 'foreign' | 'own';
  /** Where a ledger of another database was moved, untouched. */
  readonly setAside?: string;
  /** Sessions in the database. */
  readonly sessions: number;
  /**
   * Sessions whose events the ledger had not (all) recorded: vouched for as they are now. A loss
   * among their events before the adoption can no longer be detected.
   */
  readonly newlyVouched: readonly NewlyVouched[];
  /**
   * Sessions (ids, or `(key N)` where the ledger lost the id) the kept ledger says the database
   * lost events of, holds under another id, or lost altogether: still reported as damaged.
   */
  readonly stillDamaged: readonly string[];
}

/** Options of {@link adoptSqliteLedger}: those of opening the store for writing. */
export type AdoptOptions = Pick<
  SqliteStoreOptions,
  'synchronous' | 'busyTimeoutMs' | 'busyRetryMs' | 'failpoint'
>;

/**
 * Pairs the SQLite database at `file` with a ledger that records it as it is now: its own ledger
 * if that names it (brought up to date: the fix for `LEDGER_STALE`), else a new one (for
 * `LEDGER_MISSING`; for `LEDGER_MISMATCH`, after moving the other ledger aside, untouched).
 * One write transaction records every session in the ledger, fsyncs it, and pairs the database;
 * a database of the previous schema is migrated in it. Run it while no other process has the
 * store open. Idempotent: on a database paired with its up-to-date ledger it changes nothing
 * but restating its lengths.
 *
 * What it cannot vouch for: events the database lost before now. Its report names the sessions
 * it vouches for anew.
 *
 * @throws as `openSqliteStore` for the database itself.
 */
export async function adoptSqliteLedger(
  file: string,
  options: AdoptOptions = {},
): Promise<LedgerAdoption> {
  const opened = await openDatabase(file, { ...options, readOnly: false });
  const failpoint = options.failpoint ?? ((): void => {});
  let ledger: Ledger | undefined;
  try {
    const found = await retryingCall(opened.path, opened.busyRetryMs, () =>
      readPairing(opened.db, opened.path),
    );
    ledger = Ledger.open(opened.path, 'write');
    const existed = ledger !== undefined;
    ledger?.syncNow();
    const own = ledger !== undefined && belongs(found, ledger);
    let setAside: string | undefined;
    if (ledger !== undefined && !own) {
      ledger.close();
      ledger = undefined;
      setAside = setLedgerAside(opened.path);
    }
    ledger ??= Ledger.open(opened.path, 'create');
    const id =
      found.kind === 'paired' && own ? found.id : ([...ledger.identities()][0] ?? randomUUID());
    if (!ledger.identities().has(id)) ledger.identify(id);
    const paired = ledger;
    const recorded = await retryingCall(opened.path, opened.busyRetryMs, () =>
      opened.db
        .transaction(() => recordAll(opened.db, opened.path, paired, id, failpoint))
        .immediate(),
    );
    return {
      file: opened.path,
      ledger: ledger.path,
      found: existed ? (own ? 'own' : 'foreign') : 'missing',
      ...(setAside === undefined ? {} : { setAside }),
      ...recorded,
    };
  } finally {
    await ledger?.settled();
    ledger?.close();
    closeQuietly(opened.db);
  }
}

/** Whether a ledger can be kept: it names the database, or the database names none. */
function belongs(found: DatabasePairing, ledger: Ledger): boolean {
  if (found.kind === 'paired') return ledger.identities().has(found.id);
  // A new database's ledger may hold an identity but no sessions (a crash before pairing).
  return found.kind === 'previous' || !ledger.holdsSessions();
}

/**
 * Records every session of the database in the ledger as it is now, fsyncs the ledger, and
 * pairs the database with it (inside the adoption's write transaction).
 */
function recordAll(
  db: SqliteDatabase,
  file: string,
  ledger: Ledger,
  id: string,
  failpoint: (name: string) => void,
): Omit<LedgerAdoption, 'file' | 'ledger' | 'found' | 'setAside'> {
  if (readPairing(db, file).kind === 'previous') migrate(db, ledger);
  const entries = ledger.snapshot();
  const rows = db.prepare('SELECT key, id, next_seq FROM sessions ORDER BY key').all() as {
    key: number;
    id: string;
    next_seq: number;
  }[];
  const newlyVouched: NewlyVouched[] = [];
  const stillDamaged: string[] = [];
  const keys = new Set<number>();
  for (const row of rows) {
    keys.add(row.key);
    const entry = entries.get(row.key);
    const recorded = entry === undefined || entry.deleted ? -1 : entry.length;
    if (entry === undefined) ledger.created(row.key, row.id);
    if (recorded < row.next_seq) {
      ledger.committed(row.key, row.next_seq);
      newlyVouched.push({ id: row.id, events: row.next_seq, recorded });
    }
    if (recorded > row.next_seq || (entry?.id !== undefined && entry.id !== row.id)) {
      stillDamaged.push(row.id);
    }
  }
  stillDamaged.push(...vanished(entries, keys));
  ledger.syncNow();
  failpoint('adopt:before-commit');
  db.prepare('UPDATE sessions SET vouched = next_seq').run();
  writePairing(db, id);
  return { sessions: rows.length, newlyVouched, stillDamaged };
}

/** The sessions the ledger records that the database no longer holds. */
function vanished(entries: ReadonlyMap<number, LedgerEntry>, keys: ReadonlySet<number>): string[] {
  return [...entries]
    .filter(([key, entry]) => !entry.deleted && !keys.has(key))
    .map(([key, entry]) => entry.id ?? `(key ${key})`);
}

/** Moves the ledger beside `path` to a name of its own, untouched; returns that name. */
function setLedgerAside(path: string): string {
  const from = ledgerPath(path);
  let to = `${from}.set-aside-${Date.now()}`;
  for (let n = 1; existsSync(to); n++) to = `${from}.set-aside-${Date.now()}-${n}`;
  try {
    renameSync(from, to);
  } catch (error) {
    throw new StorageError(`cannot move the ledger ${from} aside`, { cause: error });
  }
  return to;
}
