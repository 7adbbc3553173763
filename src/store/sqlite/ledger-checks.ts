/**
 * What a load and `list` compare with the ledger (`ledger.ts`): a session the database holds
 * fewer events of than the ledger recorded, a session it no longer holds, or one whose id
 * differs from the one it was created with, is a `CorruptLogError`. The database may be ahead
 * of the ledger (a crash between a commit and its record), never behind it. The ledger is read
 * before the database, so every record read describes a commit the database read shows; a
 * finding is then confirmed against the ledger read after it, where a delete that committed in
 * between has its record (written before the delete commits).
 *
 * The other way round, a ledger behind the database: each session row says how many of its
 * events the ledger held on disk when the row was last written (`vouched`). A crash, or a power
 * cut, can only take records from the ledger that no row relies on yet; a ledger that holds
 * fewer is an older copy, and cannot vouch for that session (`LEDGER_STALE`). That finding is
 * made against the ledger read after the row, which holds every record the row relies on.
 */

import { CorruptLogError, LedgerError } from '../contract/errors.js';
import type { DamagedSession } from '../contract/session-store.js';
import { shortId } from '../contract/store-rules.js';
import type { LedgerEntry } from './ledger.js';

/** The parts of a session row the ledger checks. */
interface RowPosition {
  readonly key: number;
  readonly id: string;
  readonly next_seq: number;
  /** How many events the ledger held on disk when the row was last written (-1: none). */
  readonly vouched: number;
}

/**
 * The error for a row the ledger holds fewer events of than the row says it held, if it does.
 * `entry` must have been read after the row (it then holds every record the row relies on).
 */
export function checkVouched(
  file: string,
  ledger: string,
  row: RowPosition,
  entry: LedgerEntry | undefined,
): LedgerError | undefined {
  if (row.vouched < 0 || entry?.deleted === true) return undefined;
  const recorded = entry === undefined ? -1 : entry.seen;
  if (recorded >= row.vouched) return undefined;
  return new LedgerError(
    'LEDGER_STALE',
    file,
    ledger,
    `session '${shortId(row.id)}' has ${row.next_seq} events in ${file}, whose row says its ledger had recorded ${row.vouched} of them on disk, but the ledger ${ledger} records ${
      recorded < 0 ? 'no such session' : recorded
    }: the ledger is older than the database (restored from an earlier copy, or its last records lost), so it cannot vouch that no acknowledged event is missing. Put the ledger that belongs with this database back, or adopt the database as it is now (adoptSqliteLedger, palimpsest repair --adopt-ledger)`,
    row.id,
  );
}

/**
 * The error for a row shorter than the ledger says, or under another id than it was created
 * with, if it is. `entry` must have been read before the row (a record follows its commit).
 */
export function checkAgainstLedger(
  file: string,
  row: RowPosition,
  entry: LedgerEntry | undefined,
): CorruptLogError | undefined {
  if (entry === undefined || entry.deleted) return undefined;
  if (entry.id !== undefined && entry.id !== row.id) {
    return new CorruptLogError({
      file,
      reason: `the session row with key ${row.key} is named '${shortId(row.id)}' but was created as '${shortId(entry.id)}' (the ledger)`,
    });
  }
  if (row.next_seq < entry.length) {
    return new CorruptLogError({
      file,
      row: row.next_seq,
      reason: `session '${shortId(row.id)}' has ${row.next_seq} events in the database but ${entry.length} were committed (the ledger): acknowledged events are missing, as a damaged or truncated WAL leaves it`,
    });
  }
  return undefined;
}

/**
 * How many events of the session `id` (committed up to `committed`) the ledger `entry` holds
 * on disk: what a row written now may say the ledger held (-1: nothing).
 */
export function vouchable(entry: LedgerEntry | undefined, id: string, committed: number): number {
  if (entry === undefined || entry.deleted) return -1;
  return entry.id === undefined || entry.id === id ? Math.min(entry.durable, committed) : -1;
}

/** The key and error of a session the database lacks but the ledger says exists, if any. */
export function missingFromDatabase(
  file: string,
  id: string,
  entries: ReadonlyMap<number, LedgerEntry> | undefined,
): { readonly key: number; readonly error: CorruptLogError } | undefined {
  if (entries === undefined) return undefined;
  for (const [key, entry] of entries) {
    if (entry.id === id && !entry.deleted) return { key, error: vanished(file, id, entry) };
  }
  return undefined;
}

/** The sessions the ledger says exist whose key the database does not hold. */
export function vanishedSessions(
  file: string,
  entries: ReadonlyMap<number, LedgerEntry>,
  keys: ReadonlySet<number>,
): { readonly key: number; readonly damaged: DamagedSession }[] {
  const found: { key: number; damaged: DamagedSession }[] = [];
  for (const [key, entry] of entries) {
    if (entry.deleted || keys.has(key)) continue;
    const error = vanished(file, entry.id ?? `(key ${key})`, entry);
    found.push({ key, damaged: entry.id === undefined ? { error } : { id: entry.id, error } });
  }
  return found;
}

function vanished(file: string, id: string, entry: LedgerEntry): CorruptLogError {
  return new CorruptLogError({
    file,
    reason: `session '${shortId(id)}' was committed with ${entry.length} events (the ledger) but the database holds no such session, as a damaged or truncated WAL leaves it`,
  });
}
