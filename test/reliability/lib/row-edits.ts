/**
 * Random edits of the rows of a PostgreSQL store, made with SQL as an operator, another program
 * or a restore gone wrong would make them: one value of one row changed (a character of a JSON
 * text, an integer moved, a bit of a binary column flipped, a checksum), a row's seq or session
 * changed, two rows' seqs swapped, a row deleted or copied. No edit recomputes a checksum: a
 * CRC-32 finds damage and careless edits, not forgery. Every edit changes at least one stored
 * value, or the server refuses it (a key already taken).
 */
import type pg from 'pg';
import { type PgRunRow, RUN_COLUMNS } from '../../../src/store/postgres/rows.js';

/** What an edit did, and which acknowledged sessions' rows it touched. */
export interface RowEdit {
  readonly kind: string;
  /** The ids of the sessions whose rows changed. */
  readonly touched: readonly string[];
  /** For a renamed session: its new id. */
  readonly renamedTo?: string;
}

/** A session of the store as the edits pick among them. */
interface SessionKey {
  readonly key: string;
  readonly id: string;
  readonly length: number;
}

/** Where edits land: the rows of a store, read once from its pristine state. */
export interface StoreRows {
  readonly sessions: readonly SessionKey[];
  readonly events: readonly { readonly session_key: string; readonly seq: string }[];
  readonly runs: readonly { readonly session_key: string; readonly first_seq: string }[];
}

/** Reads the keys of every row of the store in schema `s` (quoted). */
export async function storeRows(client: pg.Client, s: string): Promise<StoreRows> {
  const sessions = await client.query<{ key: string; id: string; next_seq: string }>(
    `SELECT key, id, next_seq FROM ${s}.sessions ORDER BY key`,
  );
  const events = await client.query<{ session_key: string; seq: string }>(
    `SELECT session_key, seq FROM ${s}.events ORDER BY session_key, seq`,
  );
  const runs = await client.query<{ session_key: string; first_seq: string }>(
    `SELECT session_key, first_seq FROM ${s}.chunk_runs ORDER BY session_key, first_seq`,
  );
  return {
    sessions: sessions.rows.map((row) => ({
      key: row.key,
      id: row.id,
      length: Number(row.next_seq),
    })),
    events: events.rows,
    runs: runs.rows,
  };
}

type Pick = () => number;

function pickOf<T>(items: readonly T[], next: Pick): T {
  return items[Math.floor(next() * items.length)] as T;
}

/** A nonzero integer in ±1..±`max`. */
function delta(next: Pick, max: number): number {
  const size = 1 + Math.floor(next() * max);
  return next() < 0.5 ? -size : size;
}

/**
 * `text` with one character changed: a digit to another digit, a letter to another letter (so
 * that JSON mostly stays JSON), anything else to another printable ASCII character.
 */
export function changeCharacter(text: string, next: Pick): string {
  if (text.length === 0) return ' ';
  const at = Math.floor(next() * text.length);
  const old = text[at] as string;
  const pool = /[0-9]/.test(old)
    ? '0123456789'
    : /[a-z]/i.test(old)
      ? 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
      : ' !#$%&()*+,-./:;<=>?@[]^_{|}~';
  let replacement = old;
  while (replacement === old) replacement = pool[Math.floor(next() * pool.length)] as string;
  return text.slice(0, at) + replacement + text.slice(at + 1);
}

/** `bytes` with one bit flipped. */
function flipBit(bytes: Buffer, next: Pick): Buffer {
  const copy = Buffer.from(bytes.length === 0 ? [0] : bytes);
  const at = Math.floor(next() * copy.length);
  copy[at] = (copy[at] as number) ^ (1 << Math.floor(next() * 8));
  return copy;
}

/** A 32-bit checksum with one bit flipped. */
function flipCrc(crc: string, next: Pick): string {
  return String((Number(crc) ^ (1 << Math.floor(next() * 32))) >>> 0);
}

/**
 * Makes one random edit of the rows of the store in schema `s` (quoted), or returns `'refused'`
 * when the server refused it (nothing changed).
 */
export async function editRow(
  client: pg.Client,
  s: string,
  rows: StoreRows,
  next: Pick,
): Promise<RowEdit | 'refused'> {
  const roll = next();
  const edit =
    roll < 0.5
      ? editEvent(client, s, rows, next)
      : roll < 0.75
        ? editRun(client, s, rows, next)
        : editSession(client, s, rows, next);
  try {
    return await edit;
  } catch (error) {
    // 23505: a key already taken; 23503: a foreign key; both leave the store as it was.
    const code = (error as { code?: unknown }).code;
    if (code === '23505' || code === '23503') return 'refused';
    throw error;
  }
}

