/**
 * The writes of the PostgreSQL store: create, append, delete and the torn-tail check. Each is one
 * transaction, retried over a lost connection; a retry first reads what the session holds, so a
 * write the server committed before the client heard is recognised and applied exactly once.
 */
import { validateHeader } from '../../core/header.js';
import type { SessionEvent, SessionHeader } from '../../core/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../contract/errors.js';
import type {
  AppendOptions,
  ReplaceLogOptions,
  SessionLock,
  TornTail,
} from '../contract/session-store.js';
import {
  checkBatch,
  checkReplaceLog,
  checkSessionId,
  checkTornTail,
  shortId,
} from '../contract/store-rules.js';
import { isIntact } from '../sql/chunk-run-rows.js';
import { RUN_TYPE, runEnvelopes, runTexts } from '../sql/chunk-runs.js';
import { rowChecksum, sessionChecksum } from '../sql/row-checksums.js';
import { planRuns, writeRuns } from './chunk-run-writer.js';
import { notification, type PgContext, transaction } from './context.js';
import { type PgQueryable, sqlState } from './driver.js';
import type { Leases } from './leases.js';
import { positionOf, runsOf } from './reads.js';
import { EVENT_COLUMNS, type EventRow, runContext, toRunRow } from './rows.js';
import { idOrder, lengthChecksum } from './session-rows.js';

/** Rows per INSERT statement: 8 parameters a row stays far below the protocol's 65,535. */
const ROWS_PER_INSERT = 1000;

/** One event as stored: the column values of its row. */
interface EncodedEvent {
  readonly seq: number;
  readonly type: string;
  readonly time: number;
  readonly data: string;
  readonly sources: string | null;
  readonly surfaceOp: string | null;
}

/** Creates a session's row; `AlreadyExistsError` when the id is taken. */
export async function createSession(ctx: PgContext, header: SessionHeader): Promise<void> {
  ctx.assertWritable();
  checkSessionId(header.id);
  const valid = validateHeader(header);
  const text = JSON.stringify(valid);
  await ctx.retrying(`create session '${shortId(valid.id)}'`, async (client, retry) => {
    const now = Date.now();
    try {
      await client.query(
        `INSERT INTO ${ctx.s}.sessions (id, id_order, created_at, parent_session, header, next_seq, updated_at, crc, length_crc) VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8)`,
        [
          valid.id,
          idOrder(valid.id),
          valid.createdAt,
          valid.parentSession ?? null,
          text,
          now,
          sessionChecksum(valid.id, valid.createdAt, text),
          lengthChecksum(valid.id, 0, now),
        ],
      );
    } catch (error) {
      if (sqlState(error) !== '23505') throw error;
      // A retry finding the very header it sent finds its own first attempt.
      if (retry) {
        const { rows } = await client.query<{ header: string; next_seq: string }>(
          `SELECT header, next_seq FROM ${ctx.s}.sessions WHERE id = $1`,
          [valid.id],
        );
        if (rows[0]?.header === text && rows[0].next_seq === '0') return;
      }
      throw new AlreadyExistsError(valid.id, ctx.location);
    }
  });
}

/**
 * Appends a batch in one transaction: the session's row locked, the lease checked (fencing) and
 * `expectedSeq` against `next_seq` (a fenced writer hears of its lease first), the rows and runs
 * inserted, `next_seq` advanced and the append notified.
 */
export async function appendEvents(
  ctx: PgContext,
  leases: Leases,
  id: string,
  events: readonly SessionEvent[],
  options: AppendOptions,
): Promise<void> {
  ctx.assertWritable();
  checkSessionId(id);
  checkBatch(id, events, options);
  const expected = options.expectedSeq;
  const encoded = events.map(encode);
  await ctx.retrying(`append to session '${shortId(id)}'`, (client, retry) =>
    transaction(
      client,
      async () => {
        const position = await positionOf(ctx, client, id, true);
        if (position.next !== expected) {
          if (retry && position.next === expected + encoded.length && encoded.length > 0) {
            if (await holds(ctx, client, id, position.key, encoded)) return;
          }
          // A writer fenced off is told so (LEASE_LOST), not that the new holder appended first.
          await leases.checkWriter(client, id);
          throw new ConflictError(id, expected, position.next);
        }
        if (encoded.length === 0) return;
        await leases.checkWriter(client, id);
        await writeRows(ctx, client, id, position.key, events, encoded, expected);
        await advance(ctx, client, id, position.key, expected + encoded.length);
      },
      ctx.settings.leaseMs,
    ),
  );
}

/** Inserts the rows and chunk runs of `events`, the first at seq `expected` (in a transaction). */
async function writeRows(
  ctx: PgContext,
  client: PgQueryable,
  id: string,
  key: string,
  events: readonly SessionEvent[],
  encoded: readonly EncodedEvent[],
  expected: number,
): Promise<void> {
  const site = ctx.site(id);
  const runs = await planRuns(client, ctx.s, site, key, events, expected);
  const rows = encoded.filter((event) => !runs.joins(event.seq));
  for (let from = 0; from < rows.length; from += ROWS_PER_INSERT) {
    await insert(ctx, client, key, rows.slice(from, from + ROWS_PER_INSERT));
  }
  await writeRuns(client, ctx.s, site, key, runs, expected);
}

/**
 * Sets the session's length and notifies its watchers. The notification rides on the update
 * (one round trip less per append); it is delivered only if the transaction commits. The
 * length's checksum was checked when the row was read (positionOf): a damaged one is never
 * rewritten.
 */
