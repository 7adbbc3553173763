/**
 * The PostgreSQL store benchmark: batched appends through `palimpsest/postgres` beside raw `pg`
 * inserts of the same rows, durable per-turn latency, flatness over a 5,000-turn session, resume
 * of a 200k-event session beside a raw SELECT, and 1, 4 and 16 concurrent writers.
 *
 *   npm run bench:postgres
 *
 * Starts a throwaway PostgreSQL server (test/postgres/server.ts), or uses `PALIMPSEST_PG_URL`
 * (in schemas of its own, dropped afterwards). Prints the tables and rewrites the postgres
 * section of docs/benchmarks.md. Not a test: nothing here fails a build. The long session, the
 * resumes and the writers run in child processes (bench/postgres-child.ts).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
} from '../src/core/index.js';
import { openPostgresStore } from '../src/store/postgres/index.js';
import type { PostgresStore } from '../src/store/postgres/store.js';
import { type PostgresServer, startPostgres } from '../test/postgres/server.js';
import {
  collectGarbage,
  gcAvailable,
  median,
  pairedTimed,
  quantile,
  sink,
  spread,
} from './measure.js';
import type { FlatChildResult, ResumeChildResult, WriterChildResult } from './postgres-child.js';
import { createRawSchema, q, rawInsertTurn, rawSession } from './postgres-raw.js';
import {
  formatCount as count,
  type DetailTable,
  formatDuration,
  formatRatio,
  machineInfo,
  formatPercent as percent,
  progressReporter,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  verdict,
  writeSection,
} from './report.js';
import { BENCH_TIME0, CHUNKS_PER_TURN, EVENTS_PER_TURN, turnEvents } from './store-workload.js';

const startedNs = process.hrtime.bigint();
const here = dirname(fileURLToPath(import.meta.url));
const CHILD = resolve(here, 'postgres-child.ts');

/**
 * `PALIMPSEST_BENCH_QUICK=1`: a smoke run at a fraction of the sizes (a minute at most), which
 * prints its tables but leaves docs/benchmarks.md alone.
 */
const QUICK = process.env.PALIMPSEST_BENCH_QUICK === '1';
/** Figures 1 and 2: turns per round, measured rounds (after one warm-up round of each). */
const APPEND_TURNS = QUICK ? 30 : 300;
const APPEND_REPS = 5;
const APPEND_GOAL = 0.7;
/** Figure 3. */
const FLAT_TURNS = QUICK ? 200 : 5_000;
const WINDOW = 10;
const FLAT_GOAL = 1.2;
/** Figure 4: 981 turns are the first session of at least 200k events (200,124). */
const RESUME_TURNS = Math.ceil((QUICK ? 20_000 : 200_000) / EVENTS_PER_TURN);
const RESUME_REPS = 5;
const RESUME_GOAL = 1.5;
/** Figure 5. */
const WRITER_COUNTS = [1, 4, 16] as const;
const WRITER_TURNS = QUICK ? 10 : 100;
const WRITER_ROUNDS = QUICK ? 1 : 2;

const progress = progressReporter(startedNs);

function rowRate(perSecond: number): string {
  return `${(perSecond / 1_000).toFixed(1)} k rows/s`;
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
}

function header(id: string): SessionHeader {
  return { version: SESSION_FORMAT_VERSION, id, createdAt: BENCH_TIME0 };
}

// ---------------------------------------------------------------------------------------------
// 1 and 2: store.append of one turn per call vs BEGIN / multi-row INSERT / COMMIT through pg
// ---------------------------------------------------------------------------------------------

interface AppendResult {
  readonly ours: number[];
  readonly raw: number[];
  /** Per-turn latencies of the measured rounds, pooled. */
  readonly oursTurns: number[];
  readonly rawTurns: number[];
}

