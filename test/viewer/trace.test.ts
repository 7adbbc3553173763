/**
 * The Trace view in a real browser: the demo session served and exported, a session whose calls
 * were retried and failed, a Claude Code session imported with its subagents, and a session the
 * AI SDK middleware recorded from real provider recordings. The request a call shows is what
 * `requestAt` rebuilds for it; its stream is its parts; failures show their errors.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { anthropicBody, openaiBody, requestAt } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { inspectSession, openStore } from '../../src/store/index.js';
import { cli } from '../cli/helpers.js';
import { assistant, toolResult, user } from '../core/builders.js';
import { CLAUDE_CODE_SUBAGENTS } from '../import/corpus-files.js';
import { expectAccessible } from './accessibility.js';
import {
  describeBrowser,
  expectNoIncidents,
  guardedPage,
  inServedPage,
  type ServedPageOptions,
  screenshot,
  useBrowserAndStore,
} from './browser.js';
import { recordAiSdk, recordDemo, saveSession } from './sessions.js';
import { retriedSession } from './trace-sessions.js';

const CLAUDE_CODE = CLAUDE_CODE_SUBAGENTS.path;
const CLAUDE_CODE_ID = CLAUDE_CODE_SUBAGENTS.id;

/** A session whose one tool call names a child session the store does not hold. */
function orphanCallSession(): Session {
  const session = Session.create({ id: 'orphan-call' });
  session.append('turn/start', { turn: 1 });
  session.append('user/message', user('u1', 'Ask a subagent.'), { surfaceOp: 'append' });
  session.append('step/start', { turn: 1, step: 1 });
  session.append(
    'assistant/message',
    assistant('a1', '', [{ id: 'task_1', name: 'task' }], { turn: 1, step: 1 }),
    { surfaceOp: 'append' },
  );
  const call = session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'task_1',
    name: 'task',
    arguments: '{}',
    child: { session: 'no-such-child' },
  });
  session.append('tool/result', toolResult('r1', 'task_1', 'done', { turn: 1, step: 1 }), {
    surfaceOp: 'append',
    sourceEventSeqs: [call.seq],
  });
  session.append('step/end', { turn: 1, step: 1 });
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  return session;
}

/** Shows the trace panel and waits for its turns. */
async function openTrace(page: Page): Promise<void> {
  await page.locator('.row').first().waitFor();
  await page.keyboard.press('5');
  await page.locator('[data-testid="trace-group"]').first().waitFor();
}

/** The request the detail pane shows, parsed. */
async function shownRequest(page: Page): Promise<unknown> {
  const body = page.locator('[data-testid="trace-request-body"] pre');
  await body.waitFor();
  return JSON.parse((await body.textContent()) ?? '');
}