/**
 * The row of `table` that `where` picks (its `columns`), and an edit that sets one of its columns
 * (a change to the rows of the sessions `touched`).
 */
async function editable<R>(
  client: pg.Client,
  table: string,
  where: string,
  columns: string,
  touched: readonly string[],
): Promise<{ row: R; set: (kind: string, column: string, value: unknown) => Promise<RowEdit> }> {
  const { rows } = await client.query(`SELECT ${columns} FROM ${table} WHERE ${where}`);
  return {
    row: rows[0] as R,
    set: async (kind, column, value) => {
      await client.query(`UPDATE ${table} SET ${column} = $1 WHERE ${where}`, [value]);
      return { kind, touched };
    },
  };
}

function sessionOf(rows: StoreRows, key: string): SessionKey {
  const session = rows.sessions.find((candidate) => candidate.key === key);
  if (session === undefined) throw new Error(`no session of key ${key}`);
  return session;
}

function otherSession(rows: StoreRows, key: string, next: Pick): SessionKey {
  return pickOf(
    rows.sessions.filter((session) => session.key !== key),
    next,
  );
}

interface EventValues {
  readonly type: string;
  readonly time: string;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
  readonly crc: string;
}

async function editEvent(
  client: pg.Client,
  s: string,
  rows: StoreRows,
  next: Pick,
): Promise<RowEdit> {
  const target = pickOf(rows.events, next);
  const session = sessionOf(rows, target.session_key);
  const where = `session_key = ${target.session_key} AND seq = ${target.seq}`;
  const { row, set } = await editable<EventValues>(
    client,
    `${s}.events`,
    where,
    'type, time, data, source_event_seqs, surface_op, crc',
    [session.id],
  );
  const kinds = [
    () => set('event data: a character changed', 'data', changeCharacter(row.data, next)),
    () => {
      const types = ['app/edited', 'turn/start', 'assistant/chunk', 'tool/result', 'user/message'];
      return set(
        'event type changed',
        'type',
        pickOf(
          types.filter((type) => type !== row.type),
          next,
        ),
      );
    },
    () => set('event time changed', 'time', String(BigInt(row.time) + BigInt(delta(next, 1000)))),
    () =>
      set(
        'event sources changed',
        'source_event_seqs',
        changedSources(row.source_event_seqs, next),
      ),
    () => set('event surface op changed', 'surface_op', changedSurfaceOp(row.surface_op, next)),
    () => set('event checksum changed', 'crc', flipCrc(row.crc, next)),
    async (): Promise<RowEdit> => {
      const others = rows.events.filter(
        (event) => event.session_key === target.session_key && event.seq !== target.seq,
      );
      const other = pickOf(others, next);
      await client.query(
        // One query of three statements: one implicit transaction.
        `UPDATE ${s}.events SET seq = -1 WHERE session_key = ${target.session_key} AND seq = ${target.seq};
         UPDATE ${s}.events SET seq = ${target.seq} WHERE session_key = ${target.session_key} AND seq = ${other.seq};
         UPDATE ${s}.events SET seq = ${other.seq} WHERE session_key = ${target.session_key} AND seq = -1`,
      );
      return { kind: 'event seqs of two rows swapped', touched: [session.id] };
    },
    () => set('event moved to a free seq', 'seq', session.length + Math.floor(next() * 3)),
    async (): Promise<RowEdit> => {
      const other = otherSession(rows, target.session_key, next);
      await client.query(`UPDATE ${s}.events SET session_key = $1, seq = $2 WHERE ${where}`, [
        other.key,
        other.length,
      ]);
      return { kind: 'event moved to another session', touched: [session.id, other.id] };
    },
    async (): Promise<RowEdit> => {
      await client.query(`DELETE FROM ${s}.events WHERE ${where}`);
      return { kind: 'event row deleted', touched: [session.id] };
    },
    async (): Promise<RowEdit> => {
      await client.query(
        `INSERT INTO ${s}.events (session_key, seq, type, time, data, source_event_seqs, surface_op, crc)
         SELECT session_key, $1, type, time, data, source_event_seqs, surface_op, crc FROM ${s}.events WHERE ${where}`,
        [session.length],
      );
      return { kind: 'event row copied past the end', touched: [session.id] };
    },
  ];
  return pickOf(kinds, next)();
}

