/**
 * The core benchmark: each figure of `Session` beside a floor measured in the same run.
 *
 *   npm run bench:core
 *
 * Prints the tables and rewrites the core section of docs/benchmarks.md. Not a test: nothing here
 * fails a build.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AssistantChunkData, Session } from '../src/core/index.js';
import { benchDerive, surfaceOfSize } from './derive.js';
import {
  collectGarbage,
  consume,
  gcAvailable,
  median,
  paired,
  sink,
  spread,
  timeNs,
  timerOverheadNs,
} from './measure.js';
import {
  type DetailTable,
  formatBytes,
  formatDuration,
  formatRate,
  formatRatio,
  machineInfo,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  type Verdict,
  writeSection,
} from './report.js';
import {
  CITED_CHUNKS,
  chunkData,
  DELTA_CHARS,
  generateLog,
  type LogShape,
  type PlainEvent,
  plainSurfaceEvents,
  type SurfaceAppend,
  surfaceAppends,
  TextSource,
  toolResultData,
  userMessage,
} from './workload.js';

const startedNs = process.hrtime.bigint();
const summary: SummaryRow[] = [];
const details: DetailTable[] = [];
const notes: string[] = [];

function progress(message: string): void {
  const seconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
  process.stderr.write(`[${seconds.toFixed(1).padStart(6)} s] ${message}\n`);
}

function verdict(pass: boolean): Verdict {
  return pass ? 'pass' : 'miss';
}

// ---------------------------------------------------------------------------------------------
// 1 and 2: append throughput against JSON.stringify of the same events
// ---------------------------------------------------------------------------------------------

const APPEND_REPS = 9;
const APPEND_GOAL = 0.5;

interface ThroughputResult {
  readonly events: number;
  readonly oursNs: number;
  readonly floorNs: number;
  readonly oursSpread: number;
  readonly floorSpread: number;
}

function throughputRow(id: string, what: string, result: ThroughputResult): SummaryRow {
  const oursRate = (result.events / result.oursNs) * 1e9;
  const floorRate = (result.events / result.floorNs) * 1e9;
  const ratio = oursRate / floorRate;
  return {
    id,
    what,
    ours: `${formatRate(oursRate)} (${formatDuration(result.oursNs / result.events)}/ev)`,
    floor: `${formatRate(floorRate)} (${formatDuration(result.floorNs / result.events)}/ev)`,
    ratio: formatRatio(ratio),
    goal: `≥ ${APPEND_GOAL}× floor throughput`,
    verdict: verdict(ratio >= APPEND_GOAL),
  };
}

function throughputDetail(workload: string, result: ThroughputResult): string[] {
  return [
    workload,
    String(result.events),
    formatDuration(result.oursNs),
    `${(result.oursSpread * 100).toFixed(0)}%`,
    formatDuration(result.floorNs),
    `${(result.floorSpread * 100).toFixed(0)}%`,
  ];
}

function stringifyAll(events: readonly PlainEvent[]): void {
  let chars = 0;
  for (const event of events) chars += JSON.stringify(event).length;
  consume(chars);
}

/** `count` chunk data values and the plain envelopes the floor serializes. */
function chunkWorkload(
  count: number,
  seed: number,
): { data: AssistantChunkData[]; plain: PlainEvent[] } {
  const text = new TextSource(seed);
  const data = Array.from({ length: count }, (_, i) =>
    chunkData(Math.floor(i / 200), 0, text.take(DELTA_CHARS)),
  );
  const time = Date.now();
  const plain: PlainEvent[] = data.map((chunk, seq) => ({
    seq,
    time,
    type: 'assistant/chunk',
    data: chunk,
  }));
  return { data, plain };
}

function appendChunks(data: readonly AssistantChunkData[]): Session {
  const session = Session.create();
  for (const chunk of data) session.append('assistant/chunk', chunk);
  consume(session.seq + session.surface.size);
  return session;
}

