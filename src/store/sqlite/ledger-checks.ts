/**
 * What a load and `list` compare with the ledger (`ledger.ts`): a session the database holds
 * fewer events of than the ledger recorded, a session it no longer holds, or one whose id
 * differs from the one it was created with, is a `CorruptLogError`. The database may be ahead
 * of the ledger (a crash between a commit and its record), never behind it. The ledger is read
 * before the database, so every record read describes a commit the database read shows; a
 * finding is then confirmed against the ledger read after it, where a delete that committed in
 * between has its record (written before the delete commits).
 */

import { CorruptLogError } from '../contract/errors.js';
import type { DamagedSession } from '../contract/session-store.js';
import { shortId } from '../contract/store-rules.js';
import type { LedgerEntry } from './ledger.js';

/** The parts of a session row the ledger checks. */
interface RowPosition {
  readonly key: number;
  readonly id: string;
  readonly next_seq: number;
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
