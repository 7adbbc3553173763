/**
 * The keyboard in a real browser, view by view: `j`/`k` and the arrows move through what the view
 * on screen shows (the list's rows, the conversation's entries, the trace's calls) and never
 * through the rows of a list view that a panel hides; Enter opens what the keyboard is on; `/`
 * searches the sessions; `?` lists the keys of the view on screen.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';
import { expectAccessible } from './accessibility.js';
import {
  describeBrowser,
  expectNoIncidents,
  guardedPage,
  inServedPage,
  screenshot,
  useBrowserAndStore,
} from './browser.js';
import { recordDemo } from './sessions.js';

/** Where the keyboard is: the focused element's id, class and seq. */
async function focused(page: Page): Promise<{ id: string; classes: string; seq: string | null }> {
  const active = page.locator(':focus');
  if ((await active.count()) === 0) return { id: '', classes: '', seq: null };
  return {
    id: (await active.getAttribute('id')) ?? '',
    classes: (await active.getAttribute('class')) ?? '',
    seq: await active.getAttribute('data-seq'),
  };
}

/** The key of the list view's selected row (hidden under a panel), if one is selected. */
async function listSelection(page: Page): Promise<string | null> {
  const row = page.locator('#list .row.selected');
  return (await row.count()) === 0 ? null : row.getAttribute('data-key');
}

/** Whether the element `selector` finds lies inside the visible box of `scroller`'s. */
async function inSight(page: Page, selector: string, scroller: string): Promise<boolean> {
  const item = await page.locator(selector).boundingBox();
  const box = await page.locator(scroller).boundingBox();
  if (item === null || box === null) return false;
  return item.y + item.height > box.y && item.y < box.y + box.height;
}

/** The index of the conversation's current entry among its entries (-1 with none). */
function currentEntry(page: Page): Promise<number> {
  return page
    .locator('[data-testid="conversation"] .entries > *')
    .evaluateAll((items) => items.findIndex((item) => item.hasAttribute('aria-current')));
}

