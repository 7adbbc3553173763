/**
 * The reads of the PostgreSQL store: load (whole, fast or salvaged), summarize, list and watch,
 * and the row reads its writes share (a session's row, its position, its chunk runs). Every read
 * of more than one statement runs in one read-only snapshot, so it sees one committed state.
 */
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { CorruptLogError, FormatVersionError, NotFoundError } from '../contract/errors.js';
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
  shortId,
  statsOf,
} from '../contract/store-rules.js';
import { notification, type PgContext, snapshot } from './context.js';
import type { PgQueryable } from './driver.js';
import { Listener } from './listener.js';
import {
  decodePage,
  decodeRow,
  decodeRows,
  EVENT_COLUMNS,
  type EventRow,
  type PgRunRow,
  RUN_COLUMNS,
  RUN_ENVELOPE_COLUMNS,
  runContext,
} from './rows.js';
import {
  checkLength,
  decodeSessionRow,
  idOrder,
  POSITION_COLUMNS,
  type PositionRow,
  SESSION_COLUMNS,
  type SessionRow,
} from './session-rows.js';

/** Rows a watch reads at a time. */
const WATCH_PAGE = 10_000;

/** Loads a session: its rows and runs in one snapshot, checked as they are decoded. */
export async function loadSession(
  ctx: PgContext,
  id: string,
  options: LoadOptions,
): Promise<LoadedSession> {
  ctx.assertOpen();
  checkSessionId(id);
  const salvage = options.salvage === true;
  const elide = options.elideFinishedChunks === true && !salvage;
  return ctx.retrying(`load session '${shortId(id)}'`, (client) =>
    snapshot(client, async () => {
      const { row, header } = await sessionRow(ctx, client, id);
      const recorded = Number(row.next_seq);
      // Both queries are queued on the one connection before either is awaited (a rejection
      // of the second while the first is awaited must not go unhandled). The fast path reads
      // the runs without their data, checked by their envelope checksum (see docs/postgres.md).
      const pendingRuns = runsOf(ctx, client, row.key, '', [], elide);
      pendingRuns.catch(() => {});
      const { rows } = await client.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM ${ctx.s}.events WHERE session_key = $1 ORDER BY seq`,
        [row.key],
      );
      const runs = await pendingRuns;
      const decoded = decodeRows(ctx.site(id), row.key, rows, runs, recorded, { elide, salvage });
      return LoadedSession.fromLog(header, decoded.log, decoded);
    }),
  );
}

/**
 * The session's stats from its row, the last event's time and the events of the types the
 * stats need (selected by type on the server: no other row's data is sent).
 */
export async function summarizeSession(ctx: PgContext, id: string): Promise<SessionStats> {
  ctx.assertOpen();
  checkSessionId(id);
  return ctx.retrying(`summarize session '${shortId(id)}'`, (client) =>
    snapshot(client, async () => {
      const { row, header } = await sessionRow(ctx, client, id);
      const count = Number(row.next_seq);
      const context = runContext(ctx.site(id), row.key);
      // The last event is a row: a run's chunks are cited by a later message. Each row read is
      // checked as a load checks it.
      const { rows: last } = await client.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM ${ctx.s}.events WHERE session_key = $1 AND seq = $2`,
        [row.key, count - 1],
      );
      const { rows } = await client.query<EventRow>(
        `SELECT ${EVENT_COLUMNS} FROM ${ctx.s}.events WHERE session_key = $1 AND type = ANY($2::text[]) ORDER BY seq`,
        [row.key, [...STATS_EVENT_TYPES]],
      );
      const events = rows.map((event) => decodeRow(context, event));
      const lastTime = last[0] === undefined ? undefined : decodeRow(context, last[0]).time;
      return statsOf(header, count, lastTime, events);
    }),
  );
}

