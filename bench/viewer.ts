/**
 * The viewer benchmark (`npm run bench:viewer`): in Debian's chromium, headless, the time from
 * the snapshot's arrival to the first render of the model view (the page's own performance
 * marks: JSON.parse, core's seeding with every surface rule, the fold, the rows in sight),
 * beside the floor of `JSON.parse` of the same snapshot parts, every event in full, in a fresh
 * page of the viewer; the same session opened again in the page; the peak JS heap while it
 * loads; the time to apply one live append to a 100k-event session; the first meaningful paint
 * and the time to interactive of the largest session; and the time to draw the trace of a
 * session of 1,000 model calls. `--smoke`: 1k events, 100 calls, one round, docs untouched.
 */
import { availableParallelism, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { Session } from '../src/core/index.js';
import type { SessionStore } from '../src/store/index.js';
import {
  type ChunkBodies,
  MARKS,
  SNAPSHOT_PART_CHARS,
  type SnapshotPart,
  type SnapshotStart,
} from '../src/viewer/protocol.js';
import { user } from '../test/core/builders.js';
import {
  type DetailTable,
  formatBytes,
  formatCount,
  formatRatio,
  machineInfo,
  progressReporter,
  type Report,
  renderMarkdown,
  renderText,
  type SummaryRow,
  verdict,
  writeSection,
} from './report.js';
import { type Interactive, paintAndInteractive, traceDraw } from './viewer-interactive.js';
import {
  callWorkload,
  type LoadPhases,
  loadMarks,
  readMarks,
  withViewer,
  workload,
} from './viewer-workload.js';

const smoke = process.argv.includes('--smoke');
const SIZES: readonly number[] = smoke ? [1_000] : [1_000, 10_000, 100_000];
const LARGEST = SIZES[SIZES.length - 1] as number;
const REPS = smoke ? 1 : 3;
/** The model calls of the trace's session. */
const CALLS = smoke ? 100 : 1_000;
const APPENDS = 7;
/** How many times a load opens its session again in the same page, for the steady figure. */
const REOPENS = 3;
const startedNs = process.hrtime.bigint();
const progress = progressReporter(startedNs);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

interface Load extends LoadPhases {
  readonly peakHeap: number;
}

/** One size's figures: medians over its loads, and its floors. */
interface SizeResult extends Load {
  /** JSON.parse of the full parts in a fresh page (the floor the goal is judged by). */
  readonly coldParseMs: number;
  /** The same parse repeated in that page, median of three. */
  readonly warmParseMs: number;
  /** The full snapshot parts as JSON (what the floor parses), in UTF-16 units. */
  readonly snapshotChars: number;
  /** The parts the page parsed: finished chunks as stubs. */
  readonly sentChars: number;
  readonly parts: number;
  /** The same session opened again in the same page (see {@link reopen}). */
  readonly reopened: Omit<Load, 'peakHeap'>;
}

/**
 * Opens session `id` in a fresh page: the page's marks and, with `sampleHeap`, the heap peak. The
 * heap is sampled over the debugging protocol every 10 ms, which stalls the page it measures, so
 * the timed loads run without it and the peak comes from loads of its own.
 */
async function load(page: Page, url: string, id: string, sampleHeap: boolean): Promise<Load> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  let peakHeap = 0;
  let sampling = sampleHeap;
  const sampler = (async () => {
    while (sampling) {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const used = metrics.find((metric) => metric.name === 'JSHeapUsedSize')?.value ?? 0;
      peakHeap = Math.max(peakHeap, used);
      await new Promise((done) => setTimeout(done, 10));
    }
  })();
  await page.goto(`${url}#/s/${encodeURIComponent(id)}`);
  await page.waitForFunction(
    (mark) => performance.getEntriesByName(mark).length > 0,
    MARKS.firstRender,
    {
      timeout: 300_000,
    },
  );
  sampling = false;
  await sampler;
  await cdp.detach();
  return { ...(await lastLoad(page)), peakHeap };
}

/**
 * The first render and its phases of the page's latest load of a session, from its marks. The
 * page parses each snapshot part as it arrives: the parse is the sum of the load's part parses
 * (`MARKS.partParsed`), and the first render counts those done before the last part came (see
 * {@link loadMarks}).
 */
async function lastLoad(page: Page): Promise<Omit<Load, 'peakHeap'>> {
  return loadMarks(await page.evaluate(readMarks, MARKS));
}