async function benchAppend(
  store: PostgresStore,
  raw: pg.Client,
  rawSchema: string,
  events: readonly SessionEvent[][],
): Promise<AppendResult> {
  let round = 0;
  let measuring = false;
  const oursTurns: number[] = [];
  const rawTurns: number[] = [];
  // Each round writes a fresh session, so both tables grow alike as the rounds alternate.
  const ours = async (): Promise<number> => {
    const id = `append-${round}`;
    await store.create(header(id));
    // A live session holds its lease (openSession takes it), so each append checks it as its own.
    const lock = await store.lock(id);
    let expectedSeq = 0;
    const start = process.hrtime.bigint();
    for (const turn of events) {
      const t = process.hrtime.bigint();
      await store.append(id, turn, { expectedSeq });
      if (measuring) oursTurns.push(Number(process.hrtime.bigint() - t));
      expectedSeq += turn.length;
    }
    const ns = Number(process.hrtime.bigint() - start);
    await lock.release();
    return ns;
  };
  const floor = async (): Promise<number> => {
    const key = await rawSession(raw, rawSchema, `append-${round++}`);
    const start = process.hrtime.bigint();
    for (const turn of events) {
      const t = process.hrtime.bigint();
      await rawInsertTurn(raw, rawSchema, key, turn);
      if (measuring) rawTurns.push(Number(process.hrtime.bigint() - t));
    }
    return Number(process.hrtime.bigint() - start);
  };
  await ours();
  await floor();
  measuring = true;
  const samples = await pairedTimed(APPEND_REPS, 0, ours, floor);
  return { ours: samples.ours, raw: samples.floor, oursTurns, rawTurns };
}

