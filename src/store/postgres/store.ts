/**
 * The PostgreSQL store: the `SessionStore` contract for a fleet of workers sharing one database.
 *
 * - Optimistic concurrency: an append locks the session's row (`SELECT ... FOR UPDATE`), checks
 *   `expectedSeq` against `next_seq`, inserts its rows (`(session, seq)` is the primary key) and
 *   advances `next_seq`, all in one transaction: two racing workers get one winner and one
 *   `ConflictError`, never a gap or a duplicate.
 * - One writer per session across hosts, by lease (`leases.ts`): a lease row naming its owner, a
 *   token unique to each acquisition, and an expiry the holder's heartbeat keeps pushing back. An
 *   append checks, inside its transaction and under a share lock of the lease row, that the
 *   lease is still its own: a writer whose lease was taken over is fenced off (`LeaseLostError`).
 * - Connection loss: an append that loses its connection retries within `retryMs`; a retry first
 *   reads what the session holds, so a batch the server committed before the client heard is
 *   recognised (the same rows at the same seqs) and applied exactly once.
 * - Every committed append notifies `palimpsest_<schema>` with the session and its new length,
 *   for `watch`.
 */

import { validateHeader } from '../../core/header.js';
import type { JsonValue, SessionEvent, SessionHeader } from '../../core/index.js';
import { InvalidArgumentError } from '../../core/index.js';

import {
  AlreadyExistsError,
  ConflictError,
  CorruptLogError,
  FormatVersionError,
  InvalidStoreError,
  type LockOwner,
  NotFoundError,
  StoreUnavailableError,
} from '../contract/errors.js';
import { follow } from '../contract/follow.js';
import { LoadedSession } from '../contract/loaded-session.js';
import { currentOwner, forgetToken } from '../contract/lock-owner.js';
import type {
  AppendOptions,
  DamagedSession,
  ListOptions,
  LoadOptions,
  SessionLock,
  SessionPage,
  SessionStats,
  SessionStore,
  SessionSummary,
  TornTail,
  UnlockOptions,
  UnlockReport,
  WatchOptions,
} from '../contract/session-store.js';
import {
  asStorageError,
  assertOpen,
  checkBatch,
  checkListOptions,
  checkSessionId,
  checkTornTail,
  decodeStoredHeader,
  encodeCursor,
  STATS_EVENT_TYPES,
  shortId,
  statsOf,
} from '../contract/store-rules.js';
import { isIntact } from '../sql/chunk-run-rows.js';
import { RUN_TYPE, runEnvelopes, runTexts } from '../sql/chunk-runs.js';
import { planRuns, writeRuns } from './chunk-run-writer.js';
import {
  isConnectionFailure,
  type PgPool,
  type PgPoolClient,
  type PgQueryable,
  sqlState,
} from './driver.js';
import { Leases } from './leases.js';
import { Listener } from './listener.js';
import {
  decodePage,
  decodeRows,
  type EventRow,
  idOrder,
  type PgRunRow,
  type RowSite,
  RUN_COLUMNS,
  RUN_ENVELOPE_COLUMNS,
  runContext,
  toRunRow,
} from './rows.js';
import { quoted } from './schema.js';

/** The settings a store was opened with, resolved. */
export interface PostgresSettings {
  readonly schema: string;
  readonly readOnly: boolean;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly retryMs: number;
}

/** The columns of `sessions` a read takes. */
const SESSION_COLUMNS = 'key, id, header, created_at, next_seq, updated_at';
/** Rows a watch reads at a time. */
const WATCH_PAGE = 10_000;
/** Rows per INSERT statement: 7 parameters a row stays far below the protocol's 65,535. */
const ROWS_PER_INSERT = 1000;
/** First pause before a retry after a lost connection; doubled up to the cap. */
const RETRY_FIRST_MS = 50;
const RETRY_CAP_MS = 1000;

interface SessionRow {
  readonly key: string;
  readonly id: string;
  readonly header: string;
  readonly created_at: string;
  readonly next_seq: string;
  readonly updated_at: string;
}

/** One event as stored: the column values of its row. */
interface EncodedEvent {
  readonly seq: number;
  readonly type: string;
  readonly time: number;
  readonly data: string;
  readonly sources: string | null;
  readonly surfaceOp: string | null;
}