describeBrowser('the keyboard in each view', () => {
  let demo = '';
  const setup = useBrowserAndStore(async (storeUrl, dir) => {
    demo = recordDemo(storeUrl, dir);
  });

  /** Serves the demo `width` px wide and runs `check` once its rows are drawn. */
  const served = (check: (page: Page) => Promise<void>, width = 1400): Promise<void> =>
    inServedPage(
      setup,
      demo,
      async (page) => {
        await page.locator('.row').first().waitFor();
        await check(page);
      },
      { width },
    );

  it('moves through the conversation’s entries with j/k and the arrows, scrolled into sight, leaving the hidden list alone', async () => {
    await served(async (page) => {
      await page.keyboard.press('j');
      const selected = await listSelection(page);
      expect(selected).not.toBeNull();
      await page.keyboard.press('4');
      await page.locator('[data-testid="conversation"] .entries > *').first().waitFor();
      const entries = page.locator('[data-testid="conversation"] .entries > *');
      const count = await entries.count();
      const current = page.locator('.entries > [aria-current="true"]');

      // The reader starts at the bottom: k takes the last entry in sight, then the one above.
      await page.keyboard.press('k');
      expect(await currentEntry(page)).toBe(count - 1);
      await page.keyboard.press('k');
      await page.keyboard.press('ArrowUp');
      expect(await currentEntry(page)).toBe(count - 3);
      await page.keyboard.press('j');
      expect(await currentEntry(page)).toBe(count - 2);
      expect(await current.count()).toBe(1);
      expect(await page.locator('.entries > [aria-current="true"]:focus').count()).toBe(1);

      // Far up: the entry the keyboard reached is scrolled into sight.
      for (let step = 0; step < 25; step++) await page.keyboard.press('k');
      expect(await inSight(page, '.entries > [aria-current="true"]', '.conversation')).toBe(true);
      const far = await currentEntry(page);
      expect(far).toBeLessThan(count - 2);
      // The list view under the panel kept its selection.
      expect(await listSelection(page)).toBe(selected);
      await expectAccessible(page, 'conversation, an entry current');
    });
  });

  it('moves through the trace’s calls with j/k and opens the request of the one it is on with Enter', async () => {
    await served(async (page) => {
      await page.keyboard.press('j');
      const selected = await listSelection(page);
      await page.keyboard.press('5');
      await page.locator('[data-testid="trace-call"]').first().waitFor();
      const rows = page.locator('.trace-row');
      await page.keyboard.press('j');
      expect((await focused(page)).seq).toBe(await rows.nth(0).getAttribute('data-seq'));
      await page.keyboard.press('j');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('k');
      expect((await focused(page)).seq).toBe(await rows.nth(1).getAttribute('data-seq'));
      await page.keyboard.press('k');
      expect((await focused(page)).classes).toContain('call');
      // Nothing is open until Enter.
      expect(await page.locator('[data-testid="trace-request"]').count()).toBe(0);
      await page.keyboard.press('Enter');
      await page.locator('[data-testid="trace-request-body"] pre').waitFor();
      expect(await rows.nth(0).getAttribute('aria-current')).toBe('true');
      expect(await page.locator('[data-testid="trace-detail"] h3').textContent()).toBe(
        'Model call · turn 1 step 1',
      );
      // Moving on and Enter again opens the next one; the list view's selection never moved.
      await page.keyboard.press('j');
      await page.keyboard.press('Enter');
      await expect.poll(() => rows.nth(1).getAttribute('aria-current')).toBe('true');
      expect(await rows.nth(0).getAttribute('aria-current')).toBeNull();
      expect(await listSelection(page)).toBe(selected);
      await expectAccessible(page, 'trace, a row chosen by the keyboard');
    });
  });

  it('lets j/k and Enter do nothing in the Session view, and Enter still presses a focused button', async () => {
    await served(async (page) => {
      await page.keyboard.press('j');
      const selected = await listSelection(page);
      await page.keyboard.press('6');
      const totals = page.locator('[data-testid="sp-totals"]');
      await totals.waitFor();
      const before = { totals: await totals.textContent(), focus: await focused(page) };
      for (const key of ['j', 'k', 'Enter']) await page.keyboard.press(key);
      expect({ totals: await totals.textContent(), focus: await focused(page) }).toEqual(before);
      expect(await listSelection(page)).toBe(selected);
      expect(await page.locator('body').getAttribute('data-view')).toBe('session');
      // A focused button takes its Enter (the page no longer swallows it).
      await page.locator('#tabs [data-view="trace"]').focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('body').getAttribute('data-view')).toBe('trace');
    });
  });

  it('focuses the session search with s in every view and with / over a panel, unfolding the session list at 800 px', async () => {
    await served(async (page) => {
      for (const key of ['1', '4', '5', '6']) {
        await page.keyboard.press(key);
        await page.keyboard.press('s');
        expect((await focused(page)).id).toBe('session-search');
        await page.keyboard.press('Escape');
      }
      for (const key of ['4', '5', '6']) {
        await page.keyboard.press(key);
        await page.keyboard.press('/');
        expect((await focused(page)).id).toBe('session-search');
        await page.keyboard.press('Escape');
      }
      // / and f find in the list views, as before the panels; a panel has no find box.
      for (const key of ['/', 'f']) {
        await page.keyboard.press('2');
        await page.keyboard.press(key);
        expect((await focused(page)).id).toBe('find');
        await page.keyboard.press('Escape');
      }
      await page.keyboard.press('4');
      expect(await page.locator('#find').isVisible()).toBe(false);
    });
    await served(async (page) => {
      await page.keyboard.press('4');
      expect(await page.locator('#session-search').isVisible()).toBe(false);
      await page.keyboard.press('s');
      expect(await page.locator('#session-search').isVisible()).toBe(true);
      expect((await focused(page)).id).toBe('session-search');
      expect(await page.locator('#sidebar-toggle').getAttribute('aria-expanded')).toBe('true');
    }, 800);
  });

  it('lists the keys of the view on screen with ?, and Escape closes it, focus back where it was', async () => {
    await served(async (page) => {
      const help = page.locator('[data-testid="key-help"]');
      await page.keyboard.press('?');
      expect(await help.locator('caption').first().textContent()).toBe('In the list views');
      expect(await help.textContent()).toContain('select the next / previous row');
      expect((await focused(page)).id).toBe('key-help');
      await expectAccessible(page, 'key help of the list views');
      await page.keyboard.press('Escape');
      expect(await help.count()).toBe(0);

      await page.keyboard.press('5');
      await page.locator('.trace-row').first().waitFor();
      await page.keyboard.press('j');
      const row = (await focused(page)).seq;
      await page.keyboard.press('?');
      expect(await help.locator('caption').first().textContent()).toBe('In the trace');
      expect(await help.textContent()).toContain('a call’s exact request');
      expect(await help.textContent()).toContain('search sessions');
      await screenshot(page, 'served-key-help', true);
      await page.keyboard.press('?');
      expect(await help.count()).toBe(0);
      expect((await focused(page)).seq).toBe(row);

      await page.keyboard.press('4');
      await page.keyboard.press('?');
      expect(await help.locator('caption').first().textContent()).toBe('In the conversation');
      await page.keyboard.press('Escape');
      await page.keyboard.press('6');
      await page.keyboard.press('?');
      expect(await help.locator('caption').first().textContent()).toBe('In the session');
      expect(await help.textContent()).toContain('scroll');
    });
  });

  it('keeps / for the view’s find in an export, which has no session list', async () => {
    const { dir, storeUrl, browser } = setup;
    const exported = cli(['export', demo, '--format', 'html', '--store', storeUrl], { cwd: dir });
    expect(exported.code).toBe(0);
    const file = join(dir, 'keys-demo.html');
    writeFileSync(file, exported.stdout);
    const { page, incidents } = await guardedPage(browser);
    await page.goto(pathToFileURL(file).href);
    await page.locator('.row').first().waitFor();
    await page.keyboard.press('/');
    expect((await focused(page)).id).toBe('find');
    await page.keyboard.press('Escape');
    await page.keyboard.press('5');
    await page.locator('.trace-row').first().waitFor();
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="trace-request-body"] pre').waitFor();
    await page.keyboard.press('?');
    expect(await page.locator('[data-testid="key-help"]').textContent()).not.toContain(
      'search sessions',
    );
    expectNoIncidents(incidents);
    await page.close();
  });
});