/** The bytes of a schema's `events` and `chunk_runs` (heap, TOAST, indexes). */
async function tableBytes(admin: pg.Client, schema: string): Promise<number> {
  const { rows } = await admin.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname IN ('events', 'chunk_runs') AND c.relkind = 'r'`,
    [schema],
  );
  return Number(rows[0]?.bytes ?? 0);
}

function formatBytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

// ---------------------------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------------------------

function childArgs(args: readonly string[]): string[] {
  return [...process.execArgv, CHILD, ...args];
}

function runChild<T>(args: readonly string[]): T {
  const result = spawnSync(process.execPath, childArgs(args), {
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) {
    throw new Error(`child ${args[0]} failed with status ${String(result.status)}`);
  }
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '') as T;
}

/** Lines a child prints, one promise per line in order. */
function lineReader(child: ChildProcess): () => Promise<string> {
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on('line', (line) => {
    const next = waiting.shift();
    if (next === undefined) queue.push(line);
    else next(line);
  });
  return () => {
    const line = queue.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => waiting.push(resolve));
  };
}

/**
 * `n` writer processes on sessions of their own. Each builds its events, opens its store, creates
 * and leases its session and connects before it says `ready`; only when all are ready does the
 * parent send the start line, so the spawn and setup of the processes are not timed. Aggregate
 * throughput = Σ rows / (last end − first start), both read in the children from the shared
 * monotonic clock.
 */
async function runWriters(
  url: string,
  schema: string,
  n: number,
  round: number,
): Promise<{ rows: number; ns: number; rate: number; turnNs: number[] }> {
  const children = Array.from({ length: n }, (_, i) => {
    const child = spawn(
      process.execPath,
      childArgs(['writer', url, schema, `w${n}-${round}-${i}`, String(WRITER_TURNS)]),
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { child, next: lineReader(child), exited };
  });
  for (const { next } of children) {
    const line = await next();
    if (line !== 'ready') throw new Error(`writer said ${line}`);
  }
  for (const { child } of children) child.stdin?.end('go\n');
  const results: WriterChildResult[] = [];
  for (const { next, exited } of children) {
    results.push(JSON.parse(await next()) as WriterChildResult);
    const status = await exited;
    if (status !== 0) throw new Error(`writer exited with ${String(status)}`);
  }
  const first = results.reduce(
    (min, r) => (BigInt(r.startNs) < min ? BigInt(r.startNs) : min),
    BigInt(results[0]?.startNs ?? 0),
  );
  const last = results.reduce((max, r) => (BigInt(r.endNs) > max ? BigInt(r.endNs) : max), 0n);
  const rows = results.reduce((sum, r) => sum + r.rows, 0);
  const ns = Number(last - first);
  return { rows, ns, rate: (rows / ns) * 1e9, turnNs: results.flatMap((r) => r.turnNs) };
}

// ---------------------------------------------------------------------------------------------
// Run and report
// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!gcAvailable) {
    progress(
      'warning: run with --expose-gc (npm run bench:postgres does) to collect between phases',
    );
  }
  const given = process.env.PALIMPSEST_PG_URL;
  let server: PostgresServer | undefined;
  let url: string;
  if (given !== undefined && given !== '') {
    url = given;
    progress(`using PALIMPSEST_PG_URL`);
  } else {
    progress('starting a throwaway PostgreSQL server');
    server = await startPostgres();
    url = server.url;
  }
  const tag = randomBytes(4).toString('hex');
  const schemas = {
    ours: `bench_${tag}_ours`,
    raw: `bench_${tag}_raw`,
    writers: `bench_${tag}_writers`,
    // Figure 4's session alone in a schema of each kind, so that the tables' sizes are its own.
    resume: `bench_${tag}_resume`,
    resumeRaw: `bench_${tag}_resume_raw`,
  };
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await run(url, admin, schemas, server !== undefined);
  } finally {
    for (const schema of Object.values(schemas)) {
      await admin.query(`DROP SCHEMA IF EXISTS ${q(schema)} CASCADE`).catch(() => {});
    }
    await admin.end();
    server?.stop();
  }
}

async function run(
  url: string,
  admin: pg.Client,
  schemas: { ours: string; raw: string; writers: string; resume: string; resumeRaw: string },
  throwaway: boolean,
): Promise<void> {
  const loadAtStart = loadAverage();
  const settings: Record<string, string> = {};
  for (const name of [
    'server_version',
    'fsync',
    'synchronous_commit',
    'wal_sync_method',
    'shared_buffers',
  ]) {
    const { rows } = await admin.query<Record<string, string>>(`SHOW ${name}`);
    settings[name] = Object.values(rows[0] ?? {})[0] ?? '?';
  }
  const summary: SummaryRow[] = [];
  const details: DetailTable[] = [];
  const all = turnEvents(RESUME_TURNS);
  const appendEvents = all.slice(0, APPEND_TURNS);
  const appendRows = APPEND_TURNS * EVENTS_PER_TURN;

  const store = await openPostgresStore({ connectionString: url, schema: schemas.ours });
  await createRawSchema(admin, schemas.raw);
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();

  // ---- 1, 2 ----
  progress(
    `1. append: ${APPEND_TURNS} turns (${count(appendRows)} rows) per round, ${APPEND_REPS} rounds, ours and raw alternating`,
  );
  const append = await benchAppend(store, raw, schemas.raw, appendEvents);
  const oursNs = median(append.ours);
  const rawNs = median(append.raw);
  const ratio1 = rawNs / oursNs;
  summary.push({
    id: '1',
    what: `batched appends: \`store.append\` of one ${EVENTS_PER_TURN}-event turn per call (lease held) vs raw \`BEGIN\` / one ${EVENTS_PER_TURN}-row INSERT / \`COMMIT\` of the same rows through \`pg\`, same DDL`,
    ours: rowRate((appendRows / oursNs) * 1e9),
    floor: rowRate((appendRows / rawNs) * 1e9),
    ratio: formatRatio(ratio1),
    goal: `≥ ${APPEND_GOAL}× raw rows/s`,
    verdict: verdict(ratio1 >= APPEND_GOAL),
  });
  const p = (values: readonly number[], at: number): number => quantile(values, at);
  summary.push({
    id: '2',
    what: `durable per-turn append latency p50 / p99 (synchronous_commit=${settings.synchronous_commit}), the turns of figure 1's measured rounds`,
    ours: `${formatDuration(p(append.oursTurns, 0.5))} / ${formatDuration(p(append.oursTurns, 0.99))}`,
    floor: `${formatDuration(p(append.rawTurns, 0.5))} / ${formatDuration(p(append.rawTurns, 0.99))}`,
    ratio: `${formatRatio(p(append.oursTurns, 0.5) / p(append.rawTurns, 0.5))} / ${formatRatio(p(append.oursTurns, 0.99) / p(append.rawTurns, 0.99))}`,
    goal: 'report',
    verdict: 'info',
  });
  await raw.end();
  collectGarbage();

  // ---- 4 (built here, while the parent holds the events) ----
  progress(
    `4. building the resume session: ${count(RESUME_TURNS)} turns (${count(RESUME_TURNS * EVENTS_PER_TURN)} events), store.append per turn`,
  );
  await store.close();
  const resumeStore = await openPostgresStore({ connectionString: url, schema: schemas.resume });
  await resumeStore.create(header('resume'));
  let expectedSeq = 0;
  for (const turn of all) {
    await resumeStore.append('resume', turn, { expectedSeq });
    expectedSeq += turn.length;
  }
  await resumeStore.close();
  // The floors read the same events as raw rows, one per event, as figure 1's floor inserts
  // them: the store's own tables hold finished chunks as runs, which no raw SELECT of rows reads.
  progress(`4. building the raw floor's copy of the session: one raw INSERT transaction per turn`);
  await createRawSchema(admin, schemas.resumeRaw);
  const rawKey = await rawSession(admin, schemas.resumeRaw, 'resume');
  for (const turn of all) await rawInsertTurn(admin, schemas.resumeRaw, rawKey, turn);
  // Fresh rows carry no hint bits or statistics yet; the first reader would pay for setting them.
  for (const table of ['events', 'chunk_runs']) {
    await admin.query(`VACUUM (ANALYZE) ${q(schemas.resume)}.${table}`);
  }
  await admin.query(`VACUUM (ANALYZE) ${q(schemas.resumeRaw)}.events`);
  const bytes = {
    ours: await tableBytes(admin, schemas.resume),
    raw: await tableBytes(admin, schemas.resumeRaw),
  };
  const resume: Record<
    'fast' | 'full' | 'raw-surface' | 'raw-envelope' | 'raw-all',
    ResumeChildResult[]
  > = {
    fast: [],
    full: [],
    'raw-surface': [],
    'raw-envelope': [],
    'raw-all': [],
  };
  for (let rep = 0; rep < RESUME_REPS; rep++) {
    progress(
      `4. resume rep ${rep + 1}/${RESUME_REPS}: fast path, raw surface rows, raw envelopes, full load, raw all rows (fresh processes)`,
    );
    for (const kind of ['fast', 'raw-surface', 'raw-envelope', 'full', 'raw-all'] as const) {
      const schema = kind === 'fast' || kind === 'full' ? schemas.resume : schemas.resumeRaw;
      resume[kind].push(runChild<ResumeChildResult>(['resume', kind, url, schema, 'resume']));
    }
  }
  const resumeEvents = RESUME_TURNS * EVENTS_PER_TURN;
  for (const sample of [...resume.fast, ...resume.full]) {
    if (sample.events !== resumeEvents)
      throw new Error(`resume loaded ${sample.events} events, expected ${resumeEvents}`);
  }
  const ns = (kind: keyof typeof resume): number => median(resume[kind].map((s) => s.ns));
  const part = (kind: keyof typeof resume, name: string): number =>
    median(resume[kind].map((s) => s.parts[name] ?? 0));
  const ratio4 = ns('fast') / ns('raw-surface');
  const surfaceRows = resume['raw-surface'][0]?.events ?? 0;
  summary.push({
    id: '4a',
    what: `fast resume of a ${count(resumeEvents)}-event session: \`store.load(id, {elideFinishedChunks: true})\` + \`Session.create({seed, seedMode:'parsed'})\` vs one raw SELECT of the ${count(surfaceRows)} non-chunk rows + JSON.parse of their columns (fresh process each)`,
    ours: formatDuration(ns('fast')),
    floor: formatDuration(ns('raw-surface')),
    ratio: formatRatio(ratio4),
    goal: `≤ ${RESUME_GOAL}× floor time`,
    verdict: verdict(ratio4 <= RESUME_GOAL),
  });
  const ratio4e = ns('fast') / ns('raw-envelope');
  summary.push({
    id: '4a′',
    what: `the same fast resume vs the envelope floor: the raw SELECT of 4a plus a raw SELECT of the seq and time of every chunk row (a resume that keeps every event's envelope, as a session does, reads at least that)`,
    ours: formatDuration(ns('fast')),
    floor: formatDuration(ns('raw-envelope')),
    ratio: formatRatio(ratio4e),
    goal: 'report',
    verdict: 'info',
  });
  const withConnect = (kind: keyof typeof resume): number =>
    median(resume[kind].map((s) => s.ns + (s.parts.connect ?? 0)));
  summary.push({
    id: '4a″',
    what: `the same fast resume with the connection counted: opening the store (pool connected, schema checked) + 4a vs connecting the raw client and finding the session's key + the floor of 4a`,
    ours: formatDuration(withConnect('fast')),
    floor: formatDuration(withConnect('raw-surface')),
    ratio: formatRatio(withConnect('fast') / withConnect('raw-surface')),
    goal: 'report',
    verdict: 'info',
  });
  summary.push({
    id: '4b',
    what: 'full resume of the same session: `store.load(id)` + `Session.create` vs one raw SELECT of every row + JSON.parse of their columns',
    ours: formatDuration(ns('full')),
    floor: formatDuration(ns('raw-all')),
    ratio: formatRatio(ns('full') / ns('raw-all')),
    goal: 'report',
    verdict: 'info',
  });

  summary.push({
    id: '4c',
    what: `the session's bytes in the server (\`pg_total_relation_size\` of \`events\` and \`chunk_runs\`: heap, TOAST and indexes, after VACUUM) vs the same events as raw rows`,
    ours: formatBytes(bytes.ours),
    floor: formatBytes(bytes.raw),
    ratio: formatRatio(bytes.ours / bytes.raw),
    goal: 'report',
    verdict: 'info',
  });

  // ---- 3 ----
  progress(
    `3. one live session of ${count(FLAT_TURNS)} turns (${count(FLAT_TURNS * EVENTS_PER_TURN)} events), 204 appends + flush() per turn, in a child`,
  );
  const flat = runChild<FlatChildResult>([
    'flat',
    url,
    schemas.ours,
    String(FLAT_TURNS),
    String(WINDOW),
  ]);
  const windowMedian = (firstTurn: number, size = WINDOW): number =>
    median(flat.turnNs.slice(firstTurn - 1, firstTurn - 1 + size));
  const lastWindow = FLAT_TURNS - WINDOW + 1;
  const first = windowMedian(1);
  const last = windowMedian(lastWindow);
  const ratio3 = last / first;
  summary.push({
    id: '3',
    what: `per-turn cost (${EVENTS_PER_TURN} \`LiveSession\` appends + \`await flush()\`), turns ${count(lastWindow)}–${count(FLAT_TURNS)} vs turns 1–${WINDOW} of one session (window medians)`,
    ours: `${formatDuration(last)}/turn`,
    floor: `${formatDuration(first)}/turn (turns 1–${WINDOW})`,
    ratio: formatRatio(ratio3),
    goal: `≤ ${FLAT_GOAL}× (flat)`,
    verdict: verdict(ratio3 <= FLAT_GOAL),
  });

  // ---- 5 ----
  const store5 = await openPostgresStore({ connectionString: url, schema: schemas.writers });
  await store5.close();
  type WriterRound = Awaited<ReturnType<typeof runWriters>>;
  const writers = new Map<number, WriterRound[]>(WRITER_COUNTS.map((n) => [n, []]));
  for (let round = 0; round < WRITER_ROUNDS; round++) {
    for (const n of WRITER_COUNTS) {
      progress(
        `5. ${n} concurrent writer process${n === 1 ? '' : 'es'}, ${WRITER_TURNS} turns each, round ${round + 1}/${WRITER_ROUNDS}`,
      );
      writers.get(n)?.push(await runWriters(url, schemas.writers, n, round));
    }
  }
  const rate5 = (n: number): number => median((writers.get(n) ?? []).map((r) => r.rate));
  const single = rate5(1);
  for (const n of WRITER_COUNTS.slice(1)) {
    summary.push({
      id: n === 4 ? '5a' : '5b',
      what: `aggregate throughput of ${n} writer processes (\`store.append\` per turn, each on its own session) vs 1 writer`,
      ours: rowRate(rate5(n)),
      floor: `${rowRate(single)} (1 writer)`,
      ratio: formatRatio(rate5(n) / single),
      goal: 'report (scaling)',
      verdict: 'info',
    });
  }
  const loadAtEnd = loadAverage();

  // ---- details ----
  details.push({
    title: 'Appends and durable latency (figures 1 and 2)',
    intro: `${APPEND_REPS} measured rounds of ${count(APPEND_TURNS)} turns each (after one warm-up round of each), ours and raw alternating, a full GC before each; every round writes a session of its own. Spread = (max − min) / median.`,
    header: ['path', 'median round', 'spread', 'rows/s', 'per turn p50', 'p90', 'p99', 'max'],
    rows: [
      ['ours: store.append', append.ours, append.oursTurns] as const,
      ['raw: BEGIN / INSERT / COMMIT', append.raw, append.rawTurns] as const,
    ].map(([name, rounds, turns]) => [
      name,
      formatDuration(median(rounds)),
      percent(spread(rounds)),
      rowRate((appendRows / median(rounds)) * 1e9),
      formatDuration(p(turns, 0.5)),
      formatDuration(p(turns, 0.9)),
      formatDuration(p(turns, 0.99)),
      formatDuration(Math.max(...turns)),
    ]),
  });
  const windows = [1, 11, 101, 1_001, 2_491, 4_001, lastWindow].filter(
    (from) => from <= lastWindow,
  );
  details.push({
    title: `Per-turn cost over one ${count(FLAT_TURNS)}-turn session (figure 3)`,
    intro: `One run in a child process, after a ${50}-turn warm-up session in the same store. Each turn is timed from its first append until \`await session.flush()\` resolves (one durable batch of ${EVENTS_PER_TURN} events). Median per window of ${WINDOW} turns (and of 100). The young session ran its first ${WINDOW} turns interleaved with the last ${WINDOW} turns of the long one, so both ends are also measured side by side.`,
    header: ['turns', 'median per turn', 'vs turns 1–10'],
    rows: [
      ...windows.map((from) => [
        `${count(from)}–${count(from + WINDOW - 1)}`,
        formatDuration(windowMedian(from)),
        formatRatio(windowMedian(from) / first),
      ]),
      ...[1, FLAT_TURNS - 99].map((from) => [
        `${count(from)}–${count(from + 99)}`,
        formatDuration(windowMedian(from, 100)),
        formatRatio(windowMedian(from, 100) / first),
      ]),
      (() => {
        const young = median(flat.youngTurnNs);
        return [
          `young session, turns 1–${WINDOW}, interleaved with turns ${count(lastWindow)}–${count(FLAT_TURNS)}`,
          formatDuration(young),
          `last / young: ${formatRatio(last / young)}`,
        ];
      })(),
    ],
  });
  details.push({
    title: `Resume of a ${count(resumeEvents)}-event session (figure 4)`,
    intro: `The session: ${count(RESUME_TURNS)} turns appended one per \`store.append\` (its finished chunks in runs), and the same events inserted raw into the floors' tables, one row each, then \`VACUUM (ANALYZE)\`. Each sample is a fresh process; the clock starts once its connection is up (the store opened read-only, or the raw client connected) and stops when the session (or the floor's array of parsed rows) exists. Median of ${RESUME_REPS}, the five paths taking turns.`,
    header: ['path', 'median', 'samples', 'parts (median)', 'events / rows', 'peak RSS'],
    rows: (
      [
        ['ours, fast: load (elided) + Session.create', 'fast', ['load', 'seed']],
        ['raw: SELECT non-chunk rows + parse', 'raw-surface', ['query', 'parse']],
        [
          'raw: SELECT non-chunk rows + SELECT seq, time of the chunks + parse',
          'raw-envelope',
          ['query', 'parse'],
        ],
        ['ours, full: load + Session.create', 'full', ['load', 'seed']],
        ['raw: SELECT every row + parse', 'raw-all', ['query', 'parse']],
      ] as const
    ).map(([name, kind, parts]) => [
      name,
      formatDuration(ns(kind)),
      resume[kind].map((s) => formatDuration(s.ns)).join(', '),
      parts.map((name) => `${name} ${formatDuration(part(kind, name))}`).join(' + '),
      `${count(resume[kind][0]?.events ?? 0)}${kind === 'fast' ? ` (${count(resume.fast[0]?.elided ?? 0)} stubs)` : ''}`,
      `${(median(resume[kind].map((s) => s.maxRss)) / 2 ** 20).toFixed(0)} MiB`,
    ]),
  });
  details.push({
    title: 'Concurrent writers (figure 5)',
    intro: `Each writer is a process of its own with its own pool and session, appending ${WRITER_TURNS} turns (${count(WRITER_TURNS * EVENTS_PER_TURN)} rows) with \`store.append\`, its lease held; all start on one signal once every one is set up. Aggregate = Σ rows / (last end − first start). ${WRITER_ROUNDS} rounds of 1, 4, 16; median of the rounds. The machine has ${os.cpus().length} cores, shared by the server, the writers and anything else running.`,
    header: [
      'writers',
      'aggregate rows/s (rounds)',
      'vs 1 writer',
      'per writer',
      'per turn p50 / p99',
    ],
    rows: WRITER_COUNTS.map((n) => {
      const list = writers.get(n) ?? [];
      const turns = list.flatMap((r) => r.turnNs);
      return [
        String(n),
        `${rowRate(rate5(n))} (${list.map((r) => rowRate(r.rate)).join(', ')})`,
        formatRatio(rate5(n) / single),
        rowRate(rate5(n) / n),
        `${formatDuration(p(turns, 0.5))} / ${formatDuration(p(turns, 0.99))}`,
      ];
    }),
  });

  const durationSeconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
  const report: Report = {
    section: 'postgres',
    intro: [
      'The PostgreSQL store (`palimpsest/postgres`, `pg` 8.x) on the streamed workload of the store',
      `benchmark: turns of a user message, ${CHUNKS_PER_TURN} \`assistant/chunk\` events, the assistant message, a`,
      "tool call and its result. Floors are raw `pg` statements on tables made by the store's own",
      'DDL (`schemaDdl`), measured in the same run against the same server.',
      '',
      `Server: PostgreSQL ${settings.server_version} on loopback TCP (${throwaway ? 'a throwaway cluster started by the script' : '`PALIMPSEST_PG_URL`'}), fsync=${settings.fsync}, synchronous_commit=${settings.synchronous_commit}, wal_sync_method=${settings.wal_sync_method}, shared_buffers=${settings.shared_buffers}. Load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAtEnd}.`,
    ],
    runtime: `about ${Math.max(1, Math.round(durationSeconds / 60))}–${Math.round(durationSeconds / 60) + 1} minutes`,
    reproduce: [
      'The script runs node with `--expose-gc` and an 8 GiB heap; children start with the same',
      'flags. Without `PALIMPSEST_PG_URL` it needs the PostgreSQL binaries (`initdb`, `pg_ctl`) and',
      'starts a server on a free loopback port (as the `postgres` user when run as root); with it,',
      'it works in schemas `bench_<random>_*` and drops them afterwards.',
      'The server, the benchmark and its children share the machine: compare the ratios.',
    ],
    machine: machineInfo(),
    summary: summary.sort((a, b) => a.id.localeCompare(b.id)),
    details,
    method: [
      'Every figure and its floor run in the same run against the same server; in-process pairs alternate (ours, raw, ours, …) with a full GC before each round.',
      `Figure 1 builds the events beforehand with a core \`Session\` (\`turnEvents\`), so both sides insert identical rows; both encode the JSON columns (JSON.stringify) inside the timed part. What the store adds per turn: the batch check, \`SELECT … FOR UPDATE\` of the session row and the \`expectedSeq\` check, the lease row \`FOR SHARE\`, the \`next_seq\` update and \`pg_notify\`, and since PostgreSQL schema 2 the turn's finished chunks encoded (varints, raw DEFLATE, CRC-32) into one row of \`chunk_runs\` instead of 200 rows of \`events\`: 8 statements against the floor's 3, and 5 rows against its 204.`,
      "Figure 3 runs the whole stack (`openSession`, the recorder's batching, `flush()` as the durability barrier) on one session to a million events.",
      `Figure 4's floors read the same events stored raw, one row each, in tables made by the store's DDL (the store's own tables keep finished chunks as runs, which a raw SELECT of rows does not read). The raw floor selects \`type <> 'assistant/chunk'\`: in a finished session those are all the rows the surface needs. The store's fast load selects every row of \`events\` (since PostgreSQL schema 2 the finished chunks are not among them: the rows the surface needs plus the few chunks no message finished) and every row of \`chunk_runs\` without its compressed data (seq range, first time, varint times and sizes, checked by the envelope checksum of PostgreSQL schema 3), because the session keeps a stub at every seq. Figure 4a′'s envelope floor adds what any resume that keeps every event's seq and time reads at least from rows: a raw SELECT of the chunks' seq and time.`,
      'Timing uses `process.hrtime.bigint()`. Source: `bench/postgres.ts`, `bench/postgres-child.ts`, `bench/postgres-raw.ts`, `bench/store-workload.ts`, `bench/measure.ts`, `bench/report.ts`.',
    ],
    notes: [
      `Other work was running on this 2-core machine during the run (load average above), and the server shares the cores with the benchmark: absolute figures are noisy, the paired ratios less so.`,
      `Figure 3: a window of ${WINDOW} turns is short enough for a burst of other work (or the server's autovacuum after figure 4's build) to move it; the young session's turns, run right beside the last ones, are the side-by-side check that the last turns cost what a new session's do.`,
      `Figure 4a: the floor reads ${percent(surfaceRows / resumeEvents)} of the rows and builds nothing else; a resume keeps every event's seq, so the store also reads the envelopes of the session's chunk runs (one per turn here; since schema 3 without their compressed data, which schema 2 read for the CRC) and the session holds the chunks as holes of its log with their times and sizes (one stub object is built only when an event is read). Before PostgreSQL schema 2 the fast load read the chunks' metadata as one server-built aggregate of 20 bytes per chunk row (\`string_agg\` over the chunk rows); since, it reads one run per message instead, without an object per chunk on the wire.`,
      `Figure 5: one writer already keeps about a core busy (its encoding and \`pg\`'s, plus the server's backend), so on ${os.cpus().length} cores more writers mostly share the same CPU; the ratio says how the store behaves on a saturated small machine, not what a server with more cores would take.`,
    ],
    durationSeconds,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  if (QUICK) {
    progress(`quick run: docs/benchmarks.md left as it is (sink ${sink()})`);
    return;
  }
  const target = resolve(here, '../docs/benchmarks.md');
  writeSection(target, 'postgres', renderMarkdown(report));
  progress(`wrote the postgres section of ${target} (sink ${sink()})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