/** A page of sessions, newest first, by keyset: a page deep in a large store costs the same. */
export async function listSessions(ctx: PgContext, options: ListOptions): Promise<SessionPage> {
  ctx.assertOpen();
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
    conditions.push(`id LIKE ${param(`${filter.idPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`);
  }
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  const sql = `SELECT ${SESSION_COLUMNS} FROM ${ctx.s}.sessions${where} ORDER BY created_at DESC, id_order ASC LIMIT ${param(limit + 1)}`;
  const { rows } = await ctx.retrying('list sessions', (client) =>
    client.query<SessionRow>(sql, values),
  );
  const sessions: SessionSummary[] = [];
  const damaged: DamagedSession[] = [];
  for (const row of rows.slice(0, limit)) {
    try {
      sessions.push({
        header: decodeSessionRow(ctx.location, row),
        updatedAt: Number(row.updated_at),
        eventCount: Number(row.next_seq),
      });
    } catch (error) {
      if (!CorruptLogError.isInstance(error) && !FormatVersionError.isInstance(error)) throw error;
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

/**
 * Follows a session through LISTEN/NOTIFY on the store's channel, with a catch-up read after
 * every notification, reconnect and poll (see `listener.ts`), so no event is missed or repeated
 * across reconnects.
 */
export function watchSession(
  ctx: PgContext,
  id: string,
  options: WatchOptions,
): AsyncIterable<SessionEvent> {
  return follow(
    async () => {
      ctx.assertOpen();
      checkSessionId(id);
      const action = `watch session '${shortId(id)}'`;
      const key = await ctx.retrying(
        action,
        async (client) => (await positionOf(ctx, client, id, false)).key,
      );
      const listener = new Listener(ctx.pool, ctx.channel, notification(id, 0).replace(/0$/, ''));
      return {
        read: (from) => ctx.retrying(action, (client) => watchPage(ctx, client, id, key, from)),
        changed: (signal) => listener.wait(signal),
        close: () => listener.close(),
      };
    },
    ctx.location,
    options,
  );
}

/**
 * A watcher's page: the session's row, the rows from `from` on, at most
 * {@link WATCH_PAGE}, and the runs among them, read in one snapshot, so that rows a concurrent
 * append moves into a run are seen as rows or as the run, never both or neither, and a page that
 * ends before the length its snapshot records is damage, not a wait for rows that never come. A
 * run may begin before `from` (a watcher that read its first rows on an earlier page): the merge
 * skips into it.
 */
function watchPage(
  ctx: PgContext,
  client: PgQueryable,
  id: string,
  key: string,
  from: number,
): Promise<SessionEvent[]> {
  return snapshot(client, async () => {
    // The whole session row, checked as a load checks it: a follower is a reader too.
    const { row } = await sessionRow(ctx, client, id);
    if (row.key !== key) throw new NotFoundError(id, ctx.location);
    const { rows } = await client.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ${ctx.s}.events WHERE session_key = $1 AND seq >= $2 ORDER BY seq LIMIT ${WATCH_PAGE}`,
      [key, from],
    );
    // A full page ends at its last row; the runs past it belong to the next page.
    const cut = rows.length === WATCH_PAGE;
    const upto = cut ? Number((rows.at(-1) as EventRow).seq) : null;
    const runs = await runsOf(
      ctx,
      client,
      key,
      ' AND first_seq + count > $2 AND ($3::bigint IS NULL OR first_seq < $3)',
      [from, upto],
    );
    const length = Number(row.next_seq);
    return decodePage(ctx.site(id), key, rows, runs, from, { length, cut });
  });
}

/**
 * The chunk runs of a session in seq order, with `where` appended to its condition; with
 * `envelopes`, without their data.
 */
export async function runsOf(
  ctx: PgContext,
  client: PgQueryable,
  key: string,
  where: string,
  values: readonly unknown[] = [],
  envelopes = false,
): Promise<PgRunRow[]> {
  const columns = envelopes ? RUN_ENVELOPE_COLUMNS : RUN_COLUMNS;
  const { rows } = await client.query<PgRunRow>(
    `SELECT ${columns} FROM ${ctx.s}.chunk_runs WHERE session_key = $1${where} ORDER BY first_seq`,
    [key, ...values],
  );
  return rows;
}

/**
 * The session's key and next seq, its length checked against its checksum; the row locked for
 * the transaction when `forUpdate`.
 */
export async function positionOf(
  ctx: PgContext,
  client: PgQueryable,
  id: string,
  forUpdate: boolean,
): Promise<{ key: string; next: number }> {
  const { rows } = await client.query<PositionRow>(
    `SELECT ${POSITION_COLUMNS} FROM ${ctx.s}.sessions WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) throw new NotFoundError(id, ctx.location);
  checkLength(ctx.location, row);
  return { key: row.key, next: Number(row.next_seq) };
}

/** The session's row and its checked header; `NotFoundError` when there is none. */
async function sessionRow(
  ctx: PgContext,
  client: PgQueryable,
  id: string,
): Promise<{ row: SessionRow; header: SessionHeader }> {
  const { rows } = await client.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM ${ctx.s}.sessions WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) throw new NotFoundError(id, ctx.location);
  return { row, header: decodeSessionRow(ctx.location, row) };
}
