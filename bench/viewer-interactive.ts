/**
 * The viewer benchmark's figures of what a person waits for: the first meaningful paint and the
 * time to interactive of a session's page, and the time to draw the trace of a session of many
 * model calls. Each is read in the page from its own clock (`performance.now()`, whose origin is
 * the navigation's start), by a script the benchmark adds before the page's own runs.
 */
import type { Browser, Page } from 'playwright-core';
import { MARKS } from '../src/viewer/protocol.js';

/** What {@link paintAndInteractive} measures, in ms from the navigation's start. */
export interface Interactive {
  /** The first frame after the model view's rows went into the DOM. */
  readonly paint: number;
  /** The first frame after a tab switch, asked for at `paint`, was answered. */
  readonly interactive: number;
  /** When the snapshot's last part arrived (`MARKS.received`), the origin of the first render. */
  readonly received: number;
  /** When the page's script, having run, asked for the session's stream (`MARKS.streamAsked`). */
  readonly asked: number;
  /** When the stream's first line came: the server had read the log and encoded the snapshot. */
  readonly started: number;
}

/**
 * Installed before the page's script: when the first render's mark is set, waits for the next
 * frame to be painted (a task queued from the frame's animation callback runs after it), marks
 * that, then presses `2` (the transcript tab) as a queued task, as a key press would be, and
 * marks the first frame painted after the page answered it. As a string: the benchmark's
 * functions would reach the page wrapped in tsx helpers the page does not have.
 */
const OBSERVER = `(() => {
  const afterFrame = (then) => requestAnimationFrame(() => setTimeout(then, 0));
  new PerformanceObserver((list, observer) => {
    if (!list.getEntries().some((entry) => entry.name === ${JSON.stringify(MARKS.firstRender)})) return;
    observer.disconnect();
    afterFrame(() => {
      performance.mark('bench:painted');
      setTimeout(() => {
        document.dispatchEvent(new KeyboardEvent('keydown', { key: '2', bubbles: true }));
        afterFrame(() => performance.mark('bench:interactive'));
      }, 0);
    });
  }).observe({ entryTypes: ['mark'] });
})();`;

/** Opens session `id` in a fresh page of `browser` and reads its paint and interactive times. */
export async function paintAndInteractive(
  browser: Browser,
  url: string,
  id: string,
): Promise<Interactive> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    await page.addInitScript({ content: OBSERVER });
    await page.goto(`${url}#/s/${encodeURIComponent(id)}`);
    // A function, not a string: the page's CSP forbids evaluating a string in it.
    await page.waitForFunction(
      (name) => performance.getEntriesByName(name).length > 0,
      'bench:interactive',
      { timeout: 300_000 },
    );
    const names = [
      'bench:painted',
      'bench:interactive',
      MARKS.received,
      MARKS.streamAsked,
      MARKS.streamStarted,
    ];
    const [paint, interactive, received, asked, started] = (await page.evaluate(
      `${JSON.stringify(names)}.map((name) => performance.getEntriesByName(name)[0].startTime)`,
    )) as [number, number, number, number, number];
    const view = await page.evaluate('document.body.dataset.view');
    if (view !== 'transcript') throw new Error(`the tab switch was not answered: ${String(view)}`);
    return { paint, interactive, received, asked, started };
  } finally {
    await page.close();
  }
}

/**
 * Opens session `id` in a fresh page, waits for its first render, then presses `5` and returns
 * the ms until the first frame painted after the trace was drawn, and how many rows it drew.
 */
export async function traceDraw(
  browser: Browser,
  url: string,
  id: string,
): Promise<{ readonly ms: number; readonly rows: number }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    await page.goto(`${url}#/s/${encodeURIComponent(id)}`);
    await page.waitForFunction(
      (name) => performance.getEntriesByName(name).length > 0,
      MARKS.firstRender,
      { timeout: 300_000 },
    );
    return await timedKey(page);
  } finally {
    await page.close();
  }
}

function timedKey(page: Page): Promise<{ ms: number; rows: number }> {
  return page.evaluate(`new Promise((done) => {
    const start = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', { key: '5', bubbles: true }));
    requestAnimationFrame(() => setTimeout(() => done({
      ms: performance.now() - start,
      rows: document.querySelectorAll('.trace-row').length,
    }), 0));
  })`) as Promise<{ ms: number; rows: number }>;
}
