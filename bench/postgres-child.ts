/**
 * The PostgreSQL benchmark's child processes (bench/postgres.ts starts them): measurements that
 * need a process of their own (a cold resume, a clean heap for the long session, concurrent
 * writers) run here and print one JSON line on stdout.
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx bench/postgres-child.ts <mode> ...
 *
 * Modes:
 *   flat <url> <schema> <turns> <interleave>   one live session, 204 appends + flush() per turn
 *   resume <fast|full|raw-surface|raw-envelope|raw-all> <url> <schema> <id>
 *                                              a resume of session <id>, or its raw floor
 *   writer <url> <schema> <id> <turns>         store.append per turn on its own session, once
 *                                              the parent writes a line to stdin
 */
import { createInterface } from 'node:readline';
import pg from 'pg';
import { SESSION_FORMAT_VERSION, Session } from '../src/core/index.js';
import { type LiveSession, openSession } from '../src/store/index.js';
import { openPostgresStore } from '../src/store/postgres/index.js';
import { consume } from './measure.js';
import { q } from './postgres-raw.js';
import {
  appendTurnEvent,
  BENCH_TIME0,
  benchClock,
  TurnSource,
  turnEvents,
} from './store-workload.js';

/** Turns of a throwaway session before the measured one, so that its first turns run warm code. */
const WARMUP_TURNS = 50;
/** Untimed turns of a writer before its start signal. */
const WRITER_WARMUP_TURNS = 10;

/** What a `flat` child reports. */
export interface FlatChildResult {
  /** Per-turn wall time (204 appends + `await flush()`), ns, in turn order. */
  readonly turnNs: number[];
  /** The first turns of a young session, each run right before one of the last turns. */
  readonly youngTurnNs: number[];
  readonly events: number;
  readonly maxRss: number;
}

/** What a `resume` child reports. */
export interface ResumeChildResult {
  readonly ns: number;
  readonly parts: Record<string, number>;
  /** Events of the resumed session, or rows the floor read. */
  readonly events: number;
  readonly elided: number;
  readonly maxRss: number;
}

/** What a `writer` child reports; times are `process.hrtime` (CLOCK_MONOTONIC, shared by all processes). */
export interface WriterChildResult {
  readonly startNs: string;
  readonly endNs: string;
  readonly rows: number;
  readonly turnNs: number[];
}

function nowNs(): bigint {
  return process.hrtime.bigint();
}

function maxRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

async function timeTurn(session: LiveSession, source: TurnSource, turn: number): Promise<number> {
  const appends = source.turn(turn, session.seq);
  const start = nowNs();
  for (const append of appends) appendTurnEvent(session, append);
  await session.flush();
  return Number(nowNs() - start);
}

async function flat(
  url: string,
  schema: string,
  turns: number,
  interleave: number,
): Promise<FlatChildResult> {
  const store = await openPostgresStore({ connectionString: url, schema });
  const warm = await openSession(store, 'warmup', { clock: benchClock() });
  const warmSource = new TurnSource();
  for (let turn = 0; turn < WARMUP_TURNS; turn++) await timeTurn(warm, warmSource, turn);
  await warm.close();

  const session = await openSession(store, 'flat', { clock: benchClock() });
  const source = new TurnSource();
  const turnNs: number[] = [];
  const youngTurnNs: number[] = [];
  const youngSource = new TurnSource();
  let young: LiveSession | undefined;
  for (let turn = 0; turn < turns; turn++) {
    // A young session's first turns beside the long one's last: both ends of the comparison
    // then run under the same load from other tenants of the machine.
    if (turn === turns - interleave)
      young = await openSession(store, 'young', { clock: benchClock() });
    if (young !== undefined)
      youngTurnNs.push(await timeTurn(young, youngSource, youngTurnNs.length));
    turnNs.push(await timeTurn(session, source, turn));
  }
  const maxRss = maxRssBytes();
  const events = session.seq;
  await young?.close();
  await session.close();
  await store.close();
  return { turnNs, youngTurnNs, events, maxRss };
}

