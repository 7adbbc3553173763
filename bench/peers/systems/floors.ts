/**
 * Floors: the least any log of the same events could do, measured in the same run. Appends:
 * stringify a turn's 204 events and write them with one `writeSync` (and one `fdatasync`), or
 * one transaction of 204 raw better-sqlite3 inserts, or one 204-row `INSERT` through raw `pg`;
 * or palimpsest's own JSONL encoding of the turn's admitted events and one `writeSync`.
 * Resumes: read palimpsest's JSONL file and `JSON.parse` every line; one `SELECT` of the
 * non-chunk rows of palimpsest's SQLite database with `JSON.parse` of each row's data; and what
 * any full replay of that database reads: every row of both its tables, the JSON columns of the
 * event rows parsed and every chunk run inflated into its text (nothing split, parsed or checked).
 */
import { closeSync, fdatasyncSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import pg from 'pg';
import { Session, type SessionEvent } from '../../../src/core/index.js';
import { DEFAULT_MAX_LINE_BYTES, encodeBatch } from '../../../src/store/jsonl/format.js';
import type { TurnAppend } from '../../store-workload.js';
import { appendTurnEvent, BENCH_TIME0, benchClock } from '../../store-workload.js';
import { Conversation } from '../conversation.js';
import { directoryBytes } from '../disk.js';
import { pgUrl, schemaBytes, schemaFor } from '../pg.js';
import type { BenchSystem, ResumeTarget, SessionRecorder, SystemStore } from '../system.js';
import { DURABLE_SQL_MAX_TURNS, SQLITE_FILE } from './palimpsest.js';

/** A stored event's fields, as palimpsest's envelope has them. */
interface Envelope {
  readonly seq: number;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly surfaceOp?: unknown;
  readonly sourceEventSeqs?: readonly number[];
}

function envelope(seq: number, append: TurnAppend): Envelope {
  const base = { seq, time: BENCH_TIME0 + seq, type: append.type, data: append.data };
  if (!('intent' in append)) return base;
  return { ...base, ...append.intent };
}

/** A row of the raw tables: the session, the envelope's fields, the JSON ones as text. */
function columns(id: string, e: Envelope): unknown[] {
  return [
    id,
    e.seq,
    e.type,
    e.time,
    JSON.stringify(e.data),
    e.sourceEventSeqs === undefined ? null : JSON.stringify(e.sourceEventSeqs),
    e.surfaceOp === undefined ? null : JSON.stringify(e.surfaceOp),
  ];
}

/** Hands out each turn's envelopes, built before the timed part. */
class TurnEnvelopes {
  private readonly conversation = new Conversation();
  private seq = 0;
  current: Envelope[] = [];

  next(): void {
    const appends = this.conversation.appends(this.seq);
    this.current = appends.map((append, i) => envelope(this.seq + i, append));
    this.seq += appends.length;
  }
}

function fileFloor(name: string, sync: boolean): BenchSystem {
  return {
    name,
    role: 'floor',
    durability: sync ? 'durable' : 'non-durable',
    recordsPerTurn: 204,
    async open(dir: string): Promise<SystemStore> {
      const fds: number[] = [];
      return {
        async openSession(id: string): Promise<SessionRecorder> {
          const fd = openSync(join(dir, `${id}.jsonl`), 'a');
          fds.push(fd);
          const turns = new TurnEnvelopes();
          return {
            prepareTurn: () => turns.next(),
            async appendTurn() {
              let text = '';
              for (const event of turns.current) text += `${JSON.stringify(event)}\n`;
              writeSync(fd, text);
              if (sync) fdatasyncSync(fd);
            },
            async close() {
              closeSync(fd);
            },
          };
        },
        async bytes() {
          return directoryBytes(dir);
        },
        async close() {},
      };
    },
  };
}

/**
 * What palimpsest's JSONL format costs before any check: the turn's events are admitted by a core
 * `Session` before the timed part (which keeps them, as a live session does), and the timed part
 * is one `encodeBatch` of them (run lines, CRC-32, commit marker) and one `writeSync`. An append
 * of every chunk in this format cannot cost less, however cheap its checks.
 */
function encodingFloor(name: string): BenchSystem {
  return {
    name,
    role: 'floor',
    durability: 'non-durable',
    recordsPerTurn: 204,
    async open(dir: string): Promise<SystemStore> {
      const fds: number[] = [];
      return {
        async openSession(id: string): Promise<SessionRecorder> {
          const fd = openSync(join(dir, `${id}.jsonl`), 'a');
          fds.push(fd);
          const session = Session.create({ id, clock: benchClock() });
          const conversation = new Conversation();
          let events: SessionEvent[] = [];
          return {
            prepareTurn() {
              const first = session.seq;
              for (const append of conversation.appends(first)) appendTurnEvent(session, append);
              events = [];
              for (let seq = first; seq < session.seq; seq++) {
                events.push(session.event(seq) as SessionEvent);
              }
            },
            async appendTurn() {
              writeSync(fd, encodeBatch(id, events, session.seq, DEFAULT_MAX_LINE_BYTES));
            },
            async close() {
              closeSync(fd);
            },
          };
        },
        async bytes() {
          return directoryBytes(dir);
        },
        async close() {},
      };
    },
  };
}

/** The part of better-sqlite3 the floors call (it ships no types; the store types it the same way). */
interface RawStatement {
  run(...params: readonly unknown[]): unknown;
  raw(): {
    all(...params: readonly unknown[]): unknown[][];
    iterate(...params: readonly unknown[]): IterableIterator<unknown[]>;
  };
}

interface RawDatabase {
  prepare(sql: string): RawStatement;
  exec(sql: string): unknown;
  pragma(source: string): unknown;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): unknown;
}