function throughput(
  events: number,
  reps: number,
  ours: () => void,
  floor: () => void,
): ThroughputResult {
  const samples = paired(reps, 2, ours, floor);
  return {
    events,
    oursNs: median(samples.ours),
    floorNs: median(samples.floor),
    oursSpread: spread(samples.ours),
    floorSpread: spread(samples.floor),
  };
}

function benchChunkAppend(): ThroughputResult {
  const events = 200_000;
  progress(`1. assistant/chunk append: ${events} events × ${APPEND_REPS} reps`);
  const { data, plain } = chunkWorkload(events, 1);
  return throughput(
    events,
    APPEND_REPS,
    () => appendChunks(data),
    () => stringifyAll(plain),
  );
}

const HELD_SESSIONS = 12;
const HELD_EVENTS_PER_SESSION = 200_000;
const LOADED_EVENTS = 50_000;
const LOADED_REPS = 5;

/**
 * Figure 1 again while the process keeps other sessions alive (12 × 200k events): a library
 * whose per-event cost depends on how many events exist elsewhere in the process shows it here.
 */
function benchChunkAppendUnderLoad(): ThroughputResult & { readonly held: number } {
  const held = HELD_SESSIONS * HELD_EVENTS_PER_SESSION;
  progress(`6. holding ${held} events in ${HELD_SESSIONS} live sessions`);
  const filler = chunkWorkload(HELD_EVENTS_PER_SESSION, 6).data;
  const sessions: Session[] = [];
  for (let i = 0; i < HELD_SESSIONS; i++) sessions.push(appendChunks(filler));
  progress(
    `6. assistant/chunk append with them alive: ${LOADED_EVENTS} events × ${LOADED_REPS} reps`,
  );
  const { data, plain } = chunkWorkload(LOADED_EVENTS, 7);
  const result = throughput(
    LOADED_EVENTS,
    LOADED_REPS,
    () => appendChunks(data),
    () => stringifyAll(plain),
  );
  consume(sessions.reduce((sum, session) => sum + session.seq, 0));
  return { ...result, held };
}

function appendSurface(session: Session, append: SurfaceAppend): void {
  switch (append.type) {
    case 'user/message':
      session.append(append.type, append.data, append.intent);
      return;
    case 'assistant/message':
      session.append(append.type, append.data, append.intent);
      return;
    case 'tool/result':
      session.append(append.type, append.data, append.intent);
      return;
  }
}

function benchSurfaceAppend(): ThroughputResult & { readonly bytes: number } {
  const events = 30_000;
  progress(`2. surface append: ${events} events × ${APPEND_REPS} reps`);
  const appends = surfaceAppends(events, 2);
  const plain = plainSurfaceEvents(appends, Date.now());
  let bytes = 0;
  for (const event of plain) bytes += JSON.stringify(event).length;
  const result = throughput(
    events,
    APPEND_REPS,
    () => {
      const session = Session.create();
      for (const append of appends) appendSurface(session, append);
      consume(session.seq + session.surface.size);
    },
    () => stringifyAll(plain),
  );
  return { ...result, bytes };
}

/** Reads a surface position that must exist. */
function seqAt(session: Session, position: number): number {
  const seq = session.surface.at(position);
  if (seq === undefined) throw new Error(`no surface entry at position ${position}`);
  return seq;
}

function timeOp(op: () => void): number {
  const start = process.hrtime.bigint();
  op();
  return Number(process.hrtime.bigint() - start);
}

// ---------------------------------------------------------------------------------------------
// 3: replace cost as the surface grows
// ---------------------------------------------------------------------------------------------

interface ReplaceResult {
  readonly size: number;
  readonly toolRewriteNs: number;
  readonly summaryNs: number;
  readonly appendNs: number;
}

const TOOL_POSITION = 2;
const SUMMARY_POSITION = 10;
const SUMMARY_RANGE = 10;
const REPLACE_OPS = 1001;

