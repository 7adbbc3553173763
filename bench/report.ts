/**
 * The benchmark report: machine facts, the summary table (ours beside a floor measured in the
 * same run), detail tables and notes, rendered as one markdown section of docs/benchmarks.md and
 * as plain text for the terminal.
 *
 * docs/benchmarks.md is shared: a short intro, then one section per benchmark between
 * `<!-- bench:<name>:begin -->` and `<!-- bench:<name>:end -->`. Each benchmark rewrites only its
 * own section ({@link writeSection}) and keeps the others as they are.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';

export type Verdict = 'pass' | 'miss' | 'info';

/** One line of the summary table. */
export interface SummaryRow {
  readonly id: string;
  readonly what: string;
  readonly ours: string;
  readonly floor: string;
  /** `ours / floor`, already formatted. */
  readonly ratio: string;
  readonly goal: string;
  readonly verdict: Verdict;
}

/** A table of supporting numbers. */
export interface DetailTable {
  readonly title: string;
  readonly intro?: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memory: string;
  readonly os: string;
  readonly node: string;
  readonly v8: string;
  readonly flags: string;
  readonly date: string;
}

/** The benchmarks sharing docs/benchmarks.md, in page order. */
export const SECTIONS = [
  'peers',
  'core',
  'store',
  'postgres',
  'takeover',
  'agent',
  'ai-sdk',
  'compaction',
  'import',
  'replay',
  'cost',
  'otel',
  'integrity',
  'viewer',
  'search',
] as const;
export type SectionName = (typeof SECTIONS)[number];

const SECTION_TITLES: Record<SectionName, string> = {
  peers: 'Side-by-side benchmark',
  core: 'Core benchmark',
  store: 'Store benchmark',
  postgres: 'PostgreSQL store benchmark',
  takeover: 'PostgreSQL takeover benchmark',
  agent: 'Agent loop benchmark',
  'ai-sdk': 'AI SDK middleware benchmark',
  compaction: 'Compaction benchmark',
  import: 'Import benchmark',
  replay: 'Replay benchmark',
  cost: 'Cost benchmark',
  otel: 'OpenTelemetry export benchmark',
  integrity: 'Hash chain and encryption benchmark',
  viewer: 'Viewer benchmark',
  search: 'Search benchmark',
};

export interface Report {
  /** Which section of the page this report fills. */
  readonly section: SectionName;
  /** Paragraph lines under the section title: what is measured, against what. */
  readonly intro: readonly string[];
  /** How long a run takes, for the reproduce block ("about 1–2 minutes"). */
  readonly runtime: string;
  /** Lines after the reproduce block (flags, noise). */
  readonly reproduce: readonly string[];
  readonly machine: MachineInfo;
  readonly summary: readonly SummaryRow[];
  readonly details: readonly DetailTable[];
  readonly method: readonly string[];
  readonly notes: readonly string[];
  readonly durationSeconds: number;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  const flags = process.execArgv.join(' ');
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
    v8: process.versions.v8,
    flags: flags === '' ? '(none)' : flags,
    date: new Date().toISOString(),
  };
}

// ---- number formatting ----

/** A goal's verdict. */
export function verdict(pass: boolean): Verdict {
  return pass ? 'pass' : 'miss';
}

/** An integer with thousands separators. */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** A fraction as a whole percentage. */
export function formatPercent(value: number): string {
  return `${(value * 100).toFixed(0)}%`;
}

/** A progress line on stderr, stamped with the seconds since `startedNs`. */
export function progressReporter(startedNs: bigint): (message: string) => void {
  return (message) => {
    const seconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
    process.stderr.write(`[${seconds.toFixed(1).padStart(6)} s] ${message}\n`);
  };
}

