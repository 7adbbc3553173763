/**
 * Pairing a SQLite database with its ledger (`ledger.ts`), at every open. The ledger is what
 * detects a database that lost committed transactions, and only while it is the database's own:
 * a copy of the database without it, with another database's, or with an older copy of it,
 * would read a truncated session as a short one, and a ledger rebuilt from such a database
 * would make the loss permanent. So the database names its ledger, and no open makes or rewrites
 * a ledger to fit a database (`adopt.ts` does, when asked).
 *
 * - A new database gets a new ledger: its identity (`["i", id]`) is written and fsynced first,
 *   then the database records the id in `ledger_pairing`. A crash between the two leaves a
 *   ledger with an identity and no sessions, which the next open adopts.
 * - A paired database opens only beside a ledger that names it (`LEDGER_MISSING`,
 *   `LEDGER_MISMATCH` otherwise), read-only or not.
 * - A database that names no ledger beside one that records sessions is another database's
 *   ledger, or a database that lost its WAL (its pairing with it) before the first checkpoint:
 *   a writable open refuses to pair them (`LEDGER_MISMATCH`); a read-only open reads the
 *   database against that ledger, which reports every session the database lacks.
 * - A database of the previous schema (which always had a ledger, naming nothing) is migrated by
 *   the first writable open, beside that ledger; without it, `LEDGER_MISSING` again.
 * - A ledger older than the database is found per session (`ledger-checks.ts`), through the
 *   length each session row says the ledger durably held.
 *
 * Pairing is decided inside a write transaction, so that two processes opening one new database
 * at once agree on one identity (the database names the first; the ledger holds both).
 */
import { randomUUID } from 'node:crypto';
import { CorruptLogError, LedgerError } from '../contract/errors.js';
import { shortId } from '../contract/store-rules.js';
import { type OpenedDatabase, retryingCall } from './database.js';
import { Ledger, ledgerPath } from './ledger.js';
import { vouchable } from './ledger-checks.js';
import {
  MIGRATION_DDL,
  PREVIOUS_SCHEMA_VERSION,
  type ReadableSchema,
  SCHEMA_VERSION,
  type SqliteDatabase,
} from './schema.js';

/** What a database says about its ledger. */
export type DatabasePairing =
  /** It names the ledger it was paired with, since `since` (epoch ms). */
  | { readonly kind: 'paired'; readonly id: string; readonly since: number }
  /** A new database, not paired yet. */
  | { readonly kind: 'unpaired' }
  /** The previous schema: it always had a ledger, but names none. */
  | { readonly kind: 'previous' };

/**
 * Reads the pairing (inside a transaction, or as one statement).
 *
 * @throws CorruptLogError for a pairing row that is not one palimpsest writes (damaged).
 */
export function readPairing(db: SqliteDatabase, file: string): DatabasePairing {
  if (Number(db.pragma('user_version', { simple: true })) === PREVIOUS_SCHEMA_VERSION) {
    return { kind: 'previous' };
  }
  const row = db.prepare('SELECT ledger_id, paired_at FROM ledger_pairing WHERE slot = 0').get() as
    | { ledger_id: unknown; paired_at: unknown }
    | undefined;
  if (row === undefined) return { kind: 'unpaired' };
  const { ledger_id: id, paired_at: since } = row;
  if (typeof id !== 'string' || id === '' || typeof since !== 'number') {
    throw new CorruptLogError({
      file,
      reason: `the database's pairing with its ledger is damaged: ledger_pairing holds ${typeof id} ${typeof id === 'string' ? `'${shortId(id)}'` : ''} and ${typeof since} instead of an identity and a time`,
    });
  }
  return { kind: 'paired', id, since };
}

/** Names the ledger `id` as the database's (inside the caller's write transaction). */
export function writePairing(db: SqliteDatabase, id: string): void {
  db.prepare(
    'INSERT INTO ledger_pairing (slot, ledger_id, paired_at) VALUES (0, ?, ?) ON CONFLICT (slot) DO UPDATE SET ledger_id = excluded.ledger_id, paired_at = excluded.paired_at',
  ).run(id, Date.now());
}

/** The ledger of an opened database, checked against it, and the schema version now in use. */
export interface Paired {
  /** `undefined` only for a read-only open of a new database that has none yet. */
  readonly ledger: Ledger | undefined;
  readonly version: ReadableSchema;
}

/**
 * Opens the ledger of `opened` and checks that it is the database's; a writable open pairs a
 * new database and migrates one of the previous schema.
 *
 * @throws LedgerError when the ledger is missing or another database's; it is left as it is.
 */