/** One `tool/result` near the head rewritten again (each rewrite targets the previous one). */
function rewriteToolResult(session: Session, i: number): number {
  const target = seqAt(session, TOOL_POSITION);
  const data = toolResultData(0, 0, 'r0', 'c0', `[pruned ${i}: 2048 characters elided]`);
  const intent = {
    surfaceOp: { op: 'replace', start: target, end: target },
    sourceEventSeqs: [target],
  } as const;
  return timeOp(() => {
    session.append('tool/result', data, intent);
    consume(session.surface.size);
  });
}

/** A summary replacing ten entries near the head, then nine untimed appends restore the size. */
function replaceWithSummary(
  session: Session,
  i: number,
  text: TextSource,
): { summaryNs: number; appendNs: number } {
  const shadowed = Array.from({ length: SUMMARY_RANGE }, (_, k) =>
    seqAt(session, SUMMARY_POSITION + k),
  );
  const data = userMessage(`s${i}`, `Summary ${i} of ten entries: ${text.take(300)}`, 'compaction');
  const intent = {
    surfaceOp: {
      op: 'replace',
      start: shadowed[0] as number,
      end: shadowed[SUMMARY_RANGE - 1] as number,
    },
    sourceEventSeqs: shadowed,
  } as const;
  const summaryNs = timeOp(() => {
    session.append('user/message', data, intent);
    consume(session.surface.size);
  });
  let appendNs = 0;
  for (let k = 0; k < SUMMARY_RANGE - 1; k++) {
    const refill = userMessage(`f${i}-${k}`, text.take(120));
    const ns = timeOp(() => {
      session.append('user/message', refill, { surfaceOp: 'append' });
      consume(session.surface.size);
    });
    if (k === 0) appendNs = ns;
  }
  return { summaryNs, appendNs };
}

/**
 * Every operation runs on each size in turn (round robin), so drift over the run (JIT state,
 * GC debt, a noisy neighbour) falls on all sizes alike and the growth ratios stay fair.
 */
function measureReplaces(sizes: readonly number[], ops: number, text: TextSource): ReplaceResult[] {
  const sessions = sizes.map((size) => surfaceOfSize(size, text));
  const tool = sizes.map((): number[] => []);
  const summary = sizes.map((): number[] => []);
  const append = sizes.map((): number[] => []);
  collectGarbage();
  for (let i = 0; i < ops; i++) {
    sessions.forEach((session, k) => {
      tool[k]?.push(rewriteToolResult(session, i));
    });
  }
  for (let i = 0; i < ops; i++) {
    sessions.forEach((session, k) => {
      const sample = replaceWithSummary(session, i, text);
      summary[k]?.push(sample.summaryNs);
      append[k]?.push(sample.appendNs);
    });
  }
  return sizes.map((size, k) => {
    if (sessions[k]?.surface.size !== size) throw new Error('the surface size drifted');
    return {
      size,
      toolRewriteNs: median(tool[k] ?? []),
      summaryNs: median(summary[k] ?? []),
      appendNs: median(append[k] ?? []),
    };
  });
}

function benchReplace(): ReplaceResult[] {
  const sizes = [100, 1_000, 10_000, 100_000];
  progress(`3. replace cost on surfaces of ${sizes.join(', ')} entries`);
  const text = new TextSource(3);
  measureReplaces([100, 1_000], REPLACE_OPS, text); // warm-up
  return measureReplaces(sizes, REPLACE_OPS, text);
}

// ---------------------------------------------------------------------------------------------
// 5: seeding a 1M-event log against JSON.parse of its lines
// ---------------------------------------------------------------------------------------------

const SEED_GOAL = 1.3;
const SEED_REPS = 3;

function parseLines(jsonl: string, count: number): unknown[] {
  const out: unknown[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = jsonl.indexOf('\n', start);
    out.push(JSON.parse(jsonl.slice(start, end)));
    start = end + 1;
  }
  return out;
}

