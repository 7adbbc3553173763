/**
 * Where the viewer's first render of a 100k-event session goes (not a benchmark: a tool for
 * reading one). Opens the session in Debian's chromium once per load and prints the page's
 * phases from its own marks; with `--profile`, Chromium's sampling profiler (CDP `Profiler`)
 * over one more load, as self time by function, and the garbage collections the load's trace
 * recorded (`V8.GC*`, `MajorGC`, `MinorGC`) with their time relative to the snapshot's arrival.
 *
 *   node --import tsx bench/viewer-profile.ts [--loads N] [--events N] [--profile] [--js-flags F]
 *
 * `--js-flags` hands V8 flags to the page (`--js-flags=--no-opt` runs it without the optimising
 * compiler, which tells what tiering costs a first load).
 *
 * Build the page unminified first for readable function names:
 * `PALIMPSEST_VIEWER_DEBUG=1 node scripts/bundle-viewer.mjs` (and `npm run build` after).
 */
import { parseArgs } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { MARKS } from '../src/viewer/protocol.js';
import { loadMarks, readMarks, withViewer, workload } from './viewer-workload.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface Profile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: CallFrame }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}
interface TraceEvent {
  readonly name: string;
  readonly cat: string;
  readonly ph: string;
  readonly ts: number;
  readonly dur?: number;
}

async function open(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url);
  await page.waitForFunction(
    (mark) => performance.getEntriesByName(mark).length > 0,
    MARKS.firstRender,
    { timeout: 120_000 },
  );
  return page;
}

/**
 * The phases of the load in `page`: parse (every part's, most done while the rest arrived),
 * seed and views, and the first render in the floor's terms (see `loadMarks`), in ms.
 */
async function phases(page: Page): Promise<string> {
  const { renderMs, phases } = loadMarks(await page.evaluate(readMarks, MARKS));
  const ms = (value: number): string => value.toFixed(0).padStart(4);
  return `parse ${ms(phases.parse)}  seed ${ms(phases.seed)}  views ${ms(phases.views)}  first render ${ms(renderMs)}`;
}

/** Self time by function, the heaviest first. */
function selfTimes(profile: Profile, top: number): string[] {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const frame = frames.get(id);
    const name = `${frame?.functionName || '(anonymous)'} ${frame?.url.split('/').pop() ?? ''}:${frame?.lineNumber ?? 0}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  return [...self]
    .filter(([name]) => !name.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => `${ms.toFixed(1).padStart(8)} ms  ${name}`);
}

/** The collections of a trace from the snapshot's arrival on, relative to it. */
function collections(events: readonly TraceEvent[]): string[] {
  const received = events.find((event) => event.name === MARKS.received)?.ts ?? 0;
  return events
    .filter(
      (event) =>
        event.ph === 'X' &&
        /^(MajorGC|MinorGC|V8\.GCFinalizeMC|V8\.GC_MC_MARK|V8\.GC_MC_EVACUATE)$/.test(event.name) &&
        event.ts >= received &&
        (event.dur ?? 0) > 1000,
    )
    .map(
      (event) =>
        `${((event.ts - received) / 1000).toFixed(1).padStart(8)} ms  ${((event.dur ?? 0) / 1000).toFixed(1).padStart(6)} ms  ${event.name}`,
    );
}

async function profiled(browser: Browser, url: string): Promise<void> {
  // A first page compiles the bundle, so the profiled load is a warm one, as in the benchmark.
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url.replace(/#.*$/, ''));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  const chunks: Buffer[] = [];
  await browser.startTracing(page, {
    categories: ['devtools.timeline', 'disabled-by-default-v8.gc', 'blink.user_timing'],
  });
  await cdp.send('Profiler.start');
  await page.goto(url);
  await page.waitForFunction(
    (mark) => performance.getEntriesByName(mark).length > 0,
    MARKS.firstRender,
    { timeout: 120_000 },
  );
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  chunks.push(await browser.stopTracing());
  process.stdout.write(`profiled load (the profiler slows it): ${await phases(page)}\n`);
  process.stdout.write(`self time by function:\n${selfTimes(profile, 30).join('\n')}\n`);
  const trace = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    traceEvents: TraceEvent[];
  };
  process.stdout.write(`collections:\n${collections(trace.traceEvents).join('\n')}\n`);
  await page.close();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      loads: { type: 'string', default: '5' },
      events: { type: 'string', default: '100000' },
      profile: { type: 'boolean', default: false },
      'js-flags': { type: 'string', default: '' },
    },
  });
  const session = workload('profiled', Number(values.events));
  await withViewer(
    [session],
    async ({ url, browser }) => {
      const target = `${url}#/s/profiled`;
      process.stdout.write(`${session.seq} events\n`);
      for (let load = 0; load < Number(values.loads); load++) {
        const page = await open(browser, target);
        process.stdout.write(`${await phases(page)}\n`);
        await page.close();
      }
      if (values.profile) await profiled(browser, target);
    },
    values['js-flags'],
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
