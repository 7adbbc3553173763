/**
 * The reads of a SQLite store: a load (plain, or salvaging what precedes damage) and a summary,
 * each in one read transaction checked against the ledger; the list of sessions; and a watch
 * that follows a session's commits page by page.
 */

import type { JsonValue, SessionEvent, SessionHeader } from '../../core/index.js';
import {
  CorruptLogError,
  FormatVersionError,
  LedgerError,
  NotFoundError,
} from '../contract/errors.js';
import { follow } from '../contract/follow.js';
import { LoadedSession } from '../contract/loaded-session.js';
import type {
  DamagedSession,
  ListOptions,
  LoadOptions,
  SessionPage,
  SessionStats,
  SessionSummary,
  WatchOptions,
} from '../contract/session-store.js';
import {
  checkListOptions,
  checkSessionId,
  encodeCursor,
  STATS_EVENT_TYPES,
  statsOf,
} from '../contract/store-rules.js';
import type { RunRow } from '../sql/chunk-runs.js';
import { decodeHeaderRow } from '../sql/row-checksums.js';
import type { SqliteContext } from './context.js';
import { driverCode } from './driver-errors.js';
import type { LedgerEntry } from './ledger.js';
import {
  checkAgainstLedger,
  checkVouched,
  missingFromDatabase,
  vanishedSessions,
} from './ledger-checks.js';
import {
  decodeRowsFrom,
  decodeSessionRows,
  type EventRow,
  type RowContext,
  type SessionRow,
} from './rows.js';
import type { SqliteTransaction } from './schema.js';

/** How often a watch polls `PRAGMA data_version` for commits of other connections, ms. */
const WATCH_POLL_MS = 50;
/** Rows a watch reads at a time. */
const WATCH_PAGE = 10_000;

/** Where a salvaging load leaves its result, for when the transaction's end fails after it. */
interface SalvageSlot {
  result?: LoadedSession;
}

/** What the ledger recorded, read before a read transaction's first query. */
type LedgerSnapshot = ReadonlyMap<number, LedgerEntry> | undefined;

/** The reads of one store. */
export class SqliteReads {
  readonly #context: SqliteContext;
  readonly #load: SqliteTransaction<[string, boolean, SalvageSlot | undefined], LoadedSession>;
  readonly #summarize: SqliteTransaction<[string], SessionStats>;

