/**
 * The conversation view in a real browser (Debian's chromium, headless): the demo session served
 * and exported, an imported Claude Code session with a subagent, a session the AI SDK middleware
 * recorded, and a long session that a writer extends while it is watched. Also the page's layout
 * from 800 px to wide, its light and dark themes, and axe's accessibility check of every view.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';
import { CLAUDE_CODE_SUBAGENTS } from '../import/corpus-files.js';
import { expectAccessible } from './accessibility.js';
import {
  describeBrowser,
  expectNoIncidents,
  guardedPage,
  screenshot,
  serveView,
  useBrowserAndStore,
} from './browser.js';
import {
  AI_SDK_ID,
  appendLongTurn,
  LONG_ID,
  LONG_TURNS,
  recordLong,
} from './conversation-sessions.js';
import { recordAiSdk, recordDemo } from './sessions.js';

const CLAUDE_CODE = CLAUDE_CODE_SUBAGENTS.path;
const CLAUDE_CODE_ID = CLAUDE_CODE_SUBAGENTS.id;
const VIEWS = ['model', 'transcript', 'raw', 'conversation', 'trace', 'session'] as const;
/** What each view shows once it is drawn. */
const VIEW_READY: Record<(typeof VIEWS)[number], string> = {
  model: '.row',
  transcript: '.row',
  raw: '.row',
  conversation: '.conversation .message',
  trace: '.trace-row',
  session: '[data-testid="tree-current"]',
};

let demoId = '';

/** Writes the HTML export of `id` next to the store and returns its file:// URL. */
function exported(storeUrl: string, dir: string, id: string): string {
  const run = cli(['--store', storeUrl, 'export', id, '--format', 'html'], { cwd: dir });
  if (run.code !== 0) throw new Error(`export ${id}: ${run.stderr}`);
  const file = join(dir, `${id.replace(/[^a-z0-9-]/gi, '_')}.html`);
  writeFileSync(file, run.stdout);
  return pathToFileURL(file).href;
}

async function openConversation(page: Page): Promise<void> {
  await page.locator('#stats span').first().waitFor();
  await page.keyboard.press('4');
  await page.locator('[data-testid="conversation"] .entries > *').first().waitFor();
}

/** The scroller's distance from its bottom, in CSS pixels. */
function fromBottom(page: Page): Promise<number> {
  return page
    .locator('[data-testid="conversation"]')
    .evaluate((scroller) => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight);
}

/** A page of the given size and colour scheme that records incidents. */
async function sizedPage(
  browser: Browser,
  width: number,
  colorScheme: 'light' | 'dark',
): Promise<Awaited<ReturnType<typeof guardedPage>>> {
  const guarded = await guardedPage(browser);
  await guarded.page.setViewportSize({ width, height: 900 });
  await guarded.page.emulateMedia({ colorScheme });
  return guarded;
}