/**
 * Opens session `id` again in `page`, which already shows it, `times` times (away to the
 * session list and back, as a person switching sessions does): the last reopen's first render,
 * by code the page has run before, in a heap that has held the session.
 */
async function reopen(page: Page, id: string, times: number): Promise<Omit<Load, 'peakHeap'>> {
  for (let time = 0; time < times; time++) {
    const seen = await page.evaluate(
      (mark) => performance.getEntriesByName(mark).length,
      MARKS.firstRender,
    );
    // As strings: the benchmark's types have no DOM.
    await page.evaluate("location.hash = '#/'");
    await page.waitForFunction("location.hash === '#/'");
    await page.evaluate(`location.hash = ${JSON.stringify(`#/s/${encodeURIComponent(id)}`)}`);
    await page.waitForFunction(
      ([mark, count]) => performance.getEntriesByName(mark as string).length > (count as number),
      [MARKS.firstRender, seen] as const,
      { timeout: 300_000 },
    );
  }
  return lastLoad(page);
}

function phaseCell(load: Omit<Load, 'peakHeap'>): string {
  const { parse, seed, views } = load.phases;
  return `${parse.toFixed(0)} / ${seed.toFixed(0)} / ${views.toFixed(0)} ms`;
}

/** The snapshot's parts as the page receives them, and the same parts with every event in full. */
interface SnapshotTexts {
  readonly sent: readonly string[];
  readonly full: readonly string[];
}

/**
 * Reads session `id`'s snapshot parts from the viewer server as the page does, and rebuilds
 * each with its finished chunks' bodies (from the chunks route) in place of their stubs: the
 * text the parts would be without stubs, which is what the floor parses.
 */
async function snapshotTexts(url: string, id: string): Promise<SnapshotTexts> {
  const { origin, search } = new URL(url);
  const path = (route: string): string =>
    `${origin}/api/sessions/${encodeURIComponent(id)}/${route}${search}`;
  const controller = new AbortController();
  const response = await fetch(path('events'), { signal: controller.signal });
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  let text = '';
  const lines: string[] = [];
  let parts: number | undefined;
  while (parts === undefined || lines.length < parts + 1) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the event stream ended inside the snapshot');
    text += value;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n')) {
      lines.push(text.slice(0, end));
      text = text.slice(end + 1);
      if (lines.length === 1) parts = (JSON.parse(lines[0] as string) as SnapshotStart).parts;
    }
  }
  controller.abort();
  const sent = lines.slice(1, 1 + (parts ?? 0));
  const { chunks } = (await (await fetch(path('chunks'))).json()) as ChunkBodies;
  const bodies = new Map(chunks.map((chunk) => [chunk.seq, chunk]));
  const full = sent.map((line) => {
    const part = JSON.parse(line) as SnapshotPart;
    return JSON.stringify({ ...part, events: part.events.map((e) => bodies.get(e.seq) ?? e) });
  });
  return { sent, full };
}

/**
 * The floor: JSON.parse of the full parts in a fresh page of the viewer (its session list, no
 * session open), as the first render's parse runs, and again three times in the same page.
 * The texts arrive as strings through the debugging protocol before the clock starts.
 */
async function parseFloor(
  browser: Browser,
  url: string,
  texts: readonly string[],
): Promise<{ cold: number; warm: number }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    await page.goto(url);
    await page.waitForSelector('#session-list li');
    return await page.evaluate(
      ({ parts, reps }) => {
        // Round 0 is the fresh page's; no named functions here (tsx would wrap them in a
        // helper the page does not have).
        const times: number[] = [];
        for (let round = 0; round <= reps; round++) {
          const start = performance.now();
          // Kept until every part is parsed, as the page keeps them for its seed.
          const kept: unknown[] = [];
          for (const part of parts) kept.push(JSON.parse(part));
          times.push(performance.now() - start);
        }
        const cold = times[0] ?? Number.NaN;
        const warm = times.slice(1).sort((a, b) => a - b);
        return { cold, warm: warm[Math.floor(warm.length / 2)] ?? Number.NaN };
      },
      { parts: texts, reps: REPS },
    );
  } finally {
    await page.close();
  }
}