/** Ours: `store.load` (elided or full) + `Session.create({seedMode: 'parsed'})`, after the pool connected. */
async function resumeOurs(
  url: string,
  schema: string,
  id: string,
  elide: boolean,
): Promise<ResumeChildResult> {
  // Opening connects the pool and checks the schema; a worker resuming a session has done that,
  // so the figure starts after it. `parts.connect` says what a process starting cold pays first.
  const connectAt = nowNs();
  const store = await openPostgresStore({ connectionString: url, schema, readOnly: true });
  const start = nowNs();
  const loaded = await store.load(id, { elideFinishedChunks: elide });
  const loadedAt = nowNs();
  const session = Session.create({
    header: loaded.header,
    seed: loaded.log ?? loaded.events,
    seedMode: 'parsed',
  });
  const end = nowNs();
  const maxRss = maxRssBytes();
  await store.close();
  return {
    ns: Number(end - start),
    parts: {
      connect: Number(start - connectAt),
      load: Number(loadedAt - start),
      seed: Number(end - loadedAt),
    },
    events: session.seq,
    elided: session.elidedChunkCount,
    maxRss,
  };
}

interface RawRow {
  readonly seq: string;
  readonly type: string;
  readonly time: string;
  readonly data: string;
  readonly source_event_seqs: string | null;
  readonly surface_op: string | null;
}

/**
 * The floor: one connected client, one SELECT of the session's rows (only the non-chunk ones for
 * `surface`: in a finished session no open stream's chunks remain), each row's JSON columns
 * parsed into a plain event. No snapshot transaction, no session row, no checks, no Session.
 */
/** A raw client connected to the server, and the key of session `id`. */
async function rawSession(
  url: string,
  schema: string,
  id: string,
): Promise<{ client: pg.Client; key: string }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ key: string }>(
    `SELECT key FROM ${q(schema)}.sessions WHERE id = $1`,
    [id],
  );
  return { client, key: (rows[0] as { key: string }).key };
}

/** A row as the floors parse it: its JSON columns parsed into a plain event, nothing checked. */
function parseRawRow(row: RawRow) {
  return {
    seq: Number(row.seq),
    time: Number(row.time),
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    sources:
      row.source_event_seqs === null ? undefined : (JSON.parse(row.source_event_seqs) as unknown),
    surfaceOp: row.surface_op === null ? undefined : (JSON.parse(row.surface_op) as unknown),
  };
}

/**
 * The envelope floor: the raw surface SELECT of `resumeRaw`, plus the seq and time of every
 * chunk row (a row per chunk, as `pg` gives them): what a resume that keeps every event's
 * envelope, as a palimpsest session does, reads at the least.
 */
async function resumeRawEnvelope(
  url: string,
  schema: string,
  id: string,
): Promise<ResumeChildResult> {
  const { client, key } = await rawSession(url, schema, id);
  const start = nowNs();
  const { rows } = await client.query<RawRow>(
    `SELECT seq, type, time, data, source_event_seqs, surface_op FROM ${q(schema)}.events WHERE session_key = $1 AND type <> 'assistant/chunk' ORDER BY seq`,
    [key],
  );
  const { rows: chunks } = await client.query<{ seq: string; time: string }>(
    `SELECT seq, time FROM ${q(schema)}.events WHERE session_key = $1 AND type = 'assistant/chunk' ORDER BY seq`,
    [key],
  );
  const queriedAt = nowNs();
  const events = rows.map(parseRawRow);
  const envelopes = chunks.map((row) => ({ seq: Number(row.seq), time: Number(row.time) }));
  const end = nowNs();
  consume(events.length + envelopes.length);
  const maxRss = maxRssBytes();
  await client.end();
  return {
    ns: Number(end - start),
    parts: { query: Number(queriedAt - start), parse: Number(end - queriedAt) },
    events: events.length + envelopes.length,
    elided: 0,
    maxRss,
  };
}