describeBrowser('the conversation view', () => {
  const setup = useBrowserAndStore(async (storeUrl, dir) => {
    demoId = recordDemo(storeUrl, dir);
    const imported = cli(['--store', storeUrl, 'import', '--from', 'claude-code', CLAUDE_CODE], {
      cwd: dir,
    });
    if (imported.code !== 0) throw new Error(`import: ${imported.stderr}`);
    await recordAiSdk(storeUrl, AI_SDK_ID);
    await recordLong(storeUrl);
  });

  it('reads the demo as a chat: turns, bubbles, tool cards, the compaction and the prune in place', async () => {
    const { dir, storeUrl, browser } = setup;
    const { url, child } = await serveView(storeUrl, demoId, dir);
    try {
      const { page, incidents } = await sizedPage(browser, 1400, 'light');
      await page.goto(url);
      await openConversation(page);
      const conversation = page.locator('[data-testid="conversation"]');
      expect(
        await page.locator('#tabs [data-view="conversation"]').getAttribute('aria-pressed'),
      ).toBe('true');
      expect(await conversation.locator('.turn-sep').first().textContent()).toMatch(
        /^turn 1 · [^·]+ · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d · [\d.]+ (ms|s)/,
      );
      await conversation.locator('.message.from-user').first().waitFor();
      await conversation.locator('.message.from-assistant').first().waitFor();
      // A tool call is a card holding its arguments and its result; no result stands alone.
      const card = conversation.locator('.tool-card').first();
      expect(await card.locator('.tool-name').textContent()).toMatch(/^→ \w+/);
      expect(await card.locator('.card-result .result').count()).toBe(1);
      expect(await conversation.locator('.message.from-tool-result').count()).toBe(0);

      // The compaction where it happened, its originals drawn when it is opened.
      const compaction = conversation.locator('.rewrite.compaction');
      expect(await compaction.locator('summary').textContent()).toMatch(
        /^Compacted at #\d+: replaces 10 messages, #1–#\d+$/,
      );
      expect(await compaction.locator('.rewrite-body .message').count()).toBe(0);
      await compaction.locator('summary').click();
      await compaction
        .locator('.rewrite-body .message', { hasText: 'What is this project? Have a look around.' })
        .waitFor();
      expect(await conversation.locator('.rewrite.prune summary').textContent()).toMatch(
        /^Pruned at #\d+: pruned: excerpt of #\d+$/,
      );
      await screenshot(page, 'conversation-light', true);

      // "#seq" on a message opens it in the list views, selected, with its provenance.
      const first = conversation.locator('.message.from-user header button').first();
      const seq = (await first.textContent())?.slice(1);
      await first.click();
      await expect
        .poll(() => page.locator('#detail h2').textContent())
        .toContain(`#${seq} user/message`);
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill();
    }
  });

  it.each([
    [1400, 'light'],
    [1400, 'dark'],
    [800, 'light'],
    [800, 'dark'],
  ] as const)(
    'at %i px in the %s theme, folds the session list when narrow, and every view passes axe',
    async (width, scheme) => {
      const { dir, storeUrl, browser } = setup;
      const { url, child } = await serveView(storeUrl, demoId, dir);
      try {
        const { page, incidents } = await sizedPage(browser, width, scheme);
        await page.goto(url);
        await page.locator('.row').first().waitFor();
        const context = `served page at ${width} px, ${scheme}`;
        for (const view of VIEWS) {
          await page.locator(`#tabs [data-view="${view}"]`).click();
          await page.locator(VIEW_READY[view]).first().waitFor();
          await expectAccessible(page, `${view} view of the ${context}`);
        }
        if (width === 800) {
          // The session list folds behind a button; rows keep room for their text.
          expect(await page.locator('#sidebar').isVisible()).toBe(false);
          await page.locator('#tabs [data-view="model"]').click();
          const text = page.locator('.row .text').first();
          expect(
            await text.evaluate((element) => element.getBoundingClientRect().width),
          ).toBeGreaterThan(300);
          await screenshot(page, `narrow-model-${scheme}`, scheme === 'light');
          await page.locator('#sidebar-toggle').click();
          expect(await page.locator('#sidebar').isVisible()).toBe(true);
          expect(await page.locator('#sidebar-toggle').getAttribute('aria-expanded')).toBe('true');
          await expectAccessible(page, `${context}, its session list open`);
          await page.locator('#sidebar-toggle').click();
          await page.locator('#tabs [data-view="conversation"]').click();
          await screenshot(page, `narrow-conversation-${scheme}`, true);
        } else {
          expect(await page.locator('#sidebar').isVisible()).toBe(true);
          await screenshot(page, `conversation-${scheme}-wide`, scheme === 'dark');
          if (scheme === 'dark') {
            await page.locator('#tabs [data-view="model"]').click();
            await screenshot(page, 'served-model-dark', true);
          }
        }
        expectNoIncidents(incidents);
        await page.close();
      } finally {
        child.kill();
      }
    },
  );

  it('passes axe in every view of the HTML export', async () => {
    const { dir, storeUrl, browser } = setup;
    const { page, incidents } = await sizedPage(browser, 1200, 'light');
    await page.goto(exported(storeUrl, dir, demoId));
    await page.locator('.row').first().waitFor();
    for (const view of VIEWS) {
      await page.locator(`#tabs [data-view="${view}"]`).click();
      await page.locator(VIEW_READY[view]).first().waitFor();
      await expectAccessible(page, `${view} view of the export`);
    }
    await page.locator('#tabs [data-view="conversation"]').click();
    await page.locator('.conversation .rewrite.compaction').waitFor();
    expectNoIncidents(incidents);
    await page.close();
  });

  it('shows an imported Claude Code session with its subagent linked from the call’s card', async () => {
    const { dir, storeUrl, browser } = setup;
    const { url, child } = await serveView(storeUrl, CLAUDE_CODE_ID, dir);
    try {
      const { page, incidents } = await sizedPage(browser, 1400, 'light');
      await page.goto(url);
      await openConversation(page);
      const conversation = page.locator('[data-testid="conversation"]');
      // Scrolled to the top until the first entry is drawn.
      await expect
        .poll(async () => {
          await conversation.evaluate((scroller) => {
            scroller.scrollTop = 0;
          });
          return conversation.locator('.earlier').isHidden();
        })
        .toBe(true);
      expect(await conversation.locator('.tool-card').count()).toBe(13);
      const card = conversation
        .locator('.tool-card', { has: page.locator('[data-testid="conversation-child"]') })
        .first();
      // A subagent's report is long: its card is folded until the reader opens it, and says
      // what it holds.
      expect(await card.getAttribute('open')).toBeNull();
      expect(await card.locator('summary .tool-subagent').textContent()).toBe('ran a subagent');
      await card.locator('summary').click();
      const link = card.locator('[data-testid="conversation-child"] a');
      const childId = await link.textContent();
      expect(childId).toMatch(new RegExp(`^${CLAUDE_CODE_ID}/`));
      await link.click();
      await expect.poll(() => page.locator('#title').textContent()).toBe(childId);
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill();
    }
    // The export has no store to open the child from: its id is text.
    const { page, incidents } = await sizedPage(browser, 1400, 'light');
    await page.goto(exported(storeUrl, dir, CLAUDE_CODE_ID));
    await openConversation(page);
    const named = page
      .locator('.tool-card [data-testid="conversation-child"] .child-session')
      .first();
    expect(await named.evaluate((element) => element.tagName)).toBe('SPAN');
    expectNoIncidents(incidents);
    await page.close();
  });

  it('shows what the AI SDK middleware recorded: the tool card, its result and the folded thinking', async () => {
    const { dir, storeUrl, browser } = setup;
    const { page, incidents } = await sizedPage(browser, 1400, 'light');
    await page.goto(exported(storeUrl, dir, AI_SDK_ID));
    await openConversation(page);
    const conversation = page.locator('[data-testid="conversation"]');
    const card = conversation.locator('.tool-card');
    expect(await card.locator('.tool-name').textContent()).toBe('→ updateIssueList');
    expect(await card.locator('.card-result').textContent()).toContain(
      'The list holds 3 open issues.',
    );
    const reasoning = conversation.locator('details.thinking').first();
    expect(await reasoning.getAttribute('open')).toBeNull();
    await reasoning.locator('summary').click();
    expect(await reasoning.locator('pre').isVisible()).toBe(true);
    expect(await conversation.locator('.turn-sep').first().textContent()).toContain(
      'anthropic.messages:claude-sonnet-4-5',
    );
    await screenshot(page, 'conversation-ai-sdk', false);
    expectNoIncidents(incidents);
    await page.close();
  });

  it('draws a long session a window at a time, and follows live turns only from the bottom', async () => {
    const { dir, storeUrl, browser } = setup;
    const { url, child } = await serveView(storeUrl, LONG_ID, dir);
    try {
      const { page, incidents } = await sizedPage(browser, 1200, 'light');
      await page.goto(url);
      await openConversation(page);
      const conversation = page.locator('[data-testid="conversation"]');
      // The last turn: the image drawn from its data, and the cut said where it happened.
      expect(
        await conversation
          .locator('img.image')
          .evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth),
      ).toBe(1);
      expect(await conversation.locator('[data-testid="turn-cut"]').textContent()).toBe(
        'The turn was cut: aborted (the user pressed Esc).',
      );
      expect(await fromBottom(page)).toBeLessThan(2);
      const drawn = await conversation.locator('.turn-sep').count();
      expect(drawn).toBeLessThan(LONG_TURNS / 4);

      // At the top, the turns before are drawn, and what the reader looked at stays in place.
      const top = conversation.locator('.entries > *').first();
      const seq = await top.getAttribute('data-seq');
      await conversation.evaluate((scroller) => {
        scroller.scrollTop = 0;
      });
      await expect.poll(() => conversation.locator('.turn-sep').count()).toBeGreaterThan(drawn);
      const kept = conversation.locator(`.entries > [data-seq="${seq}"]`).first();
      const offset = await kept.evaluate(
        (element) =>
          element.getBoundingClientRect().top -
          (element.closest('.conversation')?.getBoundingClientRect().top ?? 0),
      );
      expect(Math.abs(offset)).toBeLessThan(80);

      // Scrolled up, a live turn is added below without moving the reader.
      const scrolled = await conversation.evaluate((scroller) => scroller.scrollTop);
      await appendLongTurn(storeUrl, LONG_TURNS + 2, 'a question asked while you read');
      await conversation
        .locator('.message', { hasText: 'a question asked while you read' })
        .waitFor();
      expect(await conversation.evaluate((scroller) => scroller.scrollTop)).toBe(scrolled);
      const separator = conversation.locator('.turn-sep', { hasText: `turn ${LONG_TURNS + 2}` });
      expect(await separator.textContent()).not.toContain('still open');
      const lastCard = conversation.locator('.tool-card').last();
      expect(await lastCard.locator('.card-result').textContent()).toContain(
        `contents of file ${LONG_TURNS + 2}`,
      );

      // At the bottom, the next live turn is followed.
      await conversation.evaluate((scroller) => {
        scroller.scrollTop = scroller.scrollHeight;
      });
      await appendLongTurn(storeUrl, LONG_TURNS + 3, 'a question asked at the bottom');
      await conversation
        .locator('.message', { hasText: 'a question asked at the bottom' })
        .waitFor();
      await expect.poll(() => fromBottom(page)).toBeLessThan(2);
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill();
    }
  });
});
