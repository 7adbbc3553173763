/**
 * A session written to attack its reader (script tags, onerror attributes, javascript: links,
 * SVG with script, a string that closes the export's data element, a 1 MB line, control and
 * bidi characters, markup in the session id) renders inert, served and exported: no dialog, no
 * console error, no uncaught exception, no navigation, no popup; no element or attribute from
 * the session reaches the DOM, and deceptive characters show as visible escapes.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startViewerServer } from '../../src/viewer/index.js';
import { binary } from '../cli/helpers.js';
import {
  describeBrowser,
  expectNoIncidents,
  guardedPage,
  type PageIncidents,
  screenshot,
  useBrowserAndStore,
} from './browser.js';
import { HOSTILE, HOSTILE_ID, recordHostile } from './sessions.js';

/** Selects every row of every view, and shows every long text whole. */
async function visitEverything(page: Page): Promise<void> {
  for (const view of ['model', 'transcript', 'raw']) {
    await page.locator(`#tabs [data-view="${view}"]`).click();
    await page.locator('.row').first().waitFor();
    const keys = await page
      .locator('.row')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')));
    for (const key of keys) {
      await page.locator(`.row[data-key="${key}"]`).click();
      for (const more of await page.locator('#detail .show-all').all()) await more.click();
      // Markup in the pane would have become elements by now; a script would have run.
      await page.waitForTimeout(20);
    }
    await page.keyboard.press('Enter'); // unfold what can be unfolded, and look again
  }
  // The Session view names the session (markup) in its tree and the tools its calls ran.
  await page.locator('#tabs [data-view="session"]').click();
  await page.locator('[data-testid="tree-current"]').waitFor();
  expect(await page.locator('[data-testid="tree-current"] strong').textContent()).toBe(HOSTILE_ID);
  expect(await page.locator('[data-testid="tool-calls"]').textContent()).toContain('read_file');
  await page.locator('[data-testid="sp-verify"] .sp-verdict').waitFor();
  expect(await injected(page)).toEqual([]);
  await visitTrace(page);
}

/** Selects every call and tool of the trace, shows each request form and every long text whole. */
async function visitTrace(page: Page): Promise<void> {
  await page.locator('#tabs [data-view="trace"]').click();
  const rows = page.locator('.trace-row');
  await rows.first().waitFor();
  for (let index = 0; index < (await rows.count()); index++) {
    await rows.nth(index).click();
    for (const wire of await page.locator('[data-wire]').all()) {
      await wire.click();
      await page.locator('[data-testid="trace-request-body"] pre').waitFor();
    }
    for (const more of await page.locator('.trace-detail .show-all').all()) await more.click();
    await page.waitForTimeout(20);
  }
  expect(await injected(page)).toEqual([]);
  const text = (await page.locator('#panel').textContent()) ?? '';
  expect(text).toContain('<script>alert("script tag")</script>');
  for (const raw of ['\u202e', '\u202c', '\u2066', '\u2069', '\u0007', '\u001b', '\u009b']) {
    expect(text.includes(raw), `U+${raw.charCodeAt(0).toString(16)} in the trace`).toBe(false);
  }
}

/** The little of the DOM the check below reads (the tests compile without the DOM library). */
interface SeenElement {
  readonly tagName: string;
  readonly outerHTML: string;
  getAttributeNames(): string[];
  getAttribute(name: string): string | null;
}

/** Elements and attributes the session tried to create, found anywhere in the document. */
function injected(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const document = (
      globalThis as unknown as {
        document: {
          querySelectorAll(selector: string): ArrayLike<SeenElement> & Iterable<SeenElement>;
        };
      }
    ).document;
    const found: string[] = [];
    const scripts = document.querySelectorAll('script:not([type="application/json"])');
    if (scripts.length !== 1) found.push(`${scripts.length} executable script elements`);
    for (const element of document.querySelectorAll(
      'img, svg, iframe, object, embed, form, style:not(head style), link:not(head link)',
    )) {
      found.push(element.outerHTML.slice(0, 80));
    }
    for (const element of document.querySelectorAll('*')) {
      for (const attribute of element.getAttributeNames()) {
        if (attribute.startsWith('on')) found.push(`${element.tagName} ${attribute}`);
      }
      const href = element.getAttribute('href');
      if (href !== null && !/^(https?:|#)/.test(href) && element.tagName !== 'LINK')
        found.push(`href ${href}`);
    }
    return found;
  });
}

/** Raw deceptive characters, which the page must show as escapes. */
const RAW = ['\u202e', '\u202c', '\u2066', '\u2069', '\u0007', '\u001b', '\u009b'];