type RawDriver = new (file: string, options?: { readonly readonly?: boolean }) => RawDatabase;

const SQLITE_MODULE: string = 'better-sqlite3';

async function rawSqlite(): Promise<RawDriver> {
  return ((await import(SQLITE_MODULE)) as { default: RawDriver }).default;
}

function sqliteFloor(name: string, synchronous: 'NORMAL' | 'FULL'): BenchSystem {
  return {
    name,
    role: 'floor',
    durability: synchronous === 'FULL' ? 'durable' : 'non-durable',
    recordsPerTurn: 204,
    ...(synchronous === 'FULL' ? { maxTurns: DURABLE_SQL_MAX_TURNS } : {}),
    async open(dir: string): Promise<SystemStore> {
      const Database = await rawSqlite();
      const db = new Database(join(dir, 'raw.db'));
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${synchronous}`);
      db.exec(`CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
        time INTEGER NOT NULL, data TEXT NOT NULL, source_event_seqs TEXT, surface_op TEXT,
        PRIMARY KEY (session, seq)) STRICT`);
      const insert = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)');
      return {
        async openSession(id: string): Promise<SessionRecorder> {
          const turns = new TurnEnvelopes();
          const write = db.transaction((events: readonly Envelope[]) => {
            for (const e of events) {
              insert.run(...columns(id, e));
            }
          });
          return {
            prepareTurn: () => turns.next(),
            async appendTurn() {
              write(turns.current);
            },
            async close() {},
          };
        },
        async bytes() {
          return directoryBytes(dir);
        },
        async close() {
          db.close();
        },
      };
    },
  };
}

const PG_COLUMNS = 7;

const pgFloor: BenchSystem = {
  name: 'floor: raw pg INSERT per turn',
  role: 'floor',
  durability: 'durable',
  recordsPerTurn: 204,
  maxTurns: DURABLE_SQL_MAX_TURNS,
  async open(dir: string): Promise<SystemStore> {
    const schema = schemaFor(dir);
    const pool = new pg.Pool({ connectionString: pgUrl(), max: 20 });
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(`CREATE TABLE ${schema}.events (session text NOT NULL, seq bigint NOT NULL,
      type text NOT NULL, time bigint NOT NULL, data text NOT NULL, source_event_seqs text,
      surface_op text, PRIMARY KEY (session, seq))`);
    return {
      async openSession(id: string): Promise<SessionRecorder> {
        const turns = new TurnEnvelopes();
        return {
          prepareTurn: () => turns.next(),
          async appendTurn() {
            const values: unknown[] = [];
            const rows: string[] = [];
            for (const e of turns.current) {
              const at = values.length;
              rows.push(
                `(${Array.from({ length: PG_COLUMNS }, (_, i) => `$${at + i + 1}`).join(',')})`,
              );
              values.push(...columns(id, e));
            }
            await pool.query(`INSERT INTO ${schema}.events VALUES ${rows.join(',')}`, values);
          },
          async close() {},
        };
      },
      bytes: () => schemaBytes(schema),
      close: () => pool.end(),
    };
  },
};

export const FLOOR_SYSTEMS: readonly BenchSystem[] = [
  fileFloor('floor: stringify + write per turn', false),
  fileFloor('floor: stringify + write + fdatasync per turn', true),
  encodingFloor('floor: palimpsest JSONL encoding + write per turn'),
  sqliteFloor('floor: raw better-sqlite3, NORMAL', 'NORMAL'),
  sqliteFloor('floor: raw better-sqlite3, FULL', 'FULL'),
  pgFloor,
];

const NEWLINE = 0x0a;

/** The JSONL file of a session in palimpsest's store directory (the only `.jsonl` there). */
function jsonlFile(dir: string): string {
  const name = readdirSync(dir).find((entry) => entry.endsWith('.jsonl'));
  if (name === undefined) throw new Error(`no .jsonl file in ${dir}`);
  return join(dir, name);
}

/** What a full replay of palimpsest's SQLite database reads before it splits, parses or checks. */
export const SQLITE_READ_FLOOR = 'floor: raw SELECT of every row + inflate every run';

export const FLOOR_RESUMES: readonly ResumeTarget[] = [
  {
    name: 'floor: read + JSON.parse every line',
    from: 'palimpsest JSONL',
    role: 'floor',
    async prepare(dir: string) {
      const file = jsonlFile(dir);
      return async () => {
        const buffer = readFileSync(file);
        const values: unknown[] = [];
        let from = 0;
        for (;;) {
          const end = buffer.indexOf(NEWLINE, from);
          if (end === -1) break;
          values.push(JSON.parse(buffer.toString('utf8', from, end)));
          from = end + 1;
        }
        return { messages: values.length, async close() {} };
      };
    },
  },
  {
    name: 'floor: raw SELECT of the non-chunk rows',
    from: 'palimpsest SQLite',
    role: 'floor',
    async prepare(dir: string) {
      const Database = await rawSqlite();
      return async () => {
        const db = new Database(join(dir, SQLITE_FILE), { readonly: true });
        // Code 0 is assistant/chunk (SEEDED_TYPES): what a fast path leaves out.
        const rows = db
          .prepare(
            'SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = 1 AND type <> 0 ORDER BY seq',
          )
          .raw()
          .all();
        let parsed = 0;
        for (const row of rows) parsed += JSON.parse(String(row[3])) === null ? 0 : 1;
        db.close();
        return { messages: parsed, async close() {} };
      };
    },
  },
  {
    name: SQLITE_READ_FLOOR,
    from: 'palimpsest SQLite',
    role: 'floor',
    async prepare(dir: string) {
      const Database = await rawSqlite();
      return async () => {
        const db = new Database(join(dir, SQLITE_FILE), { readonly: true });
        // The columns the store's full load reads, in the same two statements.
        const runs = db
          .prepare(
            'SELECT first_seq, count, time, times, sizes, data, crc FROM chunk_runs WHERE session_id = 1 ORDER BY first_seq',
          )
          .raw()
          .all();
        const values: unknown[] = [];
        const events = db
          .prepare(
            'SELECT seq, type, time, data, source_event_seqs, surface_op, crc FROM events WHERE session_id = 1 ORDER BY seq',
          )
          .raw()
          .iterate();
        for (const row of events) {
          values.push(JSON.parse(String(row[3])));
          if (row[4] !== null) values.push(JSON.parse(String(row[4])));
          if (row[5] !== null) values.push(JSON.parse(String(row[5])));
        }
        let chars = 0;
        for (const run of runs)
          chars += inflateRawSync(run[5] as Uint8Array).toString('utf8').length;
        db.close();
        return { messages: chars > 0 ? values.length : 0, async close() {} };
      };
    },
  },
];
