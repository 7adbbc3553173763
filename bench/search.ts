/**
 * The search benchmark (issue 38 §2): `searchSessions` over a JSONL store of many sessions
 * (default 10,000, about 1 GB of logs) against a direct FTS5 query on the same index, the
 * index's build against reading the logs, and the index's size against the logs'; then the same
 * sessions in a PostgreSQL store on a throwaway server (its `tsvector` index against a direct
 * `tsquery` on it), when the machine has the PostgreSQL binaries.
 *
 *   npm run bench:search                      # 10,000 sessions
 *   npm run bench:search -- --sessions=2000   # a smaller store
 *   npm run bench:search -- --pg-sessions=10000   # PostgreSQL on as many sessions (default 2,000)
 *
 * Prints the table and rewrites the search section of docs/benchmarks.md (not with --smoke).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Session } from '../src/core/index.js';
import { rebuildSearchIndex, searchSessions } from '../src/store/index.js';
import { openJsonlStore } from '../src/store/jsonl/index.js';
import { SEARCH_INDEX_FILE } from '../src/store/jsonl/paths.js';
import { openPostgresStore } from '../src/store/postgres/index.js';
import { tsqueryOf } from '../src/store/postgres/search-index.js';
import { parseSearchQuery } from '../src/store/search/query.js';
import { everySession } from '../src/store/session/list-all.js';
import { loadDriver } from '../src/store/sqlite/schema.js';
import { fts5Match } from '../src/store/sqlite/search-index.js';
import { postgresBinaries, startPostgres } from '../test/postgres/server.js';
import { progressLog } from './agent-workload.js';
import { quantile } from './measure.js';
import {
  formatBytes,
  formatDuration,
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  writeSection,
} from './report.js';

const startedNs = process.hrtime.bigint();
const log = progressLog();
const smoke = process.argv.includes('--smoke');
const sessionsArg = process.argv.find((arg) => arg.startsWith('--sessions='));
const SESSIONS = sessionsArg === undefined ? (smoke ? 200 : 10_000) : Number(sessionsArg.slice(11));
/**
 * Sessions of the PostgreSQL phase: a few in the smoke run (which checks that it runs), at most
 * 2,000 otherwise (`--pg-sessions=N` for more), so that a full run stays within half an hour.
 */
const pgSessionsArg = process.argv.find((arg) => arg.startsWith('--pg-sessions='));
const PG_SESSIONS = smoke
  ? 50
  : pgSessionsArg === undefined
    ? Math.min(SESSIONS, 2000)
    : Number(pgSessionsArg.slice(14));
const TURNS = 5;
const ROUNDS = smoke ? 3 : 20;
/** A default search lists every log first: a few rounds of it say enough. */
const CATCH_UP_ROUNDS = 2;

/** A deterministic generator, so every run searches the same text. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** 5,000 made-up words, drawn with a Zipf-like skew, as a real vocabulary is. */
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => `w${(i * 7919).toString(36)}`);
function words(next: () => number, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(VOCABULARY[Math.floor(VOCABULARY.length * next() ** 3)] as string);
  }
  return out.join(' ');
}