interface SeedResult {
  readonly events: number;
  readonly bytes: number;
  readonly surfaceEvents: number;
  readonly parseNs: number;
  readonly adoptNs: number;
  readonly adoptTotalNs: number;
  readonly copyNs: number;
  readonly parseSamples: readonly number[];
  readonly adoptSamples: readonly number[];
  readonly copySamples: readonly number[];
  readonly parsedHeap: number;
  readonly adoptedHeap: number;
  readonly copiedHeap: number;
}

function heapUsed(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

function seedOnce(
  jsonl: string,
  count: number,
  mode: 'adopt' | 'copy',
): { parseNs: number; seedNs: number; heapParsed: number; heapSeeded: number } {
  collectGarbage();
  const baseline = heapUsed();
  let parsed: unknown[] = [];
  const parseNs = timeNs(() => {
    parsed = parseLines(jsonl, count);
  });
  const heapParsed = heapUsed() - baseline;
  let session: Session | undefined;
  const seedNs = timeNs(() => {
    session = Session.create({ seed: parsed, seedMode: mode });
  });
  if (session?.seq !== count) throw new Error('the seeded session lost events');
  if (mode === 'adopt') parsed = [];
  const heapSeeded = heapUsed() - baseline;
  consume(session.surface.size + parsed.length);
  return { parseNs, seedNs, heapParsed, heapSeeded };
}

function benchSeed(): SeedResult {
  const shape: LogShape = { turns: 4_900, chunksPerTurn: 196 };
  progress(`5. generating ${shape.turns} turns × ${shape.chunksPerTurn + 8} events`);
  const warm = generateLog({ turns: 100, chunksPerTurn: shape.chunksPerTurn }, 50);
  for (let i = 0; i < 3; i++) {
    seedOnce(warm.jsonl, warm.events, 'adopt');
    seedOnce(warm.jsonl, warm.events, 'copy');
  }
  const log = generateLog(shape, 5);
  progress(
    `5. seeding ${log.events} events (${formatBytes(log.bytes)} JSONL) × ${SEED_REPS} reps per mode`,
  );
  const parseSamples: number[] = [];
  const adoptSamples: number[] = [];
  const totalSamples: number[] = [];
  const copySamples: number[] = [];
  let parsedHeap = 0;
  let adoptedHeap = 0;
  let copiedHeap = 0;
  for (let rep = 0; rep < SEED_REPS; rep++) {
    const adopt = seedOnce(log.jsonl, log.events, 'adopt');
    parseSamples.push(adopt.parseNs);
    adoptSamples.push(adopt.seedNs);
    totalSamples.push(adopt.parseNs + adopt.seedNs);
    parsedHeap = adopt.heapParsed;
    adoptedHeap = adopt.heapSeeded;
    progress(
      `   rep ${rep + 1}: parse ${formatDuration(adopt.parseNs)}, adopt ${formatDuration(adopt.seedNs)}`,
    );
    const copy = seedOnce(log.jsonl, log.events, 'copy');
    parseSamples.push(copy.parseNs);
    copySamples.push(copy.seedNs);
    copiedHeap = copy.heapSeeded;
    progress(
      `   rep ${rep + 1}: parse ${formatDuration(copy.parseNs)}, copy ${formatDuration(copy.seedNs)}`,
    );
  }
  return {
    events: log.events,
    bytes: log.bytes,
    surfaceEvents: log.surfaceEvents,
    parseNs: median(parseSamples),
    adoptNs: median(adoptSamples),
    adoptTotalNs: median(totalSamples),
    copyNs: median(copySamples),
    parseSamples,
    adoptSamples,
    copySamples,
    parsedHeap,
    adoptedHeap,
    copiedHeap,
  };
}

// ---------------------------------------------------------------------------------------------
// Run and report
// ---------------------------------------------------------------------------------------------

function main(): void {
  if (!gcAvailable) {
    progress('warning: run with --expose-gc (npm run bench:core does) to collect between phases');
  }
  const timerNs = timerOverheadNs();

  const chunk = benchChunkAppend();
  summary.push(throughputRow('1', '`assistant/chunk` append vs `JSON.stringify` per event', chunk));
  collectGarbage();

  const surface = benchSurfaceAppend();
  summary.push(
    throughputRow(
      '2',
      'surface append (user / assistant / tool result) vs `JSON.stringify` per event',
      surface,
    ),
  );
  const appendRows: string[][] = [];
  details.push({
    title: 'Append throughput (figures 1, 2 and 6)',
    intro: `Median of ${APPEND_REPS} runs (figure 6: ${LOADED_REPS}), ours and floor alternating, a full GC before each run. Spread = (max − min) / median.`,
    header: ['workload', 'events', 'ours', 'spread', 'JSON.stringify floor', 'spread'],
    rows: appendRows,
  });
  appendRows.push(
    throughputDetail(`assistant/chunk (~${DELTA_CHARS}-char text delta)`, chunk),
    throughputDetail(
      `surface mix (avg ${formatBytes(surface.bytes / surface.events)} per event as JSON)`,
      surface,
    ),
  );
  collectGarbage();

  const replaces = benchReplace();
  const first = replaces[0] as ReplaceResult;
  const last = replaces[replaces.length - 1] as ReplaceResult;
  const toolGrowth = last.toolRewriteNs / first.toolRewriteNs;
  const summaryGrowth = last.summaryNs / first.summaryNs;
  summary.push({
    id: '3a',
    what: `\`tool/result\` rewrite near the head, surface ${last.size.toLocaleString('en-US')} vs ${first.size}`,
    ours: formatDuration(last.toolRewriteNs),
    floor: `${formatDuration(first.toolRewriteNs)} (at ${first.size})`,
    ratio: formatRatio(toolGrowth),
    goal: 'report (O(surface) by design)',
    verdict: 'info',
  });
  summary.push({
    id: '3b',
    what: `summary replacing ${SUMMARY_RANGE} entries near the head, surface ${last.size.toLocaleString('en-US')} vs ${first.size}`,
    ours: formatDuration(last.summaryNs),
    floor: `${formatDuration(first.summaryNs)} (at ${first.size})`,
    ratio: formatRatio(summaryGrowth),
    goal: 'report (O(surface) by design)',
    verdict: 'info',
  });
  details.push({
    title: 'Replace cost by surface size (figure 3)',
    intro: `Median per operation over ${REPLACE_OPS} operations: \`append\` of the replacing event plus a read of \`surface.size\`, which applies the replace (the manager applies a validated event lazily). Sizes are measured round robin (one operation on each size in turn). The \`tool/result\` rewrite replaces the entry at surface position ${TOOL_POSITION} again and again; the summary replaces positions ${SUMMARY_POSITION}–${SUMMARY_POSITION + SUMMARY_RANGE - 1} with one \`user/message\` citing all ${SUMMARY_RANGE}, then ${SUMMARY_RANGE - 1} untimed appends restore the size. "plain append" is one \`user/message\` append on the same surface, for scale.`,
    header: [
      'surface entries',
      'tool/result rewrite',
      'growth vs 100',
      'summary (10 → 1)',
      'growth vs 100',
      'plain append',
    ],
    rows: replaces.map((r) => [
      r.size.toLocaleString('en-US'),
      formatDuration(r.toolRewriteNs),
      formatRatio(r.toolRewriteNs / first.toolRewriteNs),
      formatDuration(r.summaryNs),
      formatRatio(r.summaryNs / first.summaryNs),
      formatDuration(r.appendNs),
    ]),
  });
  collectGarbage();

  const derives = benchDerive(progress);
  summary.push(...derives.summary);
  details.push(derives.detail);
  collectGarbage();

  const seed = benchSeed();
  const adoptRatio = seed.adoptNs / seed.parseNs;
  const totalRatio = seed.adoptTotalNs / seed.parseNs;
  const copyRatio = seed.copyNs / seed.parseNs;
  const millions = (seed.events / 1e6).toFixed(2);
  summary.push({
    id: '5a',
    what: `seed step: \`Session.create({seed, seedMode:'adopt'})\` of ${millions}M parsed events vs parsing them`,
    ours: formatDuration(seed.adoptNs),
    floor: `${formatDuration(seed.parseNs)} (JSON.parse per line)`,
    ratio: formatRatio(adoptRatio),
    goal: `≤ ${SEED_GOAL}× parse (judged here)`,
    verdict: verdict(adoptRatio <= SEED_GOAL),
  });
  summary.push({
    id: '5b',
    what: 'store load path: parse every line + adopt seed vs parse alone',
    ours: formatDuration(seed.adoptTotalNs),
    floor: formatDuration(seed.parseNs),
    ratio: formatRatio(totalRatio),
    goal: 'report',
    verdict: 'info',
  });
  summary.push({
    id: '5c',
    what: '`Session.create({seed})` in copy mode from parsed objects vs parsing them',
    ours: formatDuration(seed.copyNs),
    floor: formatDuration(seed.parseNs),
    ratio: formatRatio(copyRatio),
    goal: 'report',
    verdict: 'info',
  });
  const perEvent = (ns: number) => formatDuration(ns / seed.events);
  details.push({
    title: 'Seeding a 1M-event log (figure 5)',
    intro: `${seed.events.toLocaleString('en-US')} events (${seed.surfaceEvents.toLocaleString('en-US')} on the surface), ${formatBytes(seed.bytes)} of JSONL held in one string. Median of ${seed.parseSamples.length} parses and ${SEED_REPS} seeds per mode; a full GC between phases. Heap = retained \`heapUsed\` growth over the run's baseline after a full GC.`,
    header: ['phase', 'median', 'per event', 'events/s', 'samples', 'heap retained'],
    rows: [
      [
        'JSON.parse each line (floor)',
        formatDuration(seed.parseNs),
        perEvent(seed.parseNs),
        formatRate((seed.events / seed.parseNs) * 1e9),
        seed.parseSamples.map(formatDuration).join(', '),
        formatBytes(seed.parsedHeap),
      ],
      [
        "Session.create, seedMode 'adopt'",
        formatDuration(seed.adoptNs),
        perEvent(seed.adoptNs),
        formatRate((seed.events / seed.adoptNs) * 1e9),
        seed.adoptSamples.map(formatDuration).join(', '),
        formatBytes(seed.adoptedHeap),
      ],
      [
        'parse + adopt (load path)',
        formatDuration(seed.adoptTotalNs),
        perEvent(seed.adoptTotalNs),
        formatRate((seed.events / seed.adoptTotalNs) * 1e9),
        '',
        '',
      ],
      [
        "Session.create, seedMode 'copy'",
        formatDuration(seed.copyNs),
        perEvent(seed.copyNs),
        formatRate((seed.events / seed.copyNs) * 1e9),
        seed.copySamples.map(formatDuration).join(', '),
        `${formatBytes(seed.copiedHeap)} (parsed + copies)`,
      ],
    ],
  });

  collectGarbage();
  const loaded = benchChunkAppendUnderLoad();
  summary.push(
    throughputRow(
      '6',
      `\`assistant/chunk\` append with ${(loaded.held / 1e6).toFixed(1)}M events alive in other sessions vs \`JSON.stringify\``,
      loaded,
    ),
  );
  appendRows.push(
    throughputDetail(
      `assistant/chunk, ${(loaded.held / 1e6).toFixed(1)}M events alive elsewhere`,
      loaded,
    ),
  );
  const loadedSlowdown = loaded.oursNs / loaded.events / (chunk.oursNs / chunk.events);
  const loadedFloorSlowdown = loaded.floorNs / loaded.events / (chunk.floorNs / chunk.events);

  notes.push(
    `Figure 1 counts everything \`session.append\` does for a chunk: type check, the clock, a deep copy and freeze of the data (for a text delta \`{turn, step, chunk: {type, id, delta}}\`, since 2026-12-03 the written-out check and two frozen literals of \`src/core/delta-chunk.ts\`; any other data, the general walk \`snapshotJson\`), the frozen envelope, the admitted-event mark, the surface check. The floor does none of that; it only serializes, which a store must do anyway.`,
    `Figure 2's events carry large strings that \`append\` never copies (strings are immutable), while \`JSON.stringify\` must escape and copy every character: the ratio is high because the floor grows with bytes and the append with structure. Each assistant message cites ${CITED_CHUNKS} earlier seqs, as one citing its stream chunks does.`,
    `Figure 3 is O(surface) by the RFC's design: a replace looks its endpoints up by position (\`indexOf\`) and splices the surface array. Near the head the lookup is short; the cost that grows is the splice moving every later entry (a 1-for-1 rewrite moves nothing), plus the allocation of the shadowed range.`,
    derives.note,
    `Figure 5's goal is judged on the seed step alone (\`Session.create\` in adopt mode, the path a store uses when it hands over freshly parsed events) against the parse of the same lines; 5b shows the whole load path against parse alone. Copy mode (5c) is for callers that keep their objects.`,
    `Figure 6 repeats figure 1 while ${HELD_SESSIONS} other sessions (${(loaded.held / 1e6).toFixed(1)}M events) stay alive in the process, as in a server holding several sessions or one very long one: an append costs ${formatRatio(loadedSlowdown)} what it costs in figure 1 (the stringify floor: ${formatRatio(loadedFloorSlowdown)}). Per-event costs should not depend on how many events exist elsewhere.`,
    `Per-operation timings (figures 3 and 4) include one \`process.hrtime.bigint()\` pair, ${formatDuration(timerNs)} on this machine.`,
  );

  const report: Report = {
    section: 'core',
    intro: [
      'Each figure of the core (`Session.append`, the surface, derivation, seeding) is measured',
      'beside a floor measured in the same run: the cheapest thing a library could do with the',
      'same events (here `JSON.stringify` of each event, or `JSON.parse` of each line).',
    ],
    runtime: 'about 2–4 minutes',
    reproduce: [
      'The script runs node with `--expose-gc` (a full GC between measured phases) and an 8 GiB',
      'heap (the 1M-event seeding phase holds the JSONL text and the parsed events at once).',
      'Absolute numbers vary between runs, by a few percent on a quiet machine and more on a',
      'shared VM; compare the ratios, which are measured side by side. A ratio within ~15% of its',
      'goal can land on either side from one run to the next (see the spread columns).',
    ],
    machine: machineInfo(),
    summary,
    details,
    method: [
      'One process, one run: every figure and its floor are measured seconds apart in the same process, alternating where both are batch measurements.',
      `Warm-up rounds precede every measurement; throughput figures take the median of ${APPEND_REPS} runs, replace figures the median of ${REPLACE_OPS} operations, derivation figures the median over rounds of each round's median (figure 4's table), seeding the median of ${SEED_REPS} (parse: ${2 * SEED_REPS}).`,
      "Timing uses `process.hrtime.bigint()`; with `--expose-gc` a full GC runs before each measured run, so one phase does not pay for another's garbage.",
      'The workload is deterministic (seeded PRNG over a word list). A turn of the 1M-event log is `turn/start`, `user/message` (~460 B), `step/start`, 196 `assistant/chunk` (~150 B), `assistant/message` (the concatenated deltas + one tool call, citing its chunks), `tool/call`, `tool/result` (~2 KB), `step/end`, `turn/end`: 204 events, as in the research anchors.',
      'Source: `bench/core.ts` (figures), `bench/derive.ts` (figure 4), `bench/workload.ts` (events), `bench/measure.ts` (timing), `bench/report.ts` (this page).',
    ],
    notes,
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };

  process.stdout.write(`\n${renderText(report)}\n`);
  const here = dirname(fileURLToPath(import.meta.url));
  const target = resolve(here, '../docs/benchmarks.md');
  writeSection(target, 'core', renderMarkdown(report));
  progress(`wrote the core section of ${target} (sink ${sink()})`);
}

main();