async function advance(
  ctx: PgContext,
  client: PgQueryable,
  id: string,
  key: string,
  next: number,
): Promise<void> {
  const now = Date.now();
  await client.query(
    `UPDATE ${ctx.s}.sessions SET next_seq = $1, updated_at = $2, length_crc = $3 WHERE key = $4 RETURNING pg_notify($5, $6)`,
    [next, now, lengthChecksum(id, next, now), key, ctx.channel, notification(id, next)],
  );
}

/**
 * Replaces the session's rows in one transaction under its lease: every event row and chunk run
 * deleted, `events` inserted. The old rows leave every query and `pg_dump` at the commit; their
 * dead tuples stay in the table's pages until a `VACUUM`, and in the WAL until it is recycled.
 */
export async function replaceLog(
  ctx: PgContext,
  leases: Leases,
  id: string,
  events: readonly SessionEvent[],
  options: ReplaceLogOptions,
  lock: SessionLock,
): Promise<void> {
  ctx.assertWritable();
  checkSessionId(id);
  checkReplaceLog(id, events, options, lock);
  const encoded = events.map(encode);
  await ctx.retrying(`replace the log of session '${shortId(id)}'`, (client, retry) =>
    transaction(
      client,
      async () => {
        const position = await positionOf(ctx, client, id, true);
        await leases.checkHeld(client, id, lock.owner);
        if (position.next !== options.expectedLength) {
          // A retry finding the log it wrote finds its own first attempt committed.
          const landed =
            retry &&
            position.next === encoded.length &&
            (await holds(ctx, client, id, position.key, encoded));
          if (landed) return;
          throw new ConflictError(id, options.expectedLength, position.next);
        }
        await client.query(`DELETE FROM ${ctx.s}.events WHERE session_key = $1`, [position.key]);
        await client.query(`DELETE FROM ${ctx.s}.chunk_runs WHERE session_key = $1`, [
          position.key,
        ]);
        await writeRows(ctx, client, id, position.key, events, encoded, 0);
        await advance(ctx, client, id, position.key, encoded.length);
      },
      ctx.settings.leaseMs,
    ),
  );
}

/** Deletes a session and everything of it; refused while a lease of it is in force. */
export async function deleteSession(ctx: PgContext, leases: Leases, id: string): Promise<void> {
  ctx.assertWritable();
  checkSessionId(id);
  await ctx.retrying(`delete session '${shortId(id)}'`, (client, retry) =>
    transaction(
      client,
      async () => {
        const { rows } = await client.query<{ key: string }>(
          `SELECT key FROM ${ctx.s}.sessions WHERE id = $1 FOR UPDATE`,
          [id],
        );
        const row = rows[0];
        if (row === undefined) {
          // A retry that finds nothing finds its own first attempt done.
          if (retry) return;
          throw new NotFoundError(id, ctx.location);
        }
        await leases.refuseHeld(client, id);
        await client.query(`DELETE FROM ${ctx.s}.events WHERE session_key = $1`, [row.key]);
        await client.query(`DELETE FROM ${ctx.s}.chunk_runs WHERE session_key = $1`, [row.key]);
        await client.query(`DELETE FROM ${ctx.s}.sessions WHERE key = $1`, [row.key]);
        await client.query(`DELETE FROM ${ctx.s}.leases WHERE session_id = $1`, [id]);
      },
      ctx.settings.leaseMs,
    ),
  );
}

/**
 * Checks the arguments and the lease, and drops nothing: each batch is one transaction, so a
 * database never has a torn tail.
 */
export async function discardTornTail(
  ctx: PgContext,
  leases: Leases,
  id: string,
  tail: TornTail,
  lock: SessionLock,
): Promise<void> {
  ctx.assertWritable();
  checkSessionId(id);
  checkTornTail(id, tail, lock);
  await ctx.retrying(`discard the torn tail of session '${shortId(id)}'`, (client) =>
    leases.checkHeld(client, id, lock.owner),
  );
}

/**
 * Whether the session holds exactly `encoded` at its seqs (a retried batch that landed), as
 * rows or as chunks of the runs the batch made.
 */
async function holds(
  ctx: PgContext,
  client: PgQueryable,
  id: string,
  key: string,
  encoded: readonly EncodedEvent[],
): Promise<boolean> {
  const first = (encoded[0] as EncodedEvent).seq;
  const end = first + encoded.length;
  const { rows } = await client.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ${ctx.s}.events WHERE session_key = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
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
  const runs = await runsOf(ctx, client, key, ' AND first_seq < $3 AND first_seq + count > $2', [
    first,
    end,
  ]);
  const context = runContext(ctx.site(id), key);
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

async function insert(
  ctx: PgContext,
  client: PgQueryable,
  key: string,
  rows: readonly EncodedEvent[],
): Promise<void> {
  const values: unknown[] = [key];
  const tuples: string[] = [];
  for (const row of rows) {
    const n = values.length;
    const { seq, type, time, data, sources, surfaceOp } = row;
    tuples.push(
      `($1, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}, $${n + 7})`,
    );
    const crc = rowChecksum(key, seq, type, time, data, sources, surfaceOp);
    values.push(seq, type, time, data, sources, surfaceOp, crc);
  }
  await client.query(
    `INSERT INTO ${ctx.s}.events (session_key, seq, type, time, data, source_event_seqs, surface_op, crc) VALUES ${tuples.join(', ')}`,
    values,
  );
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