/**
 * Opens the conversation with every fold open and every long text whole, and checks it while it
 * is shown (the list views replace it when they come back).
 */
async function expectConversationInert(page: Page, incidents: PageIncidents): Promise<void> {
  await page.locator('#tabs [data-view="conversation"]').click();
  const conversation = page.locator('[data-testid="conversation"]');
  await conversation.locator('.message').first().waitFor();
  for (const summary of await conversation.locator('details:not([open]) > summary').all()) {
    await summary.click();
  }
  for (const more of await conversation.locator('.show-all').all()) await more.click();
  await page.waitForTimeout(20);
  await screenshot(page, 'hostile-conversation');
  expect(await injected(page)).toEqual([]);
  const text = (await conversation.textContent()) ?? '';
  expect(text).toContain('invoice\\u202eexe.txt');
  for (const raw of RAW) {
    expect(text.includes(raw), `U+${raw.charCodeAt(0).toString(16)} in the conversation`).toBe(
      false,
    );
  }
  expect(text).toContain('<script>alert("script tag")</script>');
  // The tool's name and its arguments are text on the card.
  expect(await conversation.locator('.tool-name').first().textContent()).toBe(
    `→ tool${HOSTILE.script}`,
  );
  const hrefs = await conversation
    .locator('a[href]')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')));
  expect(new Set(hrefs)).toEqual(new Set(['https://example.com/docs']));
  expectNoIncidents(incidents);
}

/** Shows the answer, whose markdown holds every trick, and checks the whole page. */
async function expectInert(page: Page, incidents: PageIncidents): Promise<void> {
  await page.locator('#tabs [data-view="model"]').click();
  await page.locator('.row.kind-message', { hasText: 'assistant' }).first().click();
  expect(await page.locator('#detail a[href]').first().getAttribute('href')).toBe(
    'https://example.com/docs',
  );
  expect(await injected(page)).toEqual([]);
  // What the page shows (the export's data element sits outside <main>).
  const text = (await page.locator('main').textContent()) ?? '';
  // The bidi override and the control characters are on screen as escapes, not in effect.
  expect(text).toContain('invoice\\u202eexe.txt');
  expect(text).toContain('bell\\u0007');
  for (const raw of RAW) {
    expect(text.includes(raw), `U+${raw.charCodeAt(0).toString(16)} on screen`).toBe(false);
  }
  // The markup is there as text.
  expect(text).toContain('<script>alert("script tag")</script>');
  expect(text).toContain('onerror=alert("onerror")');
  // The only link the session keeps is the http(s) one.
  expect(
    await page
      .locator('#detail a[href]')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
  ).not.toContain('javascript:alert("javascript link")');
  expectNoIncidents(incidents);
}

describeBrowser('a hostile session in the viewer', () => {
  const setup = useBrowserAndStore(async (storeUrl) => {
    await recordHostile(storeUrl);
  });

  it('renders inert when served', async () => {
    const { storeUrl, browser } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const server = await startViewerServer({ store });
    try {
      const { page, incidents } = await guardedPage(browser);
      await page.goto(`${server.url}#/s/${encodeURIComponent(HOSTILE_ID)}`);
      await page.locator('#session-list li.open').waitFor();
      // The list marks the session open before the session itself has loaded and titled the page.
      await expect.poll(() => page.locator('#title').textContent()).toBe(HOSTILE_ID);
      await visitEverything(page);
      await screenshot(page, 'hostile-served');
      await expectConversationInert(page, incidents);
      await expectInert(page, incidents);
      await page.close();
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('renders inert from an HTML export, whose data cannot close its element', async () => {
    const { dir, storeUrl, browser } = setup;
    const file = join(dir, 'hostile.html');
    // Megabytes of output: straight into the file, past the pipe buffer of a captured run.
    const out = openSync(file, 'w');
    const exported = spawnSync(
      process.execPath,
      [binary, 'export', HOSTILE_ID, '--format', 'html', '--store', storeUrl],
      { cwd: dir, stdio: ['ignore', out, 'pipe'] },
    );
    closeSync(out);
    expect(exported.status).toBe(0);
    // Only the page's own two script elements: the session's `</script>` stayed inside the JSON.
    expect(readFileSync(file, 'utf8').match(/<script/g)).toHaveLength(2);
    const { page, incidents } = await guardedPage(browser);
    await page.goto(pathToFileURL(file).href);
    await visitEverything(page);
    await screenshot(page, 'hostile-export');
    await expectConversationInert(page, incidents);
    await expectInert(page, incidents);
    await page.close();
  });
});