/** Appends `count` user messages one at a time; the page's measure of applying each. */
async function liveAppends(
  page: Page,
  writer: SessionStore,
  session: Session,
  count: number,
): Promise<number[]> {
  const durations: number[] = [];
  for (let index = 0; index < count; index++) {
    const before = await page.evaluate(
      (name) => performance.getEntriesByName(name).length,
      MARKS.append,
    );
    const event = session.append('user/message', user(`live${index}`, `A live message ${index}`), {
      surfaceOp: 'append',
    });
    await writer.append(session.id, [event], { expectedSeq: event.seq });
    await page.waitForFunction(
      ([name, seen]) => performance.getEntriesByName(name as string).length > (seen as number),
      [MARKS.append, before] as const,
      { timeout: 30_000 },
    );
    durations.push(
      await page.evaluate((name) => {
        const entries = performance.getEntriesByName(name);
        return entries[entries.length - 1]?.duration ?? Number.NaN;
      }, MARKS.append),
    );
  }
  return durations;
}

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  const sessions = new Map<number, Session>();
  for (const size of SIZES) sessions.set(size, workload(`bench-${size}`, size));
  const calls = callWorkload('bench-calls', CALLS);
  const rows: string[][] = [];
  const loads = new Map<number, SizeResult>();
  let appendMs: number[] = [];
  const interactives: Interactive[] = [];
  const traces: { ms: number; rows: number }[] = [];
  await withViewer([...sessions.values(), calls], async ({ url, browser, writer }) => {
    progress('recorded the sessions');
    for (const size of SIZES) {
      const session = sessions.get(size) as Session;
      const texts = await snapshotTexts(url, session.id);
      const runs: Load[] = [];
      const heapRuns: Load[] = [];
      const floors: { cold: number; warm: number }[] = [];
      const reopens: Omit<Load, 'peakHeap'>[] = [];
      for (let rep = 0; rep < REPS; rep++) {
        for (const sampleHeap of [false, true]) {
          const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
          (sampleHeap ? heapRuns : runs).push(await load(page, url, session.id, sampleHeap));
          if (!sampleHeap) reopens.push(await reopen(page, session.id, REOPENS));
          if (size === LARGEST && rep === REPS - 1 && !sampleHeap)
            appendMs = await liveAppends(page, writer, session, APPENDS);
          await page.close();
        }
        floors.push(await parseFloor(browser, url, texts.full));
      }
      const chars = (parts: readonly string[]): number =>
        parts.reduce((sum, part) => sum + part.length, 0);
      const result: SizeResult = {
        renderMs: median(runs.map((run) => run.renderMs)),
        coldParseMs: median(floors.map((floor) => floor.cold)),
        warmParseMs: median(floors.map((floor) => floor.warm)),
        peakHeap: Math.max(...heapRuns.map((run) => run.peakHeap)),
        snapshotChars: chars(texts.full),
        sentChars: chars(texts.sent),
        parts: texts.sent.length,
        reopened: {
          renderMs: median(reopens.map((run) => run.renderMs)),
          phases: {
            parse: median(reopens.map((run) => run.phases.parse)),
            seed: median(reopens.map((run) => run.phases.seed)),
            views: median(reopens.map((run) => run.phases.views)),
          },
        },
        phases: {
          parse: median(runs.map((run) => run.phases.parse)),
          seed: median(runs.map((run) => run.phases.seed)),
          views: median(runs.map((run) => run.phases.views)),
        },
      };
      loads.set(size, result);
      rows.push([
        formatCount(session.seq - (size === LARGEST ? APPENDS : 0)),
        `${formatBytes(result.snapshotChars)} / ${formatBytes(result.sentChars)} in ${result.parts}`,
        `${result.coldParseMs.toFixed(1)} / ${result.warmParseMs.toFixed(1)} ms`,
        `${result.renderMs.toFixed(1)} ms`,
        `${formatRatio(result.renderMs / result.coldParseMs)} / ${formatRatio(result.renderMs / result.warmParseMs)}`,
        phaseCell(result),
        `${result.reopened.renderMs.toFixed(1)} ms: ${phaseCell(result.reopened)}`,
        formatBytes(result.peakHeap),
      ]);
      progress(
        `${formatCount(size)} events: first render ${result.renderMs.toFixed(1)} ms, JSON.parse ${result.coldParseMs.toFixed(1)} ms in a fresh page, ${result.warmParseMs.toFixed(1)} ms repeated`,
      );
    }
    const largest = sessions.get(LARGEST) as Session;
    for (let rep = 0; rep < REPS; rep++) {
      interactives.push(await paintAndInteractive(browser, url, largest.id));
      traces.push(await traceDraw(browser, url, calls.id));
    }
    progress(
      `paint ${median(interactives.map((i) => i.paint)).toFixed(0)} ms, interactive ${median(interactives.map((i) => i.interactive)).toFixed(0)} ms, trace of ${CALLS} calls ${median(traces.map((t) => t.ms)).toFixed(0)} ms`,
    );
  });
  const big = loads.get(LARGEST) as SizeResult;
  // From the snapshot's arrival, the origin of V1; the navigation's start is in the details.
  const paint = median(interactives.map((run) => run.paint - run.received));
  const interactive = median(interactives.map((run) => run.interactive - run.received));
  const fromNavigation = median(interactives.map((run) => run.interactive));
  const stretch = (of: (run: Interactive) => number): string =>
    `${median(interactives.map(of)).toFixed(0)} ms`;
  const trace = median(traces.map((run) => run.ms));
  const traceRows = traces[0]?.rows ?? 0;
  const sizeText = `${formatCount(LARGEST)} events`;
  const append = median(appendMs);
  const summary: SummaryRow[] = [
    {
      id: 'V1',
      what: `first render of the model view, ${sizeText}`,
      ours: `${big.renderMs.toFixed(0)} ms`,
      floor: `${big.coldParseMs.toFixed(0)} ms (JSON.parse, fresh page)`,
      ratio: formatRatio(big.renderMs / big.coldParseMs),
      goal: '≤ 2×',
      verdict: verdict(big.renderMs <= 2 * big.coldParseMs),
    },
    {
      id: 'V1w',
      what: 'the same, beside JSON.parse repeated in a page (no goal)',
      ours: `${big.renderMs.toFixed(0)} ms`,
      floor: `${big.warmParseMs.toFixed(0)} ms (JSON.parse, 4th time)`,
      ratio: formatRatio(big.renderMs / big.warmParseMs),
      goal: 'info',
      verdict: 'info',
    },
    {
      id: 'V2',
      what: `one live append applied, ${sizeText}`,
      ours: `${append.toFixed(2)} ms`,
      floor: '16.7 ms (one frame)',
      ratio: formatRatio(append / 16.7),
      goal: '≤ 1× (16 ms)',
      verdict: verdict(append <= 16),
    },
    {
      id: 'V3',
      what: `first meaningful paint (model view painted), ${sizeText}`,
      ours: `${paint.toFixed(0)} ms`,
      floor: `${big.coldParseMs.toFixed(0)} ms (JSON.parse, fresh page)`,
      ratio: formatRatio(paint / big.coldParseMs),
      goal: 'info',
      verdict: 'info',
    },
    {
      id: 'V4',
      what: `interactive (a tab switch answered and painted), ${sizeText}`,
      ours: `${interactive.toFixed(0)} ms`,
      floor: `${big.coldParseMs.toFixed(0)} ms (JSON.parse, fresh page)`,
      ratio: formatRatio(interactive / big.coldParseMs),
      goal: '≤ 500 ms',
      verdict: verdict(interactive <= 500),
    },
    {
      id: 'V6',
      what: `interactive from the navigation’s start (V4 and all before the snapshot), ${sizeText}`,
      ours: `${fromNavigation.toFixed(0)} ms`,
      floor: `${big.coldParseMs.toFixed(0)} ms (JSON.parse, fresh page)`,
      ratio: formatRatio(fromNavigation / big.coldParseMs),
      goal: '≤ 500 ms (V4’s, read from the navigation)',
      verdict: verdict(fromNavigation <= 500),
    },
    {
      id: 'V5',
      what: `the trace drawn, ${formatCount(CALLS)} model calls (${formatCount(traceRows)} rows)`,
      ours: `${trace.toFixed(0)} ms`,
      floor: '16.7 ms (one frame)',
      ratio: formatRatio(trace / 16.7),
      goal: 'info',
      verdict: 'info',
    },
  ];
  const details: DetailTable[] = [
    {
      title: 'First render by session size',
      intro: `Medians of ${REPS} page loads; heap is the highest \`JSHeapUsedSize\` sampled every 10 ms while loading, in ${REPS} more loads of its own (the sampling stalls the page, so the timed loads run without it).`,
      header: [
        'events',
        'snapshot parts: full / sent, in parts',
        'JSON.parse of full: fresh page (floor) / repeated',
        'first render',
        'render / parse: fresh / repeated',
        'of it: parse / seed / views',
        `opened again in the page: open ${REOPENS + 1}, parse / seed / views`,
        'peak JS heap',
      ],
      rows,
    },
    {
      title: 'What a person waits for',
      intro: `${REPS} fresh pages each. Paint and interactive are on the ${sizeText} session, from the snapshot’s arrival (V3, V4: the origin of V1) and from the navigation’s start (which adds the page’s own script and the server reading the log and streaming it).`,
      header: [
        'paint: from the snapshot / from navigation',
        'interactive: from the snapshot / from navigation',
        'trace of the call session: drawn / rows',
      ],
      rows: [
        [
          `${interactives.map((run) => (run.paint - run.received).toFixed(0)).join(', ')} / ${interactives.map((run) => run.paint.toFixed(0)).join(', ')} ms`,
          `${interactives.map((run) => (run.interactive - run.received).toFixed(0)).join(', ')} / ${interactives.map((run) => run.interactive.toFixed(0)).join(', ')} ms`,
          `${traces.map((run) => run.ms.toFixed(0)).join(', ')} ms / ${formatCount(traceRows)}`,
        ],
      ],
    },
    {
      title: 'Where the wait from the navigation goes',
      intro: `Medians of the same ${REPS} fresh pages, on the ${sizeText} session, from the page’s own marks: the page’s script until it asks for the session (\`${MARKS.streamAsked}\`), the server reading the log and encoding the snapshot until the stream’s first line is in (\`${MARKS.streamStarted}\`), the snapshot’s transfer until its last part is (\`${MARKS.received}\`), then V4.`,
      header: [
        'page’s script',
        'server: read and encode',
        'transfer',
        'snapshot to interactive (V4)',
        'interactive from navigation (V6)',
      ],
      rows: [
        [
          stretch((run) => run.asked),
          stretch((run) => run.started - run.asked),
          stretch((run) => run.received - run.started),
          stretch((run) => run.interactive - run.received),
          stretch((run) => run.interactive),
        ],
      ],
    },
    {
      title: `Live appends on the ${sizeText} session`,
      header: ['appends', 'median', 'max'],
      rows: [
        [
          String(appendMs.length),
          `${append.toFixed(2)} ms`,
          `${Math.max(...appendMs).toFixed(2)} ms`,
        ],
      ],
    },
  ];
  const report: Report = {
    section: 'viewer',
    intro: [
      'The web viewer (`palimpsest view`) in Debian’s chromium, headless, driven by playwright-core: how long the page takes from the arrival of a session’s snapshot to the first render of its model view, beside the floor of `JSON.parse` of the same snapshot parts, every event in full, in a fresh page, and how long applying one live batch takes on a 100k-event session.',
    ],
    runtime: smoke ? 'seconds' : 'about 2–3 minutes',
    reproduce: [
      'Needs /usr/bin/chromium (or PALIMPSEST_CHROMIUM). Ratios move by tens of percent on a shared VM. `node --import tsx bench/viewer-profile.ts --profile` prints the phases of single loads, Chromium’s self times and the collections of one load (build the page with `PALIMPSEST_VIEWER_DEBUG=1 node scripts/bundle-viewer.mjs` for readable names).',
    ],
    machine: machineInfo(),
    summary,
    details,
    method: [
      'Workload: turns of a user message, a step with a tool call (a stream chunk, the assistant message citing it, the tool call and its result) and a streamed answer, 14 events per turn of which 2 are stream chunks (8% of the snapshot’s bytes), recorded to a JSONL store; the viewer server runs in the benchmark’s process over a read-only store.',
      `The snapshot: the event stream’s first line says how many parts follow; each part is a line of events, about ${SNAPSHOT_PART_CHARS / 1024}K characters of JSON (an event longer than that is a part alone). The page parses each part as it arrives, while the next ones are still on their way, and seeds its session from the whole log once the last part is parsed.`,
      `First render: the page’s work on the snapshot, in the floor’s terms: the JSON.parse of every part as sent (the page’s measures \`${MARKS.partParsed}\`; all but the last part’s are done before the last part arrives, while the rest is coming, and are added in), then from \`${MARKS.received}\`, when the snapshot’s last part is complete (its pieces decoded and joined, before its JSON.parse), to \`${MARKS.firstRender}\` when the model view’s rows in sight are in the DOM: the last part’s parse, seeding a core \`Session\` (every surface rule and every event’s data checked, every event deeply frozen, \`seedMode: 'parsed'\`), the model rows, the painted rows and the first layout the list forces. The stats line and the time-travel bar are drawn after the mark. Layout and paint after the mark are not included. V3, V4 and V6 are the page’s wait as a person has it, from the last part’s arrival or the navigation: the parses done while parts were still coming are not in V3 and V4.`,
      'What the first render holds versus the floor: the snapshot carries each finished stream chunk (one a later message cites) as an elided stub, `{elided: {bytes}}`, which the model view never reads; the page fetches the bodies (`/api/sessions/ID/chunks`) after the mark, for the raw log and the detail pane. The floor parses every event in full.',
      `Floor: \`JSON.parse\` of the same parts with every event in full (the benchmark reads the parts and the chunk bodies from the server and puts each body in place of its stub), each part’s value kept until all are parsed as the page keeps them, in a fresh page of the viewer (its session list open, no session), once per load, median of ${REPS}; column “repeated”: the same parse three more times in that page, median. The goal is judged against the fresh page’s parse, the state the page is in when it opens a session; V1w and the “repeated” column give the repeated parse beside it, with no goal.`,
      `Opened again: after each timed load the page goes to its session list and back to the session ${REOPENS} times, as a person switching sessions does; the column gives the last of these loads: code the page has run before, a heap that has held the session.`,
      `Live append: a user message appended through a second store (a writer), ${APPENDS} times, one at a time; the page’s measure \`${MARKS.append}\` covers \`Session.append\` of the batch, the new rows and the repaint of the rows in sight, stats and time-travel bar. The latency of the store’s watch (file watching) is not in it.`,
      'First meaningful paint: the first frame painted after the first render’s mark (the model view’s rows in the DOM): a script the benchmark adds before the page’s own (`addInitScript`) observes the mark, and marks the moment a task queued from the next frame’s animation callback runs, which is after that frame is painted. V3 measures it from the snapshot’s arrival (`palimpsest:snapshot-received`, the origin of V1): the first render and that frame; the details give it from the navigation’s start too (the page’s script, the server reading the log, the event stream).',
      'Interactive: the page answers a person. At the paint, the same script queues a task that presses `2` (a `keydown` on the document, the transcript tab), and marks the first frame painted after the page switched views; interactive (V4) is that mark, from the snapshot’s arrival as V1 and V3 (the details: from the navigation’s start too). The work the page does after the first render (the stats, the time-travel bar, the request for the chunk bodies) is ahead of the key in the queue, as it would be for a person’s key.',
      `The trace: a session of ${formatCount(CALLS)} model calls (${formatCount(CALLS / 2)} turns of a tool call and a streamed answer, events 40 ms apart, one request header), opened in a fresh page; once its first render is done, \`5\` is pressed and the time runs until the first frame painted after the panel was drawn: the trace read from the log, every turn opened (at most 2,500 rows at once; larger sessions open their last turn only and draw the others when opened), a row per call and tool with its bar, tokens and cost.`,
      `Interactive from the navigation (V6): the same pages’ \`bench:interactive\` from the navigation’s start. Its goal is V4’s 500 ms read from the navigation, what a person opening the session waits for; the table “Where the wait from the navigation goes” splits it by the page’s marks \`${MARKS.streamAsked}\` (the page’s script has run) and \`${MARKS.streamStarted}\` (the stream’s first line, which the server sends once it has read the log and encoded every part).`,
      'Source: `bench/viewer.ts`, `bench/viewer-interactive.ts`.',
    ],
    notes: [
      'Where the wait before the snapshot went, measured on 2026-12-07 (load average 3.6, the server alone in a Node process over the same JSONL store): reading the 100k-event log with finished chunks elided 213–228 ms, encoding its 31 parts 93–99 ms; the session list’s counts of the store’s four sessions 171–214 ms (146–152 ms of it the 100k log); verify 619–750 ms; the tree 2–4 ms. Traced in the page (load average 3.7): the page asked for the session list as its script ran, and the server’s reading of every log for its counts interleaved with the stream’s reading of the opened one, which took 938–1,056 ms instead of about 220 ms, and the list 1.4–1.8 s; the snapshot arrived 1.7–2.1 s after the navigation. Now the page asks for the list once the snapshot is in (or the stream failed), the server keeps each session’s counts while the store’s listing (last write, size, event count) says its log is unchanged, and keeps verify’s result by the head the page names (`?seq=`), so a session opened again is verified without a second read of its log. Still before the snapshot: the page’s script until it asks (since 2026-12-08 its first module asks, before the rest of the bundle is evaluated; it used to run the whole bundle first), the server’s read of the log and its re-encoding (the store parses each line and the server stringifies it again), and the transfer. Traced again on 2026-12-08 (load average 5, the server’s own timestamps, 3 loads): the stream’s request reached the server as the page asked; reading the log took 336–744 ms and encoding its parts 190–360 ms, the rest of the “server” stretch is the first line’s way to the page. In an earlier trace the previous page’s chunks route (a full read of the same log, asked after that page’s first render) ran on into the next page’s first second, and that stream’s read began 1.9 s after its page asked: back-to-back loads pay for each other’s leftovers.',
      'The key that V4 presses (`2`, the transcript) built core’s `Session.transcript()` over the whole log (every entry with its message, and a replay of the log) on every switch: about 260 ms of a profiled load, most of the time between the paint and the answered key. The page now keeps the transcript’s rows, built the first time from the events’ own surface ops (without building the entries) and grown by each batch, and reads whether a row is greyed from the surface when the row is painted; the conversation’s index the same way. A first switch costs one pass over the log’s types, later ones only the events since.',
      'Each snapshot part is parsed as it arrives (since 2026-12-08): the parse overlaps the transfer, and what is left after the last part is its own parse, the seed and the views. V1 adds the earlier parts’ parses back in, so it still compares the page’s whole work with the floor’s parse.',
      'Not done: the chunks route reads the whole log again after the first render (about 240 ms of server time at 100k events).',
      `The machine’s load average (1 minute) was ${loadAtStart.toFixed(1)} when this run began and ${(loadavg()[0] ?? Number.NaN).toFixed(1)} when it ended, on ${availableParallelism()} cores: above about 1, other work shares the cores and every figure here grows.`,
      'Every figure here moves by tens of percent between runs on this shared 2-core VM: in the runs of 2026-12-04 (the measurement notes below) the first render of 100k events read 245–334 ms and the floor in a fresh page 103–143 ms, and the ratio 2.18–3.26×: 2.18–2.28× in four runs spaced out on a quiet machine, up to 3.26× back to back. Compare runs on a quiet machine before reading much into V1.',
      'Small sessions are far above 2×: about 15–30 ms of the first render is fixed (the first layout of the page, which measuring the list forces, and building the views), which dominates at 1k and 10k events. The goal is stated for 100k.',
      'Where the first render goes at 100k events (the column “of it”): the page’s JSON.parse of the parts, at about the floor’s cost or above it, though it parses 6% less text (why it reads slower in most loads is not established; the measurement notes below have what was tried), then core seeding the `Session` (every event admitted: its data walked and deeply frozen, about 380,000 objects and arrays, and its shape checked; then the fold), then the views. The column “opened again” shows what the seed costs the page once its code has run, about half of the first time. The 2× goal needs seed and views together to cost no more than the floor’s parse; the first time they cost about 1.15–1.2× of it on a quiet machine, opened again about 0.6×.',
      'What makes the first seed dear is V8’s optimising compiler, measured: in alternating runs of `node --import tsx bench/viewer-profile.ts --loads 6` with and without `--js-flags=--no-opt` (the page’s V8 without TurboFan, its baseline and mid-tier compilers still on), the first seed took 80–104 ms without TurboFan against 92–133 ms with it. Traced with `--js-flags="--trace-opt --trace-deopt"`, TurboFan compiles the seed’s functions while the seed runs (about 70 ms of compile work on the VM’s 2 cores; the largest jobs are the admission fast path and the seed loop’s on-stack replacement, compiled twice after a deoptimisation), and within one first seed its code does not earn back what compiling it costs. A page cannot choose V8’s flags, and what the seed does (every check, every freeze) is core’s contract.',
    ],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
  if (smoke) return;
  const target = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/benchmarks.md');
  writeSection(target, 'viewer', renderMarkdown(report));
  progress(`wrote the viewer section of ${target}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