async function resumeRaw(
  url: string,
  schema: string,
  id: string,
  surface: boolean,
): Promise<ResumeChildResult> {
  const connectAt = nowNs();
  const { client, key } = await rawSession(url, schema, id);
  const start = nowNs();
  const { rows } = await client.query<RawRow>(
    `SELECT seq, type, time, data, source_event_seqs, surface_op FROM ${q(schema)}.events WHERE session_key = $1${surface ? " AND type <> 'assistant/chunk'" : ''} ORDER BY seq`,
    [key],
  );
  const queriedAt = nowNs();
  const events = rows.map(parseRawRow);
  const end = nowNs();
  consume(events.length);
  const maxRss = maxRssBytes();
  await client.end();
  return {
    ns: Number(end - start),
    parts: {
      connect: Number(start - connectAt),
      query: Number(queriedAt - start),
      parse: Number(end - queriedAt),
    },
    events: events.length,
    elided: 0,
    maxRss,
  };
}

/** Prepares everything (events, pool, session, lease), says `ready`, then appends on the start line. */
async function writer(
  url: string,
  schema: string,
  id: string,
  turns: number,
): Promise<WriterChildResult> {
  const events = turnEvents(turns);
  const store = await openPostgresStore({ connectionString: url, schema, maxConnections: 2 });
  await store.create({ version: SESSION_FORMAT_VERSION, id, createdAt: BENCH_TIME0 });
  // A few untimed turns on a session of its own, so the timed ones run warm code over a
  // connection that is already up, as a long-running worker's do.
  const warmId = `${id}-warmup`;
  await store.create({ version: SESSION_FORMAT_VERSION, id: warmId, createdAt: BENCH_TIME0 });
  let warmSeq = 0;
  for (const turn of events.slice(0, WRITER_WARMUP_TURNS)) {
    await store.append(warmId, turn, { expectedSeq: warmSeq });
    warmSeq += turn.length;
  }
  const lock = await store.lock(id);
  const lines = createInterface({ input: process.stdin });
  const started = new Promise<void>((resolve) => lines.once('line', () => resolve()));
  process.stdout.write('ready\n');
  await started;
  lines.close();
  const turnNs: number[] = [];
  const startNs = nowNs();
  let expectedSeq = 0;
  for (const turn of events) {
    const t = nowNs();
    await store.append(id, turn, { expectedSeq });
    turnNs.push(Number(nowNs() - t));
    expectedSeq += turn.length;
  }
  const endNs = nowNs();
  await lock.release();
  await store.close();
  return { startNs: String(startNs), endNs: String(endNs), rows: expectedSeq, turnNs };
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  const arg = (i: number): string => {
    const value = args[i];
    if (value === undefined) throw new Error(`mode ${String(mode)} needs argument ${i + 1}`);
    return value;
  };
  let result: object;
  if (mode === 'flat') {
    result = await flat(arg(0), arg(1), Number(arg(2)), Number(arg(3)));
  } else if (mode === 'resume') {
    const kind = arg(0);
    if (kind === 'fast' || kind === 'full') {
      result = await resumeOurs(arg(1), arg(2), arg(3), kind === 'fast');
    } else if (kind === 'raw-surface' || kind === 'raw-all') {
      result = await resumeRaw(arg(1), arg(2), arg(3), kind === 'raw-surface');
    } else if (kind === 'raw-envelope') {
      result = await resumeRawEnvelope(arg(1), arg(2), arg(3));
    } else {
      throw new Error(`unknown resume kind ${kind}`);
    }
  } else if (mode === 'writer') {
    result = await writer(arg(0), arg(1), arg(2), Number(arg(3)));
  } else {
    throw new Error(`unknown mode ${String(mode)}`);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