/** A value as JSON carries it (what the server sends and the page prints). */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describeBrowser('the trace view', () => {
  let demo = '';
  const setup = useBrowserAndStore(async (storeUrl, dir) => {
    demo = recordDemo(storeUrl, dir);
    await saveSession(storeUrl, retriedSession());
    await saveSession(storeUrl, orphanCallSession());
    const imported = cli(['--store', storeUrl, 'import', '--from', 'claude-code', CLAUDE_CODE], {
      cwd: dir,
    });
    if (imported.code !== 0) throw new Error(`import: ${imported.stderr}`);
    await recordAiSdk(storeUrl, 'ai-sdk');
  });

  /** Serves session `id`, opens its trace, runs `check`, and fails on any incident of the page. */
  /** Serves session `id`, opens its trace, runs `check`, and fails on any incident of the page. */
  const inServedTrace = (
    id: string,
    check: (page: Page) => Promise<void>,
    options?: ServedPageOptions,
  ): Promise<void> =>
    inServedPage(
      setup,
      id,
      async (page) => {
        await openTrace(page);
        await check(page);
      },
      options,
    );

  it('draws the demo served: every turn, call and tool, parallel tools overlapping, a call’s request and stream', async () => {
    const { storeUrl } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const session = await inspectSession(store, demo);
    await store.close();
    await inServedTrace(demo, async (page) => {
      const types = session.events.map((event) => event.type);
      const count = (type: string) => types.filter((t) => t === type).length;
      expect(await page.locator('[data-testid="trace-call"]').count()).toBe(count('step/start'));
      expect(await page.locator('[data-testid="trace-tool"]').count()).toBe(count('tool/call'));
      expect(await page.locator('[data-testid="trace-compaction"]').count()).toBe(
        count('compaction/start'),
      );
      // Turn 1 step 2 read two files at once.
      expect(await page.locator('.trace-row.tool.parallel').count()).toBeGreaterThanOrEqual(2);
      expect(await page.locator('.trace-summary').textContent()).toBe(
        `${count('turn/start')} turns · ${count('step/start')} model calls · ${count('tool/call')} tool executions`,
      );

      // The third call streamed its answer: its request and its parts.
      const call = page.locator('[data-testid="trace-call"]').nth(2);
      const stepStart = Number(await call.getAttribute('data-seq'));
      await call.click();
      const rebuilt = requestAt(session, stepStart);
      expect(await shownRequest(page)).toEqual(asJson(rebuilt.request));
      await expect
        .poll(() => page.locator('[data-testid="trace-digest"]').textContent())
        .toBe(`digest ${rebuilt.digest}, as the writer recorded it`);
      const parts = session.events.filter(
        (event) =>
          event.type === 'assistant/chunk' &&
          event.seq > stepStart &&
          event.seq < (rebuilt.answerSeq ?? 0),
      );
      const stream = page.locator('[data-testid="trace-stream"] li');
      expect(await stream.count()).toBe(parts.length);
      // The bodies arrive after the first render; then every part shows its text.
      await expect
        .poll(() => page.locator('[data-testid="trace-stream"]').textContent())
        .not.toContain('its body is loading');
      const deltas = parts.flatMap((part) => {
        const delta = (part.data as { chunk?: { delta?: unknown } }).chunk?.delta;
        return typeof delta === 'string' ? [{ seq: part.seq, delta }] : [];
      });
      const first = deltas[0];
      expect(first).toBeDefined();
      expect(
        await stream.nth(parts.findIndex((part) => part.seq === first?.seq)).textContent(),
      ).toContain(JSON.stringify(first?.delta));
      await screenshot(page, 'served-trace', true);

      await page.locator('[data-wire="openai"]').click();
      await expect
        .poll(async () => JSON.stringify(await shownRequest(page)))
        .toBe(JSON.stringify(openaiBody(rebuilt.header, rebuilt.messages)));

      // The tab keys go on working from the trace.
      await page.keyboard.press('1');
      await expect.poll(() => page.locator('body').getAttribute('data-view')).toBe('model');
      await page.keyboard.press('5');
      await expect.poll(() => page.locator('body').getAttribute('data-view')).toBe('trace');
    });
  });

  it('draws the demo from an HTML export, its requests rebuilt by core as requestAt rebuilds them, their digests taken when the file was written', async () => {
    const { dir, storeUrl, browser } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const session = await inspectSession(store, demo);
    await store.close();
    const exported = cli(['export', demo, '--format', 'html', '--store', storeUrl], { cwd: dir });
    expect(exported.code).toBe(0);
    const file = join(dir, 'trace-demo.html');
    writeFileSync(file, exported.stdout);
    const { page, incidents } = await guardedPage(browser);
    await page.goto(pathToFileURL(file).href);
    await openTrace(page);
    const calls = page.locator('[data-testid="trace-call"]');
    for (const index of [0, 3]) {
      const stepStart = Number(await calls.nth(index).getAttribute('data-seq'));
      await calls.nth(index).click();
      const { header, messages } = requestAt(session, stepStart);
      expect(await shownRequest(page)).toEqual(asJson({ header, messages }));
      const hint = await page.locator('[data-testid="trace-request"] .hint').textContent();
      expect(hint).toContain("palimpsest's canonical form only");
      expect(hint).toContain(`palimpsest request ${demo} ${stepStart} --wire openai`);
      // The digest palimpsest took when it wrote the file, the one the writer recorded.
      const { digest, recordedDigest } = requestAt(session, stepStart);
      expect(recordedDigest).toBe(digest);
      expect(await page.locator('[data-testid="trace-digest"]').textContent()).toBe(
        `digest ${digest}, computed when this file was written, as the writer recorded it`,
      );
    }
    expect(await page.locator('[data-wire]').count()).toBe(0);
    expectNoIncidents(incidents);
    await page.close();
  });

  it('shows a retried call’s retry, a failed tool’s error and the call a rate limit ended, on a time axis', async () => {
    await inServedTrace('retried', async (page) => {
      const [retried, failed] = [0, 1].map((n) =>
        page.locator('[data-testid="trace-call"]').nth(n),
      );
      const figures = (await retried?.locator('.trace-figures').textContent()) ?? '';
      expect(figures).toContain('1 retry');
      expect(figures).toContain('in 12,000 (cached 10,000) · out 300');
      expect(figures).toMatch(/\$0\.0\d+/);
      // The turn ran 0–2,500 ms; the call 1,000–2,000 ms.
      const bar = retried?.locator('.trace-bar');
      expect(
        await bar?.evaluate(
          (element) => (element as unknown as { style: { left: string } }).style.left,
        ),
      ).toBe('40%');
      expect(
        await bar?.evaluate(
          (element) => (element as unknown as { style: { width: string } }).style.width,
        ),
      ).toBe('40%');
      expect(await page.locator('.trace-row.tool.parallel').count()).toBe(2);
      expect(await page.locator('.trace-row.tool.failed .trace-error').textContent()).toContain(
        'ENOENT: a.txt is missing',
      );
      expect(await failed?.getAttribute('class')).toContain('failed');
      expect(await failed?.locator('.trace-error').textContent()).toContain(
        'rate_limit_error: Rate limited',
      );
      await retried?.click();
      const detail = page.locator('[data-testid="trace-detail"]');
      await expect.poll(() => detail.textContent()).toContain('retry 1');
      expect(await detail.textContent()).toContain('overloaded_error: Overloaded (waited 500 ms)');
      await failed?.click();
      await expect
        .poll(() => detail.textContent())
        .toContain('error: rate_limit_error: Rate limited');
      // The retried call for the docs, its request loaded.
      await retried?.click();
      await expect
        .poll(() => page.locator('[data-testid="trace-digest"]').textContent())
        .toContain('(the writer recorded none)');
      await screenshot(page, 'served-trace-failures', true);
    });
  });

  it('links an imported Claude Code session’s subagent calls to their child sessions, the failed one marked', async () => {
    const { storeUrl } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const session = await inspectSession(store, CLAUDE_CODE_ID);
    await store.close();
    await inServedTrace(CLAUDE_CODE_ID, async (page) => {
      const steps = session.events.filter((event) => event.type === 'step/start').length;
      expect(await page.locator('[data-testid="trace-call"]').count()).toBe(steps);
      const links = page.locator('.trace-child a');
      expect(await links.count()).toBe(2);
      expect(
        await page.locator('.trace-row.tool.failed .trace-error').first().textContent(),
      ).toMatch(/InputValidationError|error/i);
      // Its calls reported usage: priced.
      expect(
        await page.locator('[data-testid="trace-call"] .trace-figures').first().textContent(),
      ).toMatch(/\$\d/);
      const childId = (await links.first().textContent()) ?? '';
      expect(childId).toContain('/subagents/sidechain-');
      await links.first().click();
      await expect.poll(() => page.locator('#title').textContent()).toBe(childId);
    });
  });

  it('shows an AI SDK session’s request as requestAt rebuilds it, its digest the one the middleware recorded', async () => {
    const { storeUrl } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const session = await inspectSession(store, 'ai-sdk');
    await store.close();
    await inServedTrace('ai-sdk', async (page) => {
      const calls = page.locator('[data-testid="trace-call"]');
      expect(await calls.count()).toBe(2);
      const second = calls.nth(1);
      const stepStart = Number(await second.getAttribute('data-seq'));
      await second.click();
      const rebuilt = requestAt(session, stepStart);
      expect(rebuilt.recordedDigest).toBe(rebuilt.digest);
      expect(await shownRequest(page)).toEqual(asJson(rebuilt.request));
      await expect
        .poll(() => page.locator('[data-testid="trace-digest"]').textContent())
        .toBe(`digest ${rebuilt.digest}, as the writer recorded it`);
      await page.locator('[data-wire="anthropic"]').click();
      await expect
        .poll(async () => JSON.stringify(await shownRequest(page)))
        .toBe(JSON.stringify(anthropicBody(rebuilt.header, rebuilt.messages)));
      expect(await second.locator('.trace-figures').textContent()).toMatch(
        /in [\d,]+.* · out [\d,]+/,
      );
    });
  });

  it('nests a subagent’s calls under the call that ran it, served: fetched through the session routes, its call the child’s', async () => {
    const { storeUrl } = setup;
    await inServedTrace(CLAUDE_CODE_ID, async (page) => {
      const link = page.locator('.trace-child a').first();
      const childId = (await link.textContent()) ?? '';
      const store = await openStore(storeUrl, { readOnly: true });
      const child = await inspectSession(store, childId);
      await store.close();
      const childSteps = child.events.filter((event) => event.type === 'step/start');
      expect(childSteps.length).toBeGreaterThan(0);

      const unfold = page.locator('[data-testid="trace-unfold"]').first();
      expect(await unfold.getAttribute('aria-expanded')).toBe('false');
      await unfold.click();
      const nested = page.locator('[data-testid="trace-nested"]');
      await nested.locator('[data-testid="trace-call"]').first().waitFor();
      expect(await unfold.getAttribute('aria-expanded')).toBe('true');
      expect(await nested.locator('[data-testid="trace-call"]').count()).toBe(childSteps.length);
      expect(await nested.locator('.trace-nested-title').textContent()).toContain(childId);
      // Nested right under the subagent's row.
      expect(
        await page
          .locator('.trace-row:has([data-testid="trace-unfold"]) + [data-testid="trace-nested"]')
          .count(),
      ).toBe(1);

      // A nested call shows the child's call: its step, its stream (Claude Code logs no request
      // header, which the pane says).
      const nestedCall = nested.locator('[data-testid="trace-call"]').first();
      const stepStart = Number(await nestedCall.getAttribute('data-seq'));
      await nestedCall.click();
      const step = child.events.find((event) => event.seq === stepStart);
      const { turn, step: number } = (step?.data ?? {}) as { turn?: number; step?: number };
      expect(await page.locator('[data-testid="trace-detail"] h3').textContent()).toBe(
        `Model call · turn ${turn} step ${number}`,
      );
      const answer = child.events.find(
        (event) => event.seq > stepStart && event.type === 'assistant/message',
      );
      const parts = child.events.filter(
        (event) =>
          event.type === 'assistant/chunk' &&
          event.seq > stepStart &&
          event.seq < (answer?.seq ?? Number.POSITIVE_INFINITY),
      );
      expect(await page.locator('[data-testid="trace-stream"] li').count()).toBe(parts.length);
      expect(await page.locator('[data-testid="trace-request"]').textContent()).toContain(
        'No request header was logged before this call',
      );
      await expectAccessible(page, 'trace with a subagent’s calls nested');
      await screenshot(page, 'served-trace-subagent', true);

      // Folding removes them; unfolding again draws them from what was fetched.
      await unfold.click();
      expect(await nested.count()).toBe(0);
      await unfold.click();
      expect(await nested.locator('[data-testid="trace-call"]').count()).toBe(childSteps.length);
    });
  });

  it('says in place that a subagent’s child session could not be loaded', async () => {
    await inServedTrace(
      'orphan-call',
      async (page) => {
        await page.locator('[data-testid="trace-unfold"]').click();
        const error = page.locator('[data-testid="trace-nested-error"]');
        await error.waitFor();
        expect(await error.textContent()).toMatch(/^child session no-such-child: 404/);
        // The rest of the trace still works.
        await page.locator('[data-testid="trace-call"]').click();
        expect(await page.locator('[data-testid="trace-detail"] h3').textContent()).toBe(
          'Model call · turn 1 step 1',
        );
      },
      { expectedConsoleErrors: /the server responded with a status of 404/ },
    );
  });

  it('names each subagent child an HTML export does not carry', async () => {
    const { dir, storeUrl, browser } = setup;
    const exported = cli(['export', CLAUDE_CODE_ID, '--format', 'html', '--store', storeUrl], {
      cwd: dir,
    });
    expect(exported.code).toBe(0);
    const file = join(dir, 'trace-subagents.html');
    writeFileSync(file, exported.stdout);
    const { page, incidents } = await guardedPage(browser);
    await page.goto(pathToFileURL(file).href);
    await openTrace(page);
    const children = await page.locator('.trace-child .session-link').allTextContents();
    expect(children).toHaveLength(2);
    const unfolds = page.locator('[data-testid="trace-unfold"]');
    for (let index = 0; index < 2; index++) await unfolds.nth(index).click();
    expect(await page.locator('[data-testid="trace-nested"]').allTextContents()).toEqual(
      children.map((id) => `child session ${id}: not in this export`),
    );
    expectNoIncidents(incidents);
    await page.close();
  });

  it('totals the same cost as the Session view, to the cent, both priced by CallPricer', async () => {
    for (const id of [CLAUDE_CODE_ID, 'ai-sdk']) {
      await inServedTrace(id, async (page) => {
        const summary = (await page.locator('.trace-summary').textContent()) ?? '';
        const traced = Number(/ · \$([\d.]+)$/.exec(summary)?.[1]);
        expect(traced, summary).toBeGreaterThan(0);
        await page.keyboard.press('6');
        const totals = page.locator('[data-testid="sp-totals"]');
        await totals.waitFor();
        const shown = /Cost([\d.]+) USD/.exec((await totals.textContent()) ?? '')?.[1] ?? '';
        // The Session view shows cents, or four decimals below a cent.
        expect(traced.toFixed(shown.split('.')[1]?.length ?? 2)).toBe(shown);
      });
    }
  });
});