/** Sources changed: a seq moved, one dropped or added, or the column emptied or filled. */
function changedSources(sources: string | null, next: Pick): string | null {
  if (sources === null) return '[0]';
  const seqs = JSON.parse(sources) as number[];
  if (seqs.length === 0) return next() < 0.5 ? null : '[0]';
  const roll = next();
  if (roll < 0.25) return null;
  if (roll < 0.5) return JSON.stringify(seqs.slice(0, -1));
  if (roll < 0.75) return JSON.stringify([...seqs, (seqs.at(-1) as number) + 1]);
  const at = Math.floor(next() * seqs.length);
  return JSON.stringify(seqs.map((seq, i) => (i === at ? seq + 1 : seq)));
}

/** A surface op changed: added, removed, or turned into the other kind. */
function changedSurfaceOp(op: string | null, next: Pick): string | null {
  if (op === null) return '"append"';
  if (next() < 0.3) return null;
  return op === '"append"' ? '{"op":"replace","start":0,"end":0}' : '"append"';
}

async function editRun(
  client: pg.Client,
  s: string,
  rows: StoreRows,
  next: Pick,
): Promise<RowEdit> {
  const target = pickOf(rows.runs, next);
  const session = sessionOf(rows, target.session_key);
  const where = `session_key = ${target.session_key} AND first_seq = ${target.first_seq}`;
  const { row, set } = await editable<PgRunRow & { readonly data: Buffer }>(
    client,
    `${s}.chunk_runs`,
    where,
    RUN_COLUMNS,
    [session.id],
  );
  const kinds = [
    () => set('run data: a bit flipped', 'data', flipBit(row.data, next)),
    () => set('run times: a bit flipped', 'times', flipBit(row.times, next)),
    () => set('run sizes: a bit flipped', 'sizes', flipBit(row.sizes, next)),
    () =>
      set(
        'run first seq changed',
        'first_seq',
        String(BigInt(target.first_seq) + (next() < 0.5 ? -1n : 1n)),
      ),
    () => set('run count changed', 'count', row.count + (next() < 0.5 ? -1 : 1)),
    () => set('run time changed', 'time', String(BigInt(row.time) + BigInt(delta(next, 1000)))),
    () => set('run checksum changed', 'crc', flipCrc(row.crc, next)),
    () => set('run envelope checksum changed', 'envelope_crc', flipCrc(row.envelope_crc, next)),
    async (): Promise<RowEdit> => {
      const other = otherSession(rows, target.session_key, next);
      await client.query(`UPDATE ${s}.chunk_runs SET session_key = $1 WHERE ${where}`, [other.key]);
      return { kind: 'run moved to another session', touched: [session.id, other.id] };
    },
    async (): Promise<RowEdit> => {
      await client.query(`DELETE FROM ${s}.chunk_runs WHERE ${where}`);
      return { kind: 'run deleted', touched: [session.id] };
    },
  ];
  return pickOf(kinds, next)();
}

interface SessionValues {
  readonly id_order: Buffer;
  readonly header: string;
  readonly created_at: string;
  readonly parent_session: string | null;
  readonly updated_at: string;
  readonly crc: string;
  readonly length_crc: string;
}

async function editSession(
  client: pg.Client,
  s: string,
  rows: StoreRows,
  next: Pick,
): Promise<RowEdit> {
  const session = pickOf(rows.sessions, next);
  const where = `key = ${session.key}`;
  const { row, set } = await editable<SessionValues>(
    client,
    `${s}.sessions`,
    where,
    'id_order, header, created_at, parent_session, updated_at, crc, length_crc',
    [session.id],
  );
  const kinds = [
    () => set('session header: a character changed', 'header', changeCharacter(row.header, next)),
    () =>
      set(
        'session created_at changed',
        'created_at',
        String(BigInt(row.created_at) + BigInt(delta(next, 1000))),
      ),
    () => set('session next_seq changed', 'next_seq', Math.max(0, session.length + delta(next, 3))),
    () =>
      set(
        'session updated_at changed',
        'updated_at',
        String(BigInt(row.updated_at) + BigInt(delta(next, 1000))),
      ),
    () =>
      set(
        'session parent_session changed',
        'parent_session',
        row.parent_session === null ? otherSession(rows, session.key, next).id : null,
      ),
    () => set('session id_order: a bit flipped', 'id_order', flipBit(row.id_order, next)),
    () => set('session checksum changed', 'crc', flipCrc(row.crc, next)),
    () => set('session length checksum changed', 'length_crc', flipCrc(row.length_crc, next)),
    async (): Promise<RowEdit> => {
      const renamedTo = `${session.id}-renamed`;
      await client.query(`UPDATE ${s}.sessions SET id = $1 WHERE ${where}`, [renamedTo]);
      return { kind: 'session renamed', touched: [session.id], renamedTo };
    },
  ];
  return pickOf(kinds, next)();
}
