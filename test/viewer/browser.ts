/**
 * Headless Chromium for the viewer tests: Debian's chromium driven by playwright-core (no browser
 * download), a guard that records anything a hostile page could make happen (a dialog, a console
 * error, an uncaught exception, a navigation, a popup), and screenshots.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { binary, tempStores } from '../cli/helpers.js';

/** Where screenshots land: a gitignored folder, kept as CI artifacts. */
export const artifacts = join(import.meta.dirname, '.artifacts');
const docsDir = join(import.meta.dirname, '..', '..', 'docs', 'viewer');

/** Debian's chromium, or the browser `PALIMPSEST_CHROMIUM` names. */
const executablePath = process.env.PALIMPSEST_CHROMIUM ?? '/usr/bin/chromium';

/**
 * `describe` where the browser exists; elsewhere `describe.skip`, said loudly (`apt-get install
 * chromium` provides it). CI sets `PALIMPSEST_REQUIRE_CHROMIUM=1`: a missing browser fails there.
 */
export const describeBrowser: typeof describe = (() => {
  if (existsSync(executablePath)) return describe;
  const message = `no browser at ${executablePath}: the viewer's browser tests are skipped (apt-get install chromium, or set PALIMPSEST_CHROMIUM)`;
  if (process.env.PALIMPSEST_REQUIRE_CHROMIUM === '1') throw new Error(message);
  console.warn(`\n*** ${message} ***\n`);
  return describe.skip;
})() as typeof describe;

/** Launches Debian's chromium headless. */
export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}

/** What happened on a page that a passive viewer never causes. */
export interface PageIncidents {
  readonly dialogs: string[];
  readonly consoleErrors: string[];
  readonly pageErrors: string[];
  readonly navigations: string[];
  readonly popups: string[];
}

/** Fails unless nothing at all happened that a passive viewer never causes. */
export function expectNoIncidents(incidents: PageIncidents): void {
  expect(incidents).toEqual({
    dialogs: [],
    consoleErrors: [],
    pageErrors: [],
    navigations: [],
    popups: [],
  });
}

/**
 * Opens a page that records every incident. Navigations are counted after the first load; hash
 * changes (the page's own routing) are not navigations away.
 */
export async function guardedPage(
  browser: Browser,
): Promise<{ page: Page; incidents: PageIncidents }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const incidents: PageIncidents = {
    dialogs: [],
    consoleErrors: [],
    pageErrors: [],
    navigations: [],
    popups: [],
  };
  let loaded: string | undefined;
  page.on('dialog', (dialog) => {
    incidents.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') incidents.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => incidents.pageErrors.push(error.message));
  page.on('popup', (popup) => incidents.popups.push(popup.url()));
  page.on('framenavigated', (frame) => {
    if (frame !== page.mainFrame()) return;
    const url = frame.url().split('#')[0] ?? '';
    if (loaded === undefined) loaded = url;
    else if (url !== loaded) incidents.navigations.push(frame.url());
  });
  return { page, incidents };
}

/** Saves a screenshot as a test artifact, and into docs/viewer/ when PALIMPSEST_UPDATE_SCREENSHOTS=1. */
export async function screenshot(page: Page, name: string, forDocs = false): Promise<void> {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`) });
  if (forDocs && process.env.PALIMPSEST_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(docsDir, { recursive: true });
    await page.screenshot({ path: join(docsDir, `${name}.png`) });
  }
}

/** How long a describe block's store and browser may take to set up. */
const SETUP_TIMEOUT_MS = 60_000;

/** What {@link useBrowserAndStore} sets up for a describe block. */
export interface BrowserAndStore {
  readonly dir: string;
  readonly storeUrl: string;
  readonly browser: Browser;
}

/**
 * Registers the hooks of a describe block that needs a temporary JSONL store, filled by `fill`,
 * and a launched browser; both go when the block ends. Read the fields inside tests.
 */
export function useBrowserAndStore(
  fill: (storeUrl: string, dir: string) => Promise<void>,
): BrowserAndStore {
  const state: { dir: string; storeUrl: string; browser: Browser | undefined; remove(): void } = {
    dir: '',
    storeUrl: '',
    browser: undefined,
    remove: () => undefined,
  };
  beforeAll(async () => {
    const stores = tempStores();
    Object.assign(state, { dir: stores.dir, storeUrl: stores.urls.jsonl, remove: stores.remove });
    await fill(state.storeUrl, state.dir);
    state.browser = await launch();
    // Filling the store and starting Chromium share 2 cores with the rest of the suite on CI,
    // where they have taken more than vitest's default 10 s.
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await state.browser?.close();
    state.remove();
  });
  return {
    get dir() {
      return state.dir;
    },
    get storeUrl() {
      return state.storeUrl;
    },
    get browser() {
      if (state.browser === undefined) throw new Error('the browser is launched in beforeAll');
      return state.browser;
    },
  };
}

/** Starts `palimpsest view`, resolving with the URL it prints. */
export function serveView(
  storeUrl: string,
  id: string,
  cwd: string,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [binary, 'view', id, '--store', storeUrl], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      const url = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(out)?.[1];
      if (url !== undefined) resolve({ url, child });
    });
    child.on('exit', (code) => reject(new Error(`view exited with ${code}: ${out}`)));
  });
}

/** Options of {@link inServedPage}. */
export interface ServedPageOptions {
  /** The page's width in px (default 1400). */
  readonly width?: number;
  /** Console errors the test causes on purpose (the browser logs a 404 it was answered). */
  readonly expectedConsoleErrors?: RegExp;
}

/**
 * Serves session `id` of `setup`'s store, opens it in a guarded page, runs `check`, and fails
 * on any incident of the page; the server stops either way.
 */
export async function inServedPage(
  setup: BrowserAndStore,
  id: string,
  check: (page: Page) => Promise<void>,
  options: ServedPageOptions = {},
): Promise<void> {
  const { url, child } = await serveView(setup.storeUrl, id, setup.dir);
  try {
    const { page, incidents } = await guardedPage(setup.browser);
    await page.setViewportSize({ width: options.width ?? 1400, height: 900 });
    await page.goto(url);
    await check(page);
    const expected = options.expectedConsoleErrors;
    expectNoIncidents({
      ...incidents,
      consoleErrors: incidents.consoleErrors.filter((text) => expected?.test(text) !== true),
    });
    await page.close();
  } finally {
    child.kill('SIGINT');
  }
}