/** A duration in ns, in the most readable unit. */
export function formatDuration(ns: number): string {
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(ns < 10_000_000 ? 2 : 1)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

/** A rate in events per second. */
export function formatRate(perSecond: number): string {
  if (perSecond >= 1_000_000) return `${(perSecond / 1_000_000).toFixed(2)} M ev/s`;
  return `${(perSecond / 1_000).toFixed(0)} k ev/s`;
}

export function formatRatio(ratio: number): string {
  return `${ratio < 10 ? ratio.toFixed(2) : ratio.toFixed(1)}×`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

// ---- rendering ----

const VERDICT_TEXT: Record<Verdict, string> = { pass: 'pass', miss: '**MISS**', info: 'info' };

export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const escapeCell = (cell: string): string => cell.replaceAll('|', '\\|');
  const lines = [
    `| ${header.map(escapeCell).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ];
  return lines.join('\n');
}

const SUMMARY_HEADER = ['#', 'measurement', 'ours', 'floor', 'ours / floor', 'goal', 'result'];

function summaryCells(row: SummaryRow, verdicts: Record<Verdict, string>): string[] {
  return [row.id, row.what, row.ours, row.floor, row.ratio, row.goal, verdicts[row.verdict]];
}

/** The shared top of docs/benchmarks.md, above the sections. */
const PAGE_INTRO = [
  '# Benchmarks',
  '',
  '<!-- Generated: `npm run bench` (bench/peers/run.ts), `npm run bench:core` (bench/core.ts), `npm run bench:store` (bench/store.ts), `npm run bench:postgres` (bench/postgres.ts), `npm run bench:takeover` (bench/takeover.ts), `npm run bench:agent` (bench/agent.ts), `npm run bench:ai-sdk` (bench/ai-sdk.ts), `npm run bench:compaction` (bench/compaction.ts), `npm run bench:import` (bench/import.ts), `npm run bench:replay` (bench/replay.ts), `npm run bench:otel` (bench/otel.ts) `npm run bench:viewer` (bench/viewer.ts) and `npm run bench:search` (bench/search.ts) each rewrite only their own section, between its markers; edits inside a section are overwritten. -->',
  '',
  'Every figure is measured beside a **floor** measured in the same run on the same machine:',
  'the cheapest thing a library could possibly do with the same events (for example',
  '`JSON.stringify` of each event, `JSON.parse` of each line, one `write` + `fdatasync` per',
  'batch, or raw better-sqlite3). Goals are ratios to that floor, never absolute numbers, so',
  'they carry over to other machines. Performance is measured here and never asserted by a',
  'timed test: `npm test` runs no benchmark.',
  '',
  `- [${SECTION_TITLES.peers}](#side-by-side-benchmark): palimpsest on every backend beside pi, LangGraph and the OpenAI Agents SDK and the floors, one conversation, one run: append per turn, flatness, durable acks, resume, bytes, derive, 20 concurrent sessions (\`npm run bench\`).`,
  `- [${SECTION_TITLES.core}](#core-benchmark): \`Session.append\`, the surface, derivation, seeding (\`npm run bench:core\`).`,
  `- [${SECTION_TITLES.store}](#store-benchmark): appends through the JSONL and SQLite stores, flatness over a long session, resume of a 1M-event log, bytes on disk, peak memory (\`npm run bench:store\`).`,
  `- [${SECTION_TITLES.postgres}](#postgresql-store-benchmark): batched appends through \`palimpsest/postgres\` beside raw \`pg\` inserts, durable latency, flatness over a long session, resume of a 200k-event session, concurrent writers (\`npm run bench:postgres\`).`,
  `- [${SECTION_TITLES.agent}](#agent-loop-benchmark): what the agent loop adds to recording, per step and per chunk (\`npm run bench:agent\`).`,
  `- [${SECTION_TITLES['ai-sdk']}](#ai-sdk-middleware-benchmark): what \`sessionMiddleware\` adds to a bare \`streamText\` tool loop, per step and per chunk (\`npm run bench:ai-sdk\`).`,
  `- [${SECTION_TITLES.compaction}](#compaction-benchmark): cut selection and tool-result pruning on a 100k-entry surface (\`npm run bench:compaction\`).`,
  `- [${SECTION_TITLES.import}](#import-benchmark): reading Claude Code, Codex and pi session files, in MB/s beside \`JSON.parse\` of the same file (\`npm run bench:import\`).`,
  `- [${SECTION_TITLES.replay}](#replay-benchmark): the cache table and a replay of every call beside loading the session, and what the cache-aware compaction policy saves (\`npm run bench:replay\`).`,
  `- [${SECTION_TITLES.otel}](#opentelemetry-export-benchmark): exporting a session as OpenTelemetry spans, in spans per second beside the same spans made through the SDK's own tracer and exported the same way (\`npm run bench:otel\`).`,
  `- [${SECTION_TITLES.viewer}](#viewer-benchmark): the web viewer in Chromium: first render of the model view beside \`JSON.parse\` of the same events, peak JS heap, one live append (\`npm run bench:viewer\`).`,
  `- [${SECTION_TITLES.search}](#search-benchmark): \`searchSessions\` beside a direct FTS5 query on the same index, the index's build beside reading the logs, its size beside theirs (\`npm run bench:search\`).`,
].join('\n');

function beginMarker(name: SectionName): string {
  return `<!-- bench:${name}:begin -->`;
}

function endMarker(name: SectionName): string {
  return `<!-- bench:${name}:end -->`;
}

/** The text between a section's markers, if the page has both. */
function sectionOf(page: string, name: SectionName): string | undefined {
  const begin = page.indexOf(beginMarker(name));
  const end = page.indexOf(endMarker(name));
  if (begin === -1 || end < begin) return undefined;
  return page.slice(begin + beginMarker(name).length, end).trim();
}

/** The hand-written text after the last generated section (the measurement notes), kept as is. */
function trailerOf(page: string): string[] {
  const last = SECTIONS.reduce((end, section) => {
    const at = page.lastIndexOf(endMarker(section));
    return at === -1 ? end : Math.max(end, at + endMarker(section).length);
  }, -1);
  const trailer = last === -1 ? '' : page.slice(last).trim();
  return trailer === '' ? [] : [trailer];
}

function placeholder(name: SectionName): string {
  return `## ${SECTION_TITLES[name]}\n\nNot run yet: \`npm run bench:${name}\` writes this section.`;
}

/**
 * Writes one section of the benchmark page: the shared intro, then every section in page order,
 * this one from `markdown` and the others as the existing page has them (a placeholder when the
 * page has none, for example a page from before the sections existed).
 */
export function writeSection(file: string, name: SectionName, markdown: string): void {
  let page = '';
  try {
    page = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const sections = SECTIONS.map((section) => {
    const body =
      section === name ? markdown.trim() : (sectionOf(page, section) ?? placeholder(section));
    return `${beginMarker(section)}\n\n${body}\n\n${endMarker(section)}`;
  });
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${[PAGE_INTRO, ...sections, ...trailerOf(page)].join('\n\n')}\n`);
}

/** The report as its section of docs/benchmarks.md (headings from level 2 down). */
export function renderMarkdown(report: Report): string {
  const m = report.machine;
  const parts: string[] = [
    `## ${SECTION_TITLES[report.section]}`,
    '',
    ...report.intro,
    '',
    '### Machine',
    '',
    markdownTable(
      ['', ''],
      [
        ['CPU', `${m.cpu} × ${m.cores} logical cores`],
        ['memory', m.memory],
        ['OS', m.os],
        ['Node', `${m.node} (V8 ${m.v8})`],
        ['node flags', `\`${m.flags}\``],
        ['run', `${m.date}, ${report.durationSeconds.toFixed(0)} s in all`],
      ],
    ),
    '',
    '### Summary',
    '',
    'Ratios are `ours / floor`: for throughputs a higher ratio is better, for times lower.',
    '',
    markdownTable(
      SUMMARY_HEADER,
      report.summary.map((row) => summaryCells(row, VERDICT_TEXT)),
    ),
    '',
  ];
  for (const table of report.details) {
    parts.push(`#### ${table.title}`, '');
    if (table.intro !== undefined) parts.push(table.intro, '');
    parts.push(markdownTable(table.header, table.rows), '');
  }
  parts.push('### Method', '', ...report.method.map((line) => `- ${line}`), '');
  if (report.notes.length > 0) {
    parts.push('### Reading the results', '', ...report.notes.map((line) => `- ${line}`), '');
  }
  parts.push(
    '### Reproduce',
    '',
    '```sh',
    'npm ci',
    `npm run bench:${report.section}   # ${report.runtime}; rewrites its section of docs/benchmarks.md`,
    '```',
    '',
    ...report.reproduce,
    '',
  );
  return parts.join('\n');
}

function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join(
    '\n',
  );
}

export function renderText(report: Report): string {
  const m = report.machine;
  const parts = [
    `palimpsest ${report.section} benchmark — ${m.cpu} × ${m.cores}, ${m.memory}, Node ${m.node}, flags ${m.flags}`,
    '',
    textTable(
      SUMMARY_HEADER,
      report.summary.map((row) => summaryCells(row, { pass: 'pass', miss: 'MISS', info: 'info' })),
    ),
    '',
  ];
  for (const table of report.details) {
    parts.push(table.title, textTable(table.header, table.rows), '');
  }
  return parts.join('\n');
}