/** A store of sessions in one PostgreSQL schema. Open it with `openPostgresStore`. */
export class PostgresStore implements SessionStore {
  readonly location: string;
  readonly settings: PostgresSettings;
  /** The channel every committed append notifies, with `<id length>:<id> <next seq>`. */
  readonly channel: string;
  readonly #pool: PgPool;
  readonly #ownsPool: boolean;
  readonly #s: string;
  readonly #leases: Leases;
  #closed = false;

  /** Use `openPostgresStore`: it creates or checks the schema first. */
  constructor(pool: PgPool, ownsPool: boolean, location: string, settings: PostgresSettings) {
    this.#pool = pool;
    this.#ownsPool = ownsPool;
    this.location = location;
    this.settings = settings;
    this.#s = quoted(settings.schema);
    this.channel = `palimpsest_${settings.schema}`;
    this.#leases = new Leases(pool, this.#s, settings);
  }

  async create(header: SessionHeader): Promise<void> {
    this.#assertWritable();
    checkSessionId(header.id);
    const valid = validateHeader(header);
    const text = JSON.stringify(valid);
    await this.#retrying(`create session '${shortId(valid.id)}'`, async (client, retry) => {
      try {
        await client.query(
          `INSERT INTO ${this.#s}.sessions (id, id_order, created_at, parent_session, header, next_seq, updated_at) VALUES ($1, $2, $3, $4, $5, 0, $6)`,
          [
            valid.id,
            idOrder(valid.id),
            valid.createdAt,
            valid.parentSession ?? null,
            text,
            Date.now(),
          ],
        );
      } catch (error) {
        if (sqlState(error) !== '23505') throw error;
        // A retry finding the very header it sent finds its own first attempt.
        if (retry) {
          const { rows } = await client.query<{ header: string; next_seq: string }>(
            `SELECT header, next_seq FROM ${this.#s}.sessions WHERE id = $1`,
            [valid.id],
          );
          if (rows[0]?.header === text && rows[0].next_seq === '0') return;
        }
        throw new AlreadyExistsError(valid.id, this.location);
      }
    });
  }

  async append(id: string, events: readonly SessionEvent[], options: AppendOptions): Promise<void> {
    this.#assertWritable();
    checkSessionId(id);
    checkBatch(id, events, options);
    const expected = options.expectedSeq;
    const encoded = events.map(encode);
    await this.#retrying(`append to session '${shortId(id)}'`, (client, retry) =>
      this.#transaction(client, async () => {
        const position = await this.#position(client, id, true);
        if (position.next !== expected) {
          if (retry && position.next === expected + encoded.length && encoded.length > 0) {
            if (await this.#holds(client, id, position.key, encoded)) return;
          }
          throw new ConflictError(id, expected, position.next);
        }
        if (encoded.length === 0) return;
        await this.#leases.checkWriter(client, id);
        const site = { location: this.location, id };
        const runs = await planRuns(client, this.#s, site, position.key, events, expected);
        const rows = encoded.filter((event) => !runs.joins(event.seq));
        for (let from = 0; from < rows.length; from += ROWS_PER_INSERT) {
          await this.#insert(client, position.key, rows.slice(from, from + ROWS_PER_INSERT));
        }
        await writeRuns(client, this.#s, site, position.key, runs, expected);
        const next = expected + encoded.length;
        // The notification rides on the update (one round trip less per append); it is
        // delivered only if the transaction commits.
        await client.query(
          `UPDATE ${this.#s}.sessions SET next_seq = $1, updated_at = $2 WHERE key = $3 RETURNING pg_notify($4, $5)`,
          [next, Date.now(), position.key, this.channel, notification(id, next)],
        );
      }),
    );
  }

  async load(id: string, options: LoadOptions = {}): Promise<LoadedSession> {
    this.#assertOpen();
    checkSessionId(id);
    const salvage = options.salvage === true;
    const elide = options.elideFinishedChunks === true && !salvage;
    return this.#retrying(`load session '${shortId(id)}'`, (client) =>
      this.#snapshot(client, async () => {
        const { row, header } = await this.#session(client, id);
        const site = { location: this.location, id };
        const recorded = Number(row.next_seq);
        // Both queries are queued on the one connection before either is awaited (a rejection
        // of the second while the first is awaited must not go unhandled). The fast path reads
        // the runs without their data, checked by their envelope checksum (see docs/postgres.md).
        const pendingRuns = this.#runs(client, row.key, '', [], elide);
        pendingRuns.catch(() => {});
        const rows = await this.#rows(client, row.key, '');
        const runs = await pendingRuns;
        const decoded = decodeRows(site, row.key, rows, runs, recorded, { elide, salvage });
        return LoadedSession.fromLog(header, decoded.log, decoded);
      }),
    );
  }

  /** The rows of a session in seq order, whole, with `where` appended to its condition. */
  async #rows(
    client: PgQueryable,
    key: string,
    where: string,
    values: readonly unknown[] = [],
  ): Promise<EventRow[]> {
    const { rows } = await client.query<EventRow>(
      `SELECT seq, type, time, data, source_event_seqs, surface_op FROM ${this.#s}.events WHERE session_key = $1${where} ORDER BY seq`,
      [key, ...values],
    );
    return rows;
  }

  /**
   * The chunk runs of a session in seq order, with `where` appended to its condition; with
   * `envelopes`, without their data.
   */
  async #runs(
    client: PgQueryable,
    key: string,
    where: string,
    values: readonly unknown[] = [],
    envelopes = false,
  ): Promise<PgRunRow[]> {
    const columns = envelopes ? RUN_ENVELOPE_COLUMNS : RUN_COLUMNS;
    const { rows } = await client.query<PgRunRow>(
      `SELECT ${columns} FROM ${this.#s}.chunk_runs WHERE session_key = $1${where} ORDER BY first_seq`,
      [key, ...values],
    );
    return rows;
  }

  /**
   * A watcher's page: the rows from `from` on, at most {@link WATCH_PAGE}, and the runs among
   * them, read in one snapshot, so that rows a concurrent append moves into a run are seen as
   * rows or as the run, never both or neither. A run may begin before `from` (a watcher that
   * read its first rows on an earlier page): the merge skips into it.
   */
  #page(client: PgQueryable, site: RowSite, key: string, from: number): Promise<SessionEvent[]> {
    return this.#snapshot(client, async () => {
      const { rows } = await client.query<EventRow>(
        `SELECT seq, type, time, data, source_event_seqs, surface_op FROM ${this.#s}.events WHERE session_key = $1 AND seq >= $2 ORDER BY seq LIMIT ${WATCH_PAGE}`,
        [key, from],
      );
      // A full page ends at its last row; the runs past it belong to the next page.
      const upto = rows.length === WATCH_PAGE ? Number((rows.at(-1) as EventRow).seq) : null;
      const runs = await this.#runs(
        client,
        key,
        ' AND first_seq + count > $2 AND ($3::bigint IS NULL OR first_seq < $3)',
        [from, upto],
      );
      return decodePage(site, key, rows, runs, from);
    });
  }

  /**
   * Follows a session through LISTEN/NOTIFY on {@link PostgresStore.channel}, with a catch-up
   * read after every notification, reconnect and poll (see `listener.ts`), so no event is missed
   * or repeated across reconnects.
   */
  watch(id: string, options: WatchOptions = {}): AsyncIterable<SessionEvent> {
    return follow(
      async () => {
        this.#assertOpen();
        checkSessionId(id);
        const key = await this.#retrying(
          `watch session '${shortId(id)}'`,
          async (client) => (await this.#position(client, id, false)).key,
        );
        const listener = new Listener(
          this.#pool,
          this.channel,
          notification(id, 0).replace(/0$/, ''),
        );
        const site = { location: this.location, id };
        return {
          read: (from) =>
            this.#retrying(`watch session '${shortId(id)}'`, async (client) => {
              const position = await this.#position(client, id, false);
              if (position.key !== key) throw new NotFoundError(id, this.location);
              return this.#page(client, site, key, from);
            }),
          changed: (signal) => listener.wait(signal),
          close: () => listener.close(),
        };
      },
      this.location,
      options,
    );
  }

  async list(options: ListOptions = {}): Promise<SessionPage> {
    this.#assertOpen();
    const request = checkListOptions(options);
    const { limit } = request;
    const after = request.after?.header;
    const { filter } = request;
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    const conditions: string[] = [];
    if (after !== undefined) {
      const createdAt = param(after.createdAt);
      conditions.push(
        `(created_at < ${createdAt} OR (created_at = ${createdAt} AND id_order > ${param(idOrder(after.id))}))`,
      );
    }
    if (filter.createdAfter !== undefined)
      conditions.push(`created_at > ${param(filter.createdAfter)}`);
    if (filter.createdBefore !== undefined)
      conditions.push(`created_at < ${param(filter.createdBefore)}`);
    if (filter.parentSession !== undefined)
      conditions.push(`parent_session = ${param(filter.parentSession)}`);
    // LIKE with every wildcard escaped: a prefix match the index on id (collation C) serves.
    if (filter.idPrefix !== undefined) {
      conditions.push(
        `id LIKE ${param(`${filter.idPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`,
      );
    }
    const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
    const sql = `SELECT ${SESSION_COLUMNS} FROM ${this.#s}.sessions${where} ORDER BY created_at DESC, id_order ASC LIMIT ${param(limit + 1)}`;
    const { rows } = await this.#retrying('list sessions', (client) =>
      client.query<SessionRow>(sql, values),
    );
    const sessions: SessionSummary[] = [];
    const damaged: DamagedSession[] = [];
    for (const row of rows.slice(0, limit)) {
      try {
        sessions.push({
          header: this.#header(row),
          updatedAt: Number(row.updated_at),
          eventCount: Number(row.next_seq),
        });
      } catch (error) {
        if (!CorruptLogError.isInstance(error) && !FormatVersionError.isInstance(error))
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
          nextCursor: encodeCursor({ header: { createdAt: Number(last.created_at), id: last.id } }),
        };
  }

  async delete(id: string): Promise<void> {
    this.#assertWritable();
    checkSessionId(id);
    await this.#retrying(`delete session '${shortId(id)}'`, (client, retry) =>
      this.#transaction(client, async () => {
        const { rows } = await client.query<{ key: string }>(
          `SELECT key FROM ${this.#s}.sessions WHERE id = $1 FOR UPDATE`,
          [id],
        );
        const row = rows[0];
        if (row === undefined) {
          // A retry that finds nothing finds its own first attempt done.
          if (retry) return;
          throw new NotFoundError(id, this.location);
        }
        await this.#leases.refuseHeld(client, id);
        await client.query(`DELETE FROM ${this.#s}.events WHERE session_key = $1`, [row.key]);
        await client.query(`DELETE FROM ${this.#s}.chunk_runs WHERE session_key = $1`, [row.key]);
        await client.query(`DELETE FROM ${this.#s}.sessions WHERE key = $1`, [row.key]);
        await client.query(`DELETE FROM ${this.#s}.leases WHERE session_id = $1`, [id]);
      }),
    );
  }

  async lock(id: string): Promise<SessionLock> {
    this.#assertWritable();
    checkSessionId(id);
    const owner = currentOwner(this.settings.heartbeatMs);
    try {
      return await this.#retrying(`lock session '${shortId(id)}'`, (client) =>
        this.#leases.acquire(client, id, owner),
      );
    } catch (error) {
      forgetToken(owner.token);
      throw error;
    }
  }

  /**
   * Removes a session's lease on an operator's request (`palimpsest unlock`): a lapsed one (not
   * renewed for `leaseMs`, or its owner gone from this host) at once, one in force only with
   * `force`.
   */
  async unlock(id: string, options: UnlockOptions = {}): Promise<UnlockReport> {
    this.#assertWritable();
    checkSessionId(id);
    return this.#retrying(`unlock session '${shortId(id)}'`, (client) =>
      this.#leases.unlock(client, id, options),
    );
  }

  /**
   * The session's stats from its row, the last event's time and the events of the types the
   * stats need (selected by type on the server: no other row's data is sent).
   */
  async summarize(id: string): Promise<SessionStats> {
    this.#assertOpen();
    checkSessionId(id);
    return this.#retrying(`summarize session '${shortId(id)}'`, (client) =>
      this.#snapshot(client, async () => {
        const { row, header } = await this.#session(client, id);
        const count = Number(row.next_seq);
        // The last event is a row: a run's chunks are cited by a later message.
        const { rows: last } = await client.query<{ time: string }>(
          `SELECT time FROM ${this.#s}.events WHERE session_key = $1 AND seq = $2`,
          [row.key, count - 1],
        );
        const { rows } = await client.query<{ seq: string; type: string; data: string }>(
          `SELECT seq, type, data FROM ${this.#s}.events WHERE session_key = $1 AND type = ANY($2::text[]) ORDER BY seq`,
          [row.key, [...STATS_EVENT_TYPES]],
        );
        const site = { location: this.location, id };
        const events = rows.map((event) => {
          try {
            return { type: event.type, data: JSON.parse(event.data) as JsonValue };
          } catch (error) {
            throw new CorruptLogError(
              {
                file: this.location,
                row: Number(event.seq),
                reason: `the data of session '${site.id}' is not valid JSON`,
              },
              { cause: error },
            );
          }
        });
        const lastTime = last[0] === undefined ? undefined : Number(last[0].time);
        return statsOf(header, count, lastTime, events);
      }),
    );
  }

  /**
   * Checks the arguments and the lease, and drops nothing: each batch is one transaction, so a
   * database never has a torn tail.
   */
  async discardTornTail(id: string, tail: TornTail, lock: SessionLock): Promise<void> {
    this.#assertWritable();
    checkSessionId(id);
    checkTornTail(id, tail, lock);
    await this.#retrying(`discard the torn tail of session '${shortId(id)}'`, (client) =>
      this.#leases.checkHeld(client, id, lock.owner),
    );
  }

  /** Stops the heartbeats, releases the leases this store holds, and ends its own pool. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let failure: unknown;
    try {
      await this.#leases.releaseAll();
    } catch (error) {
      // A lease left behind expires within its bound.
      failure = error;
    }
    if (this.#ownsPool) {
      try {
        await this.#pool.end();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw asStorageError('close', this.location, failure);
  }

  /**
   * Whether the session holds exactly `encoded` at its seqs (a retried batch that landed), as
   * rows or as chunks of the runs the batch made.
   */
  async #holds(
    client: PgQueryable,
    id: string,
    key: string,
    encoded: readonly EncodedEvent[],
  ): Promise<boolean> {
    const first = (encoded[0] as EncodedEvent).seq;
    const end = first + encoded.length;
    const { rows } = await client.query<EventRow>(
      `SELECT seq, type, time, data, source_event_seqs, surface_op FROM ${this.#s}.events WHERE session_key = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [key, first, end],
    );
    const stored = new Map<number, EncodedEvent>();
    for (const row of rows) {
      const seq = Number(row.seq);
      stored.set(seq, {
        seq,
        type: row.type,
        time: Number(row.time),
        data: row.data,
        sources: row.source_event_seqs,
        surfaceOp: row.surface_op,
      });
    }
    const runs = await this.#runs(client, key, ' AND first_seq < $3 AND first_seq + count > $2', [
      first,
      end,
    ]);
    const context = runContext({ location: this.location, id }, key);
    for (const run of runs.map(toRunRow)) {
      const envelopes = runEnvelopes(run);
      const texts = runTexts(run);
      if (!isIntact(context.key, run) || envelopes === undefined || texts === undefined) {
        return false;
      }
      for (let i = 0; i < run.count; i++) {
        const seq = run.first_seq + i;
        const data = texts[i] as string;
        const time = envelopes.times[i] as number;
        stored.set(seq, { seq, type: RUN_TYPE, time, data, sources: null, surfaceOp: null });
      }
    }
    return encoded.every((event) => {
      const found = stored.get(event.seq);
      return (
        found !== undefined &&
        found.type === event.type &&
        found.time === event.time &&
        found.data === event.data &&
        found.sources === event.sources &&
        found.surfaceOp === event.surfaceOp
      );
    });
  }

  async #insert(client: PgQueryable, key: string, rows: readonly EncodedEvent[]): Promise<void> {
    const values: unknown[] = [key];
    const tuples: string[] = [];
    for (const row of rows) {
      const n = values.length;
      tuples.push(`($1, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6})`);
      values.push(row.seq, row.type, row.time, row.data, row.sources, row.surfaceOp);
    }
    await client.query(
      `INSERT INTO ${this.#s}.events (session_key, seq, type, time, data, source_event_seqs, surface_op) VALUES ${tuples.join(', ')}`,
      values,
    );
  }

  /** The session's row and its checked header; `NotFoundError` when there is none. */
  async #session(
    client: PgQueryable,
    id: string,
  ): Promise<{ row: SessionRow; header: SessionHeader }> {
    const { rows } = await client.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM ${this.#s}.sessions WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) throw new NotFoundError(id, this.location);
    return { row, header: this.#header(row) };
  }

  /** The session's key and next seq, the row locked for the transaction when `forUpdate`. */
  async #position(
    client: PgQueryable,
    id: string,
    forUpdate: boolean,
  ): Promise<{ key: string; next: number }> {
    const { rows } = await client.query<{ key: string; next_seq: string }>(
      `SELECT key, next_seq FROM ${this.#s}.sessions WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
      [id],
    );
    const row = rows[0];
    if (row === undefined) throw new NotFoundError(id, this.location);
    return { key: row.key, next: Number(row.next_seq) };
  }

  #header(row: SessionRow): SessionHeader {
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.header);
    } catch (error) {
      throw new CorruptLogError(
        {
          file: this.location,
          reason: `the header of session '${shortId(row.id)}' is not valid JSON`,
        },
        { cause: error },
      );
    }
    return decodeStoredHeader(parsed, {
      where: { file: this.location },
      expectedId: row.id,
      subject: `the header of session '${shortId(row.id)}'`,
    });
  }

  /** Runs `work` in a transaction on `client`, rolled back when it throws. */
  #transaction<T>(client: PgQueryable, work: () => Promise<T>): Promise<T> {
    return inTransaction(client, 'BEGIN', work);
  }

  /** Runs `work` in a read-only snapshot: every read sees the same committed state. */
  #snapshot<T>(client: PgQueryable, work: () => Promise<T>): Promise<T> {
    return inTransaction(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', work);
  }

  /**
   * Runs `work` on a pooled client, again on a fresh one (with `retry` set) while the connection
   * is lost, until `retryMs` has passed: then `StoreUnavailableError`. Other failures pass
   * through as typed errors.
   */
  async #retrying<T>(
    action: string,
    work: (client: PgPoolClient, retry: boolean) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + this.settings.retryMs;
    let pause = RETRY_FIRST_MS;
    let started = false;
    for (let attempt = 0; ; attempt++) {
      this.#assertOpen();
      let client: PgPoolClient | undefined;
      try {
        client = await this.#pool.connect();
        // A connection that drops between two queries is reported as an event of the client
        // (which would be an uncaught error with no listener); the next query rejects anyway.
        client.on('error', ignore);
        started = true;
        const result = await work(client, attempt > 0);
        client.removeListener('error', ignore);
        client.release();
        return result;
      } catch (error) {
        const lost = isConnectionFailure(error);
        client?.removeListener('error', ignore);
        client?.release(lost ? toError(error) : undefined);
        if (!lost) throw asStorageError(action, this.location, error);
        if (Date.now() + pause > deadline) {
          throw new StoreUnavailableError(action, this.location, started ? 'unknown' : 'none', {
            cause: error,
          });
        }
        await sleep(pause);
        pause = Math.min(pause * 2, RETRY_CAP_MS);
      }
    }
  }

  #assertOpen(): void {
    assertOpen(this.#closed, this.location);
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.settings.readOnly) {
      throw new InvalidStoreError(
        'READ_ONLY',
        `${this.location} was opened read-only; writes are refused`,
      );
    }
  }
}

function encode(event: SessionEvent): EncodedEvent {
  const data = JSON.stringify(event.data) as string | undefined;
  if (data === undefined) {
    throw new InvalidArgumentError(`event ${event.seq} (${event.type}) has no JSON data`);
  }
  return {
    seq: event.seq,
    type: event.type,
    time: event.time,
    data,
    sources: event.sourceEventSeqs === undefined ? null : JSON.stringify(event.sourceEventSeqs),
    surfaceOp: event.surfaceOp === undefined ? null : JSON.stringify(event.surfaceOp),
  };
}

/** The payload of an append's notification: the id (length-prefixed, ids may hold spaces) and its new length. */
export function notification(id: string, next: number): string {
  return `${id.length}:${id} ${next}`;
}

function ignore(): void {}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type { LockOwner };

/** Runs `work` between `begin` and `COMMIT` on `client`, rolled back when it throws. */
async function inTransaction<T>(
  client: PgQueryable,
  begin: string,
  work: () => Promise<T>,
): Promise<T> {
  await client.query(begin);
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