export async function pairLedger(
  opened: OpenedDatabase,
  failpoint: (name: string) => void,
): Promise<Paired> {
  const { db, path } = opened;
  const found = await retryingCall(path, opened.busyRetryMs, () => readPairing(db, path));
  if (opened.readOnly) {
    const ledger = Ledger.open(path, 'read');
    closingOnFailure(ledger, () => checkPairing(path, found, ledger));
    return { ledger, version: opened.version };
  }
  if (found.kind === 'paired') {
    const ledger = Ledger.open(path, 'write');
    if (ledger === undefined) throw missing(path, found);
    closingOnFailure(ledger, () => {
      // Everything recorded before this open is on disk from here on (synced before it is
      // read, so the records read need no tracking); the identity is stated again so that one
      // damaged line cannot orphan the ledger.
      ledger.syncNow();
      checkPairing(path, found, ledger);
      ledger.restate(found.id);
    });
    return { ledger, version: SCHEMA_VERSION };
  }
  const ledger = Ledger.open(path, found.kind === 'previous' ? 'write' : 'create');
  if (ledger === undefined) throw missing(path, found);
  closingOnFailure(ledger, () => ledger.syncNow());
  const fresh = randomUUID();
  const pair = db.transaction(() => {
    const now = readPairing(db, path);
    if (now.kind === 'paired') return checkPairing(path, now, ledger);
    if (now.kind === 'unpaired' && ledger.holdsSessions()) throw strayLedger(path, ledger);
    const id = [...ledger.identities()][0] ?? fresh;
    if (id === fresh) ledger.identify(fresh);
    failpoint('pair:before-commit');
    if (now.kind === 'previous') migrate(db, ledger);
    writePairing(db, id);
  });
  await closingOnFailureAsync(ledger, async () => {
    await retryingCall(path, opened.busyRetryMs, () => pair.immediate());
    ledger.syncNow();
  });
  return { ledger, version: SCHEMA_VERSION };
}

/**
 * Brings a database of the previous schema to this one, inside the caller's write transaction:
 * each session is vouched for up to what its ledger (fsynced first) records of it.
 */
export function migrate(db: SqliteDatabase, ledger: Ledger): void {
  ledger.syncNow();
  const entries = ledger.snapshot();
  db.exec(MIGRATION_DDL);
  const vouch = db.prepare('UPDATE sessions SET vouched = ? WHERE key = ?');
  for (const row of db.prepare('SELECT key, id, next_seq FROM sessions').all() as {
    key: number;
    id: string;
    next_seq: number;
  }[]) {
    const recorded = vouchable(entries.get(row.key), row.id, row.next_seq);
    if (recorded >= 0) vouch.run(recorded, row.key);
  }
}

/**
 * Checks that `ledger` is the one the database names; for a read-only open, or once paired. A
 * database that names none is read against whatever ledger lies beside it: if that records
 * sessions, the database lost them (its WAL, pairing included, before the first checkpoint) or
 * the ledger is another's, and either way each such session is reported as damaged.
 */
function checkPairing(path: string, found: DatabasePairing, ledger: Ledger | undefined): void {
  if (found.kind === 'unpaired') return;
  if (ledger === undefined) throw missing(path, found);
  if (found.kind === 'paired' && !ledger.identities().has(found.id)) {
    throw mismatch(path, found.id, ledger);
  }
}

function missing(path: string, found: DatabasePairing): LedgerError {
  const ledger = ledgerPath(path);
  const paired =
    found.kind === 'paired'
      ? `was paired with the ledger ${shortId(found.id)} on ${new Date(found.since).toISOString()}`
      : `is of schema version ${PREVIOUS_SCHEMA_VERSION}, which always kept a ledger`;
  return new LedgerError(
    'LEDGER_MISSING',
    path,
    ledger,
    `${path} ${paired}, but there is no ledger at ${ledger} (a copy of the database without it, or a deleted ledger): without it, events the database lost cannot be told from a short session, so nothing was opened or created. Put the ledger back, or adopt the database as it is now (adoptSqliteLedger, palimpsest repair --adopt-ledger)`,
  );
}

function mismatch(path: string, id: string, ledger: Ledger): LedgerError {
  const names = [...ledger.identities()].map((name) => `'${shortId(name)}'`);
  return new LedgerError(
    'LEDGER_MISMATCH',
    path,
    ledger.path,
    `${path} names the ledger '${shortId(id)}', but the ledger ${ledger.path} is ${
      names.length === 0 ? 'unnamed (damaged, or older than pairing)' : `named ${names.join(', ')}`
    }: it is another database's, so it cannot vouch for this one; nothing was written. Put this database's own ledger beside it, or adopt the database as it is now (adoptSqliteLedger, palimpsest repair --adopt-ledger; the other ledger is kept aside)`,
  );
}

function strayLedger(path: string, ledger: Ledger): LedgerError {
  return new LedgerError(
    'LEDGER_MISMATCH',
    path,
    ledger.path,
    `${path} names no ledger, but the ledger ${ledger.path} beside it records sessions: either the database lost its last transactions (its WAL), its pairing with that ledger included, or the ledger is another database's; the ledger was left as it is. A read-only open lists what the ledger says is missing; adopting the database (adoptSqliteLedger, palimpsest repair --adopt-ledger) sets that ledger aside and starts a new one`,
  );
}

function closingOnFailure(ledger: Ledger | undefined, check: () => void): void {
  try {
    check();
  } catch (error) {
    ledger?.close();
    throw error;
  }
}

async function closingOnFailureAsync<T>(ledger: Ledger, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    ledger.close();
    throw error;
  }
}