  constructor(context: SqliteContext) {
    this.#context = context;
    this.#load = context.db.transaction((id: string, elide: boolean, salvage?: SalvageSlot) =>
      this.#loadInTransaction(id, elide, salvage),
    );
    this.#summarize = context.db.transaction((id: string) => this.#summarizeInTransaction(id));
  }

  async load(id: string, options: LoadOptions): Promise<LoadedSession> {
    const context = this.#context;
    context.assertOpen();
    checkSessionId(id);
    try {
      if (options.salvage === true) return this.#salvage(id);
      return await context.retry(`load session '${id}'`, () =>
        this.#load(id, options.elideFinishedChunks === true, undefined),
      );
    } catch (error) {
      throw context.loadError(`load session '${id}'`, error);
    }
  }

  /**
   * The session's stats from its row and two indexed reads: the last event's time, and the data
   * of the events of the types the stats need, selected by type code (no other row's data is
   * read or decoded). Checked against the ledger as a load is.
   */
  async summarize(id: string): Promise<SessionStats> {
    const context = this.#context;
    context.assertOpen();
    checkSessionId(id);
    try {
      return await context.retry(`summarize session '${id}'`, () => this.#summarize(id));
    } catch (error) {
      throw context.loadError(`summarize session '${id}'`, error);
    }
  }

  /**
   * Follows a session: reads the rows after the last one yielded (each checked against its
   * checksum), whenever this store commits or `PRAGMA data_version` says another connection did;
   * the version is polled every {@link WATCH_POLL_MS}.
   */
  watch(id: string, options: WatchOptions): AsyncIterable<SessionEvent> {
    const context = this.#context;
    return follow(
      async () => {
        context.assertOpen();
        checkSessionId(id);
        const key = this.#keyOf(id);
        // What commits had happened, taken *before* each read: a commit landing between a read
        // and the wait after it changes this, so the wait returns at once rather than waiting
        // for a commit that may never come.
        const mark = (): string =>
          `${String(context.db.pragma('data_version', { simple: true }))}:${context.committed.count}`;
        let seen = mark();
        const rows = context.rowContext(id, key);
        return {
          read: async (from) => {
            context.assertOpen();
            if (this.#keyOf(id) !== key) throw new NotFoundError(id, context.location);
            try {
              seen = mark();
              return this.#page(rows, from);
            } catch (error) {
              throw context.loadError(`watch session '${id}'`, error);
            }
          },
          changed: async (signal) => {
            while (!signal.aborted && !context.closed && mark() === seen) {
              await context.committed.wait(signal, WATCH_POLL_MS);
            }
          },
          close: async () => {},
        };
      },
      context.location,
      options,
    );
  }

  async list(options: ListOptions): Promise<SessionPage> {
    const context = this.#context;
    const { sql } = context;
    context.assertOpen();
    const request = checkListOptions(options);
    const limit = request.limit;
    const after = request.after?.header;
    const before = context.ledger?.snapshot();
    const read = (scan: boolean) =>
      context.retry(
        'list sessions',
        context.db.transaction(() => ({
          rows: (after === undefined
            ? sql.page(request.filter, false, scan).all({ ...request.filter, limit: limit + 1 })
            : sql
                .page(request.filter, true, scan)
                .all({ ...request.filter, ...after, limit: limit + 1 })) as SessionRow[],
          keys: new Set(
            after === undefined
              ? ((scan ? sql.keysScanned : sql.keys).all() as { key: number }[]).map(
                  (row) => row.key,
                )
              : [],
          ),
        })),
      );
    const damaged: DamagedSession[] = [];
    let rows: SessionRow[];
    let keys: ReadonlySet<number>;
    try {
      ({ rows, keys } = await read(false));
    } catch (error) {
      const damage = context.loadError('list sessions', error);
      if (!CorruptLogError.isInstance(damage)) throw damage;
      // A damaged index must not hide the sessions the table still holds: read the table
      // itself, and name the damage.
      try {
        ({ rows, keys } = await read(true));
      } catch {
        throw damage;
      }
      damaged.push({
        error: new CorruptLogError(
          {
            file: context.file,
            reason:
              'an index of the sessions table is damaged: the list was read from the table itself (REINDEX, or `palimpsest convert` to a new store, rebuilds it)',
          },
          { cause: error },
        ),
      });
    }
    const sessions: SessionSummary[] = [];
    if (after === undefined && before !== undefined) {
      for (const found of vanishedSessions(context.file, before, keys)) {
        if (!context.deletedNow(found.key)) damaged.push(found.damaged);
      }
    }
    for (const row of rows.slice(0, limit)) {
      try {
        const header = decodeHeaderRow(context.file, row);
        this.#checkLength(row, before);
        sessions.push({ header, updatedAt: row.updated_at, eventCount: row.next_seq });
      } catch (error) {
        if (
          !CorruptLogError.isInstance(error) &&
          !FormatVersionError.isInstance(error) &&
          !LedgerError.isInstance(error)
        )
          throw error;
        damaged.push({ id: row.id, error });
      }
    }
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    const page = damaged.length === 0 ? { sessions } : { sessions, damaged };
    return last === undefined
      ? page
      : {
          ...page,
          nextCursor: encodeCursor({ header: { createdAt: last.created_at, id: last.id } }),
        };
  }

  /** The key of a session's row; `NotFoundError` when there is none. */
  #keyOf(id: string): number {
    const row = this.#context.position(id);
    if (row === undefined) throw new NotFoundError(id, this.#context.location);
    return row.key;
  }

  /**
   * A salvaging load. Once SQLite has reported a damaged page, the read transaction's COMMIT
   * reports it again (the transaction is over all the same), so a result that already holds that
   * damage is taken from the slot instead of being lost to the second report.
   */
  #salvage(id: string): LoadedSession {
    const slot: SalvageSlot = {};
    try {
      return this.#load(id, false, slot);
    } catch (error) {
      if (slot.result?.damage !== undefined && driverCode(error)?.startsWith('SQLITE_CORRUPT'))
        return slot.result;
      throw error;
    }
  }

  #loadInTransaction(id: string, elide: boolean, salvage: SalvageSlot | undefined): LoadedSession {
    const { sql } = this.#context;
    // Read before the first query starts the transaction's snapshot (see ledger-checks.ts).
    const before = this.#context.ledger?.snapshot();
    const row = this.#sessionRow(id, before);
    const header = decodeHeaderRow(this.#context.file, row);
    const context = this.#context.rowContext(id, row.key);
    if (salvage !== undefined) {
      salvage.result = this.#salvageRows(context, header, row, before);
      return salvage.result;
    }
    // The runs first (a few thousand rows for a million events): while an iterator is open the
    // connection runs no other statement. The events are iterated, not `.all()`: each row object
    // dies young.
    const runs = sql.runs.all(row.key) as RunRow[];
    const { log } = decodeSessionRows(
      context,
      sql.events.iterate(row.key) as IterableIterator<EventRow>,
      runs,
      row.next_seq,
      { elide },
    );
    this.#checkLength(row, before);
    return LoadedSession.fromLog(header, log);
  }

  /** A watcher's page: the events from `from` on, in one read transaction. */
  #page(context: RowContext, from: number): SessionEvent[] {
    const { db, sql } = this.#context;
    return db.transaction(() => {
      const rows = sql.eventsFrom.all(context.key, from, WATCH_PAGE) as EventRow[];
      // A full page ends at its last row; the runs past it belong to the next page.
      const upto =
        rows.length === WATCH_PAGE ? (rows.at(-1) as EventRow).seq : Number.MAX_SAFE_INTEGER;
      const runs = sql.runsFrom.all(context.key, from, upto) as RunRow[];
      return decodeRowsFrom(context, rows, runs, from);
    })();
  }

  /**
   * The session's row, inside a read transaction; a session the ledger (`before`, read before
   * the transaction's first query) knows but the database lost is a `CorruptLogError`.
   */
  #sessionRow(id: string, before: LedgerSnapshot): SessionRow {
    const context = this.#context;
    const row = context.sql.session.get(id) as SessionRow | undefined;
    if (row !== undefined) return row;
    const missing = missingFromDatabase(context.file, id, before);
    if (missing !== undefined && !context.deletedNow(missing.key)) throw missing.error;
    throw new NotFoundError(id, context.location);
  }

  /**
   * Throws when the session is shorter than the ledger records (`CorruptLogError`), or when the
   * ledger holds less of it than the row says it held (`LedgerError`, `LEDGER_STALE`).
   */
  #checkLength(row: SessionRow, before: LedgerSnapshot): void {
    const short = checkAgainstLedger(this.#context.file, row, before?.get(row.key));
    if (short !== undefined && !this.#context.deletedNow(row.key)) throw short;
    const stale = this.#stale(row, before);
    if (stale !== undefined) throw stale;
  }

  /**
   * The `LEDGER_STALE` error of a row, if any: found against `before`, and confirmed against
   * the ledger read now, after the row (which may rely on records written since `before`).
   */
  #stale(row: SessionRow, before: LedgerSnapshot): LedgerError | undefined {
    const { ledger, file } = this.#context;
    if (ledger === undefined) return undefined;
    if (checkVouched(file, ledger.path, row, before?.get(row.key)) === undefined) return undefined;
    return checkVouched(file, ledger.path, row, ledger.entries().get(row.key));
  }

  #summarizeInTransaction(id: string): SessionStats {
    const context = this.#context;
    const before = context.ledger?.snapshot();
    const row = this.#sessionRow(id, before);
    const header = decodeHeaderRow(context.file, row);
    this.#checkLength(row, before);
    const last = context.sql.lastTime.get(row.key) as { time: number } | undefined;
    const codes = [...STATS_EVENT_TYPES].map((type) => context.typeCode(type) ?? -1);
    const picked = (
      context.sql.eventsOfTypes.all(row.key, ...codes) as {
        seq: number;
        type: number;
        data: string;
      }[]
    ).map((event) => {
      try {
        return {
          type: context.typeNameOf(event.type) ?? '',
          data: JSON.parse(event.data) as JsonValue,
        };
      } catch (error) {
        throw new CorruptLogError(
          { file: context.file, row: event.seq, reason: 'event data is not valid JSON' },
          { cause: error },
        );
      }
    });
    return statsOf(header, row.next_seq, last?.time, picked);
  }

  /**
   * A salvaging load's rows: read one at a time, so that the rows before a page SQLite finds
   * damaged are still returned, and checked as a plain load checks them, up to the first damage.
   */
  #salvageRows(
    context: RowContext,
    header: SessionHeader,
    row: SessionRow,
    before: LedgerSnapshot,
  ): LoadedSession {
    const { sql } = this.#context;
    const rows: EventRow[] = [];
    let runs: RunRow[] = [];
    let unreadable: CorruptLogError | undefined;
    try {
      runs = sql.runs.all(row.key) as RunRow[];
      for (const event of sql.events.iterate(row.key)) rows.push(event as EventRow);
    } catch (error) {
      const failure = this.#context.loadError(`load session '${context.id}'`, error);
      if (!CorruptLogError.isInstance(failure)) throw failure;
      unreadable = failure;
    }
    const decoded = decodeSessionRows(
      context,
      rows,
      runs,
      unreadable ? (rows.at(-1)?.seq ?? -1) + 1 : row.next_seq,
      { salvage: true },
    );
    const short = this.#context.deletedNow(row.key)
      ? undefined
      : checkAgainstLedger(this.#context.file, row, before?.get(row.key));
    // A ledger that cannot vouch for the session is no damage of its log to salvage.
    const stale = short === undefined ? this.#stale(row, before) : undefined;
    if (stale !== undefined) throw stale;
    const damage = decoded.damage ?? unreadable ?? short;
    return LoadedSession.fromLog(header, decoded.log, damage === undefined ? {} : { damage });
  }
}