/** One session: five turns of a question, an answer with a tool call, and the tool's output. */
function sessionEvents(index: number): Session {
  const next = random(index + 1);
  let now = 1_700_000_000_000 + index * 60_000;
  const session = Session.create({ id: `s${index}`, clock: () => now++ });
  session.append('request/header', {
    provider: 'bench',
    model: index % 2 === 0 ? 'model-a' : 'model-b',
  });
  for (let turn = 1; turn <= TURNS; turn++) {
    session.append('turn/start', { turn });
    const marker = index % 100 === 0 && turn === 1 ? ' rarewordmarker' : '';
    session.append(
      'user/message',
      {
        id: `u${turn}`,
        role: 'user',
        content: [{ type: 'text', text: `${words(next, 30)}${marker}` }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    session.append(
      'assistant/message',
      {
        turn,
        step: 1,
        finishReason: 'tool-calls',
        message: {
          id: `a${turn}`,
          role: 'assistant',
          content: [
            { type: 'text', text: words(next, 300) },
            {
              type: 'tool-call',
              id: `c${turn}`,
              name: 'read_file',
              arguments: JSON.stringify({ path: `src/${words(next, 1)}.ts` }),
            },
          ],
          source: { kind: 'model', provider: 'bench', model: 'model-a' },
        },
      },
      { surfaceOp: 'append' },
    );
    session.append('tool/call', {
      turn,
      step: 1,
      callId: `c${turn}`,
      name: 'read_file',
      arguments: '{}',
    });
    session.append(
      'tool/result',
      {
        turn,
        step: 1,
        message: {
          id: `r${turn}`,
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: `c${turn}`,
              content: [{ type: 'text', text: words(next, 2600) }],
            },
          ],
        },
      },
      { surfaceOp: 'append' },
    );
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return session;
}

function bytesOfLogs(directory: string): number {
  let total = 0;
  for (const name of readdirSync(directory)) {
    if (name.endsWith('.jsonl')) total += statSync(join(directory, name)).size;
  }
  return total;
}

/** What the PostgreSQL phase measured: query latencies (ours, the direct query) and the build. */
interface PgFigures {
  readonly ours: number[];
  readonly floor: number[];
  readonly buildNs: number;
  readonly indexBytes: number;
  readonly tableBytes: number;
}

/**
 * The same sessions in a PostgreSQL store on a throwaway server: the index built, then each query
 * through `searchSessions` (index current) against the direct `tsquery` on the same tables.
 */
async function postgresPhase(queries: readonly string[]): Promise<PgFigures | undefined> {
  if (postgresBinaries() === undefined) {
    log('no PostgreSQL binaries: the PostgreSQL rows are left out');
    return undefined;
  }
  log('starting a throwaway PostgreSQL server');
  const server = await startPostgres();
  const schema = 'bench_search';
  const store = await openPostgresStore({ connectionString: server.url, schema });
  const direct = new pg.Client({ connectionString: server.url });
  await direct.connect();
  try {
    log(`writing ${PG_SESSIONS} sessions to PostgreSQL`);
    for (let index = 0; index < PG_SESSIONS; index++) {
      const session = sessionEvents(index);
      await store.create(session.header);
      await store.append(session.header.id, session.events, { expectedSeq: 0 });
    }
    const start = process.hrtime.bigint();
    await rebuildSearchIndex(store);
    const buildNs = Number(process.hrtime.bigint() - start);
    const size = async (sql: string): Promise<number> =>
      Number((await direct.query<{ bytes: string }>(sql)).rows[0]?.bytes ?? 0);
    const indexBytes = await size(
      `SELECT pg_total_relation_size('${schema}.search_docs') + pg_total_relation_size('${schema}.search_sessions') AS bytes`,
    );
    const tableBytes = await size(
      `SELECT pg_total_relation_size('${schema}.events') + pg_total_relation_size('${schema}.chunk_runs') + pg_total_relation_size('${schema}.sessions') AS bytes`,
    );
    log(`indexed in ${formatDuration(buildNs)}; querying`);
    const sql = `SELECT d.session_key, d.seq, d.text, ts_rank(d.lexemes, q) AS score
      FROM ${schema}.search_docs AS d, (SELECT $1::tsquery AS q) AS q WHERE d.lexemes @@ q
      ORDER BY score DESC LIMIT 20`;
    const ours: number[] = [];
    const floor: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const query of queries) {
        const tsquery = tsqueryOf(parseSearchQuery(query));
        let at = process.hrtime.bigint();
        await direct.query(sql, [tsquery]);
        floor.push(Number(process.hrtime.bigint() - at));
        at = process.hrtime.bigint();
        await searchSessions(store, query, { catchUp: false });
        ours.push(Number(process.hrtime.bigint() - at));
      }
    }
    return { ours, floor, buildNs, indexBytes, tableBytes };
  } finally {
    await direct.end();
    await store.close();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-bench-search-'));
  try {
    const store = await openJsonlStore(dir, { fsync: false });
    log(`writing ${SESSIONS} sessions`);
    for (let index = 0; index < SESSIONS; index++) {
      const session = sessionEvents(index);
      await store.create(session.header);
      await store.append(session.header.id, session.events, { expectedSeq: 0 });
      if (index % 1000 === 999) log(`${index + 1} sessions written`);
    }
    const logBytes = bytesOfLogs(dir);
    log(`logs: ${formatBytes(logBytes)}; reading every log`);
    let readStart = process.hrtime.bigint();
    const { sessions } = await everySession(store);
    for (const summary of sessions)
      await store.load(summary.header.id, { elideFinishedChunks: true });
    const readNs = Number(process.hrtime.bigint() - readStart);
    log(`read in ${formatDuration(readNs)}; building the index`);
    readStart = process.hrtime.bigint();
    const indexed = await rebuildSearchIndex(store);
    const buildNs = Number(process.hrtime.bigint() - readStart);
    const indexBytes = statSync(join(dir, SEARCH_INDEX_FILE)).size;
    log(`indexed ${indexed} sessions in ${formatDuration(buildNs)}, ${formatBytes(indexBytes)}`);

    const queries = [
      'rarewordmarker',
      `${VOCABULARY[10]}`,
      `${VOCABULARY[3000]}`,
      `${VOCABULARY[40]} ${VOCABULARY[900]}`,
      `"${VOCABULARY[0]} ${VOCABULARY[1]}"`,
      `read_file ${VOCABULARY[2500]}`,
    ];
    const Driver = await loadDriver();
    const direct = new Driver(join(dir, SEARCH_INDEX_FILE), { readonly: true });
    const load = loadavg()
      .map((value) => value.toFixed(1))
      .join(', ');
    const statement = direct.prepare(
      "SELECT rowid, snippet(search_words, 0, '«', '»', '…', 16) AS snippet, bm25(search_words) AS score FROM search_words WHERE search_words MATCH ? ORDER BY bm25(search_words) LIMIT 20",
    );
    const ours: number[] = [];
    const oursStale: number[] = [];
    const floor: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const query of queries) {
        const match = fts5Match(parseSearchQuery(query));
        let start = process.hrtime.bigint();
        statement.all(match);
        floor.push(Number(process.hrtime.bigint() - start));
        start = process.hrtime.bigint();
        await searchSessions(store, query, { catchUp: false });
        oursStale.push(Number(process.hrtime.bigint() - start));
        if (round >= CATCH_UP_ROUNDS) continue;
        start = process.hrtime.bigint();
        await searchSessions(store, query);
        ours.push(Number(process.hrtime.bigint() - start));
      }
    }
    direct.close();
    await store.close();
    const pgFigures = await postgresPhase(queries);
    const p = (values: number[], q: number) => quantile(values, q);
    const rows = [
      ['p50', 0.5],
      ['p95', 0.95],
    ] as const;
    const report: Report = {
      section: 'search',
      intro: [
        `Search across sessions: a JSONL store of ${SESSIONS.toLocaleString('en-US')} sessions (${formatBytes(logBytes)} of logs; five turns each of a question, an`,
        "answer calling a tool and the tool's output, in made-up words drawn with a Zipf-like skew), its FTS5 index file beside the logs,",
        'and `searchSessions` against a direct FTS5 query on that same file. Goal: p50 and p95 within 2× of the direct query.',
        `Then the first ${PG_SESSIONS.toLocaleString('en-US')} of those sessions in a PostgreSQL store on a throwaway local server: its \`tsvector\` index with a GIN index against a direct \`tsquery\` on the same table.`,
      ],
      runtime: smoke ? 'about a minute' : 'about 20 minutes',
      reproduce: [
        "`--sessions=N` measures a smaller store, `--pg-sessions=N` sets the PostgreSQL phase's size. Latencies move by tens of percent between runs on a shared VM.",
        `Load average when the queries ran: ${load} (1, 5, 15 minutes), on 2 cores shared with other work.`,
      ],
      machine: machineInfo(),
      summary: [
        ...rows.map(([name, q], i) => ({
          id: `${i + 1}`,
          what: `${name} query latency: \`searchSessions\` with the index already current (\`catchUp: false\`) vs the direct FTS5 query (${queries.length} queries × ${ROUNDS} rounds)`,
          ours: formatDuration(p(oursStale, q)),
          floor: formatDuration(p(floor, q)),
          ratio: formatRatio(p(oursStale, q) / p(floor, q)),
          goal: '≤ 2×',
          verdict: (p(oursStale, q) / p(floor, q) <= 2 ? 'pass' : 'miss') as 'pass' | 'miss',
        })),
        ...rows.map(([name, q], i) => ({
          id: `${i + 3}`,
          what: `${name} latency of a default search, which first checks every session for changes (stats ${SESSIONS.toLocaleString('en-US')} log files) vs the direct FTS5 query (${queries.length} queries × ${CATCH_UP_ROUNDS} rounds)`,
          ours: formatDuration(p(ours, q)),
          floor: formatDuration(p(floor, q)),
          ratio: formatRatio(p(ours, q) / p(floor, q)),
          goal: '—',
          verdict: 'info' as const,
        })),
        {
          id: '5',
          what: `index build (\`rebuildSearchIndex\`, ${indexed.toLocaleString('en-US')} sessions) vs reading every log (list and load)`,
          ours: formatDuration(buildNs),
          floor: formatDuration(readNs),
          ratio: formatRatio(buildNs / readNs),
          goal: '—',
          verdict: 'info',
        },
        {
          id: '6',
          what: "index file size vs the logs' size",
          ours: formatBytes(indexBytes),
          floor: formatBytes(logBytes),
          ratio: formatRatio(indexBytes / logBytes),
          goal: '—',
          verdict: 'info',
        },
        ...(pgFigures === undefined ? [] : postgresRows(pgFigures, queries.length)),
      ],
      details: [],
      method: [
        `The store is written with fsync off (its writing is not measured). Reading the logs lists the store and loads each session; the build empties the index and indexes every session (\`rebuildSearchIndex\`), which reads them the same way and adds formatting each message, cutting and folding its words and FTS5's inserts. Each round runs every query three ways, in this order: the direct query (\`SELECT … snippet(), bm25() … WHERE search_words MATCH ? ORDER BY bm25 LIMIT 20\`, its snippet cut by FTS5 from the folded words, through better-sqlite3 on the index file), \`searchSessions(store, q, {catchUp: false})\`, and, in the first ${CATCH_UP_ROUNDS} rounds, \`searchSessions(store, q)\`; p50 and p95 are over all of them. The machine's load average is printed with the run: other work shared its two cores. Source: \`bench/search.ts\`.`,
      ],
      notes: [
        '`searchSessions` opens the index file, parses the query, ranks the best messages in FTS5, reads their text and cuts each snippet as the memory scan cuts it (its words found in an ASCII text by a loop over its characters). A default search also lists the store to find sessions that changed; for JSONL that is a `stat` per log file, which grows with the number of sessions, not with what is searched.',
      ],
      durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
    };
    process.stdout.write(`\n${renderText(report)}\n`);
    if (!smoke) {
      writeSection(
        resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md'),
        'search',
        renderMarkdown(report),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The summary rows of the PostgreSQL phase. */
function postgresRows(figures: PgFigures, queryCount: number): Report['summary'] {
  const p = (values: number[], q: number) => quantile(values, q);
  return [
    ...(
      [
        ['p50', 0.5],
        ['p95', 0.95],
      ] as const
    ).map(([name, q], i) => ({
      id: `${i + 7}`,
      what: `PostgreSQL (${PG_SESSIONS.toLocaleString('en-US')} sessions): ${name} query latency, \`searchSessions\` with the index current vs the direct \`tsquery\` on its GIN index (${queryCount} queries × ${ROUNDS} rounds)`,
      ours: formatDuration(p(figures.ours, q)),
      floor: formatDuration(p(figures.floor, q)),
      ratio: formatRatio(p(figures.ours, q) / p(figures.floor, q)),
      goal: '≤ 2×',
      verdict: (p(figures.ours, q) / p(figures.floor, q) <= 2 ? 'pass' : 'miss') as 'pass' | 'miss',
    })),
    {
      id: '9',
      what: "PostgreSQL: the index's tables and GIN index vs the store's tables (events, chunk runs, sessions), on disk",
      ours: formatBytes(figures.indexBytes),
      floor: formatBytes(figures.tableBytes),
      ratio: formatRatio(figures.indexBytes / figures.tableBytes),
      goal: '—',
      verdict: 'info',
    },
    {
      id: '10',
      what: `PostgreSQL: index build (\`rebuildSearchIndex\`, ${PG_SESSIONS.toLocaleString('en-US')} sessions)`,
      ours: formatDuration(figures.buildNs),
      floor: '—',
      ratio: '—',
      goal: '—',
      verdict: 'info',
    },
  ];
}

await main();
