/**
 * The viewer benchmark (`npm run bench:viewer`): in Debian's chromium, headless, the time from
 * the snapshot's arrival to the first render of the model view (the page's own performance
 * marks: JSON.parse, core's seeding with every surface rule, the fold, the rows in sight),
 * beside the floor of `JSON.parse` of the same snapshot, every event in full, in the same page; the peak JS heap
 * while it loads; and the time to apply one live append to a 100k-event session.
 */
import { availableParallelism, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { Session } from '../src/core/index.js';
import type { SessionStore } from '../src/store/index.js';
import { MARKS } from '../src/viewer/protocol.js';
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
import { withViewer, workload } from './viewer-workload.js';

const SIZES = [1_000, 10_000, 100_000] as const;
const REPS = 3;
const APPENDS = 7;
const startedNs = process.hrtime.bigint();
const progress = progressReporter(startedNs);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

interface Load {
  readonly renderMs: number;
  /** Where the first render's time went: the page's JSON.parse, core's seeding, the views. */
  readonly phases: { readonly parse: number; readonly seed: number; readonly views: number };
  readonly parseMs: number;
  readonly peakHeap: number;
  /** The full snapshot as JSON (what the floor parses). */
  readonly snapshotBytes: number;
  /** The snapshot line the page parsed: finished chunks as stubs. */
  readonly sentBytes: number;
}

/**
 * Opens session `id` in a fresh page: the page's marks, the parse floor and, with `sampleHeap`,
 * the heap peak. The heap is sampled over the debugging protocol every 10 ms, which stalls the
 * page it measures, so the timed loads run without it and the peak comes from loads of its own.
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
  const [received, parsed, seeded, rendered] = await page.evaluate(
    (names) => names.map((name) => performance.getEntriesByName(name)[0]?.startTime ?? Number.NaN),
    [MARKS.received, MARKS.parsed, MARKS.seeded, MARKS.firstRender],
  );
  const renderMs = (rendered as number) - (received as number);
  const phases = {
    parse: (parsed as number) - (received as number),
    seed: (seeded as number) - (parsed as number),
    views: (rendered as number) - (seeded as number),
  };
  // The floor, in the same page: JSON.parse of the snapshot with every event in full. The line
  // the page parsed carries finished chunks as stubs; their bodies come from the chunks route
  // and are put back in place, so the floor parses the whole log, as the stored JSON holds it.
  const { parseMs, snapshotBytes, sentBytes } = await page.evaluate(
    async ({ path, chunksPath, reps }) => {
      const controller = new AbortController();
      const response = await fetch(path, { signal: controller.signal });
      const reader = (response.body as ReadableStream<Uint8Array>)
        .pipeThrough(new TextDecoderStream())
        .getReader();
      const pieces: string[] = [];
      for (;;) {
        const { value } = await reader.read();
        if (value === undefined) break;
        pieces.push(value);
        if (value.includes('\n')) break;
      }
      controller.abort();
      const sent = pieces.join('').split('\n')[0] ?? '';
      const snapshot = JSON.parse(sent) as { events: { seq: number }[] };
      const { chunks } = (await (await fetch(chunksPath)).json()) as {
        chunks: { seq: number }[];
      };
      const bodies = new Map(chunks.map((chunk) => [chunk.seq, chunk]));
      snapshot.events = snapshot.events.map((event) => bodies.get(event.seq) ?? event);
      const text = JSON.stringify(snapshot);
      const times: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        const start = performance.now();
        JSON.parse(text);
        times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      return {
        parseMs: times[Math.floor(times.length / 2)] ?? Number.NaN,
        snapshotBytes: text.length,
        sentBytes: sent.length,
      };
    },
    {
      path: `/api/sessions/${encodeURIComponent(id)}/events${new URL(url).search}`,
      chunksPath: `/api/sessions/${encodeURIComponent(id)}/chunks${new URL(url).search}`,
      reps: REPS,
    },
  );
  await cdp.detach();
  return { renderMs, parseMs, peakHeap, snapshotBytes, sentBytes, phases };
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
  const rows: string[][] = [];
  const loads = new Map<number, Load>();
  let appendMs: number[] = [];
  await withViewer([...sessions.values()], async ({ url, browser, writer }) => {
    progress('recorded the sessions');
    for (const size of SIZES) {
      const session = sessions.get(size) as Session;
      const runs: Load[] = [];
      const heapRuns: Load[] = [];
      for (let rep = 0; rep < REPS; rep++) {
        for (const sampleHeap of [false, true]) {
          const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
          (sampleHeap ? heapRuns : runs).push(await load(page, url, session.id, sampleHeap));
          if (size === 100_000 && rep === REPS - 1 && !sampleHeap)
            appendMs = await liveAppends(page, writer, session, APPENDS);
          await page.close();
        }
      }
      const result: Load = {
        renderMs: median(runs.map((run) => run.renderMs)),
        parseMs: median(runs.map((run) => run.parseMs)),
        peakHeap: Math.max(...heapRuns.map((run) => run.peakHeap)),
        snapshotBytes: runs[0]?.snapshotBytes ?? 0,
        sentBytes: runs[0]?.sentBytes ?? 0,
        phases: {
          parse: median(runs.map((run) => run.phases.parse)),
          seed: median(runs.map((run) => run.phases.seed)),
          views: median(runs.map((run) => run.phases.views)),
        },
      };
      loads.set(size, result);
      rows.push([
        formatCount(session.seq - (size === 100_000 ? APPENDS : 0)),
        `${formatBytes(result.snapshotBytes)} / ${formatBytes(result.sentBytes)}`,
        `${result.parseMs.toFixed(1)} ms`,
        `${result.renderMs.toFixed(1)} ms`,
        formatRatio(result.renderMs / result.parseMs),
        `${result.phases.parse.toFixed(0)} / ${result.phases.seed.toFixed(0)} / ${result.phases.views.toFixed(0)} ms`,
        formatBytes(result.peakHeap),
      ]);
      progress(
        `${formatCount(size)} events: first render ${result.renderMs.toFixed(1)} ms, JSON.parse ${result.parseMs.toFixed(1)} ms`,
      );
    }
  });
  const big = loads.get(100_000) as Load;
  const append = median(appendMs);
  const summary: SummaryRow[] = [
    {
      id: 'V1',
      what: 'first render of the model view, 100k events',
      ours: `${big.renderMs.toFixed(0)} ms`,
      floor: `${big.parseMs.toFixed(0)} ms (JSON.parse)`,
      ratio: formatRatio(big.renderMs / big.parseMs),
      goal: '≤ 2×',
      verdict: verdict(big.renderMs <= 2 * big.parseMs),
    },
    {
      id: 'V2',
      what: 'one live append applied, 100k events',
      ours: `${append.toFixed(2)} ms`,
      floor: '16.7 ms (one frame)',
      ratio: formatRatio(append / 16.7),
      goal: '≤ 1× (16 ms)',
      verdict: verdict(append <= 16),
    },
  ];
  const details: DetailTable[] = [
    {
      title: 'First render by session size',
      intro: `Medians of ${REPS} page loads; heap is the highest \`JSHeapUsedSize\` sampled every 10 ms while loading, in ${REPS} more loads of its own (the sampling stalls the page, so the timed loads run without it).`,
      header: [
        'events',
        'snapshot: full / sent',
        'JSON.parse of full (floor)',
        'first render',
        'render / parse',
        'of it: parse / seed / views',
        'peak JS heap',
      ],
      rows,
    },
    {
      title: 'Live appends on the 100k-event session',
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
      'The web viewer (`palimpsest view`) in Debian’s chromium, headless, driven by playwright-core: how long the page takes from the arrival of a session’s snapshot to the first render of its model view, beside the floor of `JSON.parse` of the same snapshot, every event in full, in the same page, and how long applying one live batch takes on a 100k-event session.',
    ],
    runtime: 'about 1–2 minutes',
    reproduce: [
      'Needs /usr/bin/chromium (or PALIMPSEST_CHROMIUM). Ratios move by tens of percent on a shared VM. `node --import tsx bench/viewer-profile.ts --profile` prints the phases of single loads, Chromium’s self times and the collections of one load (build the page with `PALIMPSEST_VIEWER_DEBUG=1 node scripts/bundle-viewer.mjs` for readable names).',
    ],
    machine: machineInfo(),
    summary,
    details,
    method: [
      'Workload: turns of a user message, a step with a tool call (a stream chunk, the assistant message citing it, the tool call and its result) and a streamed answer, 14 events per turn of which 2 are stream chunks (8% of the snapshot’s bytes), recorded to a JSONL store; the viewer server runs in the benchmark’s process over a read-only store.',
      `First render: the page’s own marks, \`${MARKS.received}\` when the snapshot line is complete (its pieces decoded and joined, before its JSON.parse) to \`${MARKS.firstRender}\` when the model view’s rows in sight are in the DOM. In between: JSON.parse of the line as sent, seeding a core \`Session\` (every surface rule and every event’s data checked, every event deeply frozen, \`seedMode: 'parsed'\`), the model rows, the painted rows and the first layout the list forces. The stats line and the time-travel bar are drawn after the mark in the same task. Layout and paint after the mark are not included.`,
      'What the first render holds versus the floor: the snapshot line carries each finished stream chunk (one a later message cites) as an elided stub, `{elided: {bytes}}`, which the model view never reads; the page fetches the bodies (`/api/sessions/ID/chunks`) after the mark, for the raw log and the detail pane. The floor parses every event in full.',
      'Floor: `JSON.parse` of the snapshot with every event in full, in the same page, median of three: the page fetches the snapshot line and the chunk bodies again and puts each body in place of its stub, which gives the text the snapshot line was before stubs (column “snapshot: full / sent”).',
      `Live append: a user message appended through a second store (a writer), ${APPENDS} times, one at a time; the page’s measure \`${MARKS.append}\` covers \`Session.append\` of the batch, the new rows and the repaint of the rows in sight, stats and time-travel bar. The latency of the store’s watch (file watching) is not in it.`,
      'Source: `bench/viewer.ts`.',
    ],
    notes: [
      `The machine’s load average (1 minute) was ${loadAtStart.toFixed(1)} when this run began and ${(loadavg()[0] ?? Number.NaN).toFixed(1)} when it ended, on ${availableParallelism()} cores: above about 1, other work shares the cores and every figure here grows.`,
      'The floor itself is noisy on a shared VM: JSON.parse of the same 16 MiB snapshot has measured from under 100 ms to 390 ms between runs on this machine, and the ratio moves with it. Compare runs on a quiet machine before reading much into V1.',
      'Small sessions are far above 2×: about 15–30 ms of the first render is fixed (the first layout of the page, which measuring the list forces, and building the views), which dominates at 1k and 10k events. The goal is stated for 100k.',
      'Where the first render goes at 100k events (the column “of it”): the page’s own JSON.parse (of a little less than the floor parses; on a loaded machine it has read above the floor, the floor being the median of three parses in a page that has warmed up; not established further), then core seeding the `Session` (the admission of every event: its data walked and deeply frozen, about half of the seeding’s own time in a profile, and its shape checked; then the fold), which also pays for the major garbage collection that the parse’s 30 MB of new objects start and that cannot run until JSON.parse returns (about 40 ms of mark-compact in a trace), then the views (the model rows and the rows in sight, the first layout). With the views at under 20 ms, the 2× goal needs the seeding, collection included, to cost no more than the parse; it costs about 1.2–1.5× the parse, and the page must validate and freeze the log (it folds with core, and a log from a store is untrusted).',
    ],
    durationSeconds: Number(process.hrtime.bigint() - startedNs) / 1e9,
  };
  process.stdout.write(`\n${renderText(report)}\n`);
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
