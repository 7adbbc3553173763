/**
 * The Session view in a real browser: the demo's totals, verify status, tree and the diff of a
 * fork against it, served; a session a crash left open fails verify loudly; an imported Claude
 * Code session with subagents and an AI SDK middleware session, exported to file://, carry their
 * verify result and tree in the file.
 */
import { copyFileSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { cli } from '../cli/helpers.js';
import {
  describeBrowser,
  expectNoIncidents,
  guardedPage,
  screenshot,
  serveView,
  useBrowserAndStore,
} from './browser.js';
import { recordAiSdk, recordDemo } from './sessions.js';

/** How long the page may take for what the server computes (verify reads the whole log). */
const SERVER_ANSWER = { timeout: 20_000 };

const CORPUS = join(import.meta.dirname, '..', 'import', 'corpus', 'claude-code');
/** The Claude Code session id inside the corpus's `codemie--turn-2` transcript (see its README). */
const CLAUDE_SESSION = 'e9fb405b-169f-40eb-9396-7e75076f045d';

/**
 * The corpus's transcript with a Task subagent, laid out as Claude Code keeps it (the session's
 * file named by its id, its subagents in `<id>/subagents/`): the corpus renamed the file.
 */
function claudeProject(dir: string): string {
  const project = join(dir, 'claude-project');
  mkdirSync(join(project, CLAUDE_SESSION), { recursive: true });
  copyFileSync(join(CORPUS, 'codemie--turn-2.jsonl'), join(project, `${CLAUDE_SESSION}.jsonl`));
  cpSync(join(CORPUS, 'codemie--turn-2', 'subagents'), join(project, CLAUDE_SESSION, 'subagents'), {
    recursive: true,
  });
  return project;
}

describeBrowser('the Session view', () => {
  const ids = { demo: '', fork: 'demo-fork', open: 'crashed', sdk: 'sdk-session', forkedAt: 0 };
  const setup = useBrowserAndStore(async (storeUrl, dir) => {
    ids.demo = recordDemo(storeUrl, dir);
    const store = await openStore(storeUrl);
    try {
      // A fork of the demo after its second turn, which then goes its own way.
      const { events } = await store.load(ids.demo);
      const secondEnd = events.filter((event) => event.type === 'turn/end')[1]?.seq ?? 0;
      ids.forkedAt = secondEnd;
      const forked = cli(
        ['fork', ids.demo, '--at', String(secondEnd), '--id', ids.fork, '--store', storeUrl],
        { cwd: dir },
      );
      if (forked.code !== 0) throw new Error(`fork: ${forked.stderr}`);
      const fork = await openSession(store, ids.fork);
      await runTurn({
        session: fork,
        model: scriptedModel([{ text: 'On this branch we try the other approach.' }]),
        input: 'Try the other approach instead.',
      });
      await fork.close();
      // A turn a crash left open, never repaired.
      const open = Session.create({ id: ids.open });
      open.append('turn/start', { turn: 1 });
      open.append(
        'user/message',
        {
          id: 'u1',
          role: 'user',
          content: [{ type: 'text', text: 'Will this finish?' }],
          source: { kind: 'user' },
        },
        { surfaceOp: 'append' },
      );
      await store.create(open.header);
      await store.append(ids.open, open.events, { expectedSeq: 0 });
    } finally {
      await store.close();
    }
    await recordAiSdk(storeUrl, ids.sdk);
    const imported = cli(
      ['--store', storeUrl, 'import', '--from', 'claude-code', claudeProject(dir)],
      {
        cwd: dir,
      },
    );
    if (imported.code !== 0) throw new Error(`import: ${imported.stderr}`);
  });

  it('totals the demo, says it passed verify, and diffs a fork of it side by side', async () => {
    const { dir, storeUrl, browser } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const { events } = await store.load(ids.demo);
    await store.close();
    const calls = events.filter((event) => event.type === 'assistant/message').length;
    const shared = events.filter(
      (event) => event.surfaceOp !== undefined && event.seq <= ids.forkedAt,
    );
    const turns = events.filter((event) => event.type === 'turn/start').length;
    const { url, child } = await serveView(storeUrl, ids.demo, dir);
    try {
      const { page, incidents } = await guardedPage(browser);
      await page.goto(url);
      await page.locator('.row').first().waitFor();
      await expect
        .poll(() => page.locator('#verify-status').textContent(), SERVER_ANSWER)
        .toMatch(/^verify: ok/);
      await page.keyboard.press('6');
      const totals = page.locator('[data-testid="sp-totals"]');
      await expect.poll(() => totals.textContent(), SERVER_ANSWER).toContain(`Model calls${calls}`);
      expect(await totals.textContent()).toContain(`Turns${turns}`);
      expect(await page.locator('[data-testid="tool-calls"]').textContent()).toMatch(/read_file/);
      expect(await page.locator('[data-testid="sp-verify"]').textContent()).toContain(
        'ok: every check of palimpsest verify passed',
      );
      expect(await page.locator('[data-testid="sp-window"]').textContent()).toContain(
        'unknown window',
      );
      expect(await totals.textContent()).toContain('Costunknown (no rates for scripted:');
      const tree = page.locator('[data-testid="sp-tree"]');
      await expect.poll(() => tree.textContent(), SERVER_ANSWER).toContain(`${ids.fork} fork at #`);
      expect(await page.locator('[data-testid="tree-current"] strong').textContent()).toBe(
        ids.demo,
      );
      await page.locator('[data-testid="diff-pick"]').selectOption(ids.fork);
      await page.locator('[data-testid="diff-compare"]').click();
      const prefix = page.locator('[data-testid="diff-prefix"] summary');
      await expect
        .poll(() => prefix.textContent(), SERVER_ANSWER)
        .toBe(`${shared.length} messages in common (#${shared[0]?.seq}–#${shared.at(-1)?.seq})`);
      const rows = page.locator('[data-testid="diff-row"]');
      await expect.poll(() => rows.count(), SERVER_ANSWER).toBeGreaterThan(1);
      const diff = await page.locator('[data-testid="sp-diff"]').textContent();
      expect(diff).toContain('Try the other approach instead.');
      expect(diff).toContain('On this branch we try the other approach.');
      await page.setViewportSize({ width: 1400, height: 1250 });
      await screenshot(page, 'served-session', true);
      // A seq of this session's side opens it in the list views, selected.
      const first = page.locator('[data-testid="diff-row"] .sp-seq').first();
      const seq = ((await first.textContent()) ?? '').slice(1);
      await first.click();
      await expect
        .poll(() => page.locator('.row.selected').getAttribute('data-seq'), SERVER_ANSWER)
        .toBe(seq);
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill('SIGINT');
    }
  });

  it('says loudly, at the top and in the view, that a session a crash left open fails verify', async () => {
    const { dir, storeUrl, browser } = setup;
    const { url, child } = await serveView(storeUrl, ids.open, dir);
    try {
      const { page, incidents } = await guardedPage(browser);
      await page.goto(url);
      const banner = page.locator('#verify-status.verify-failed');
      await expect
        .poll(() => banner.textContent(), SERVER_ANSWER)
        .toMatch(/^VERIFY FAILED: 2 problems/);
      await page.locator('#tabs [data-view="session"]').click();
      const verify = page.locator('[data-testid="sp-verify"]');
      expect(await verify.getAttribute('class')).toContain('failed');
      expect(await verify.textContent()).toContain(
        `a turn left open by a crash — palimpsest repair ${ids.open} closes it`,
      );
      expect(await verify.textContent()).toContain('OPEN_AT_END');
      await screenshot(page, 'served-session-verify-failed', true);
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill('SIGINT');
    }
  });

  it('shows an imported Claude Code session with its subagents from an HTML export', async () => {
    const { dir, storeUrl, browser } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const { sessions } = await store.list();
    await store.close();
    const main = sessions.find(
      ({ header }) => header.id.startsWith('claude-code-') && !header.id.includes('/subagents/'),
    );
    const subagents = sessions.filter(({ header }) => header.id.includes('/subagents/'));
    expect(main).toBeDefined();
    expect(subagents.length).toBeGreaterThan(0);
    const id = main?.header.id ?? '';
    const exported = cli(['--store', storeUrl, 'export', id, '--format', 'html'], { cwd: dir });
    expect(exported.code, exported.stderr).toBe(0);
    const file = join(dir, 'imported.html');
    writeFileSync(file, exported.stdout);
    const { page, incidents } = await guardedPage(browser);
    await page.goto(pathToFileURL(file).href);
    await page.locator('.row').first().waitFor();
    await page.keyboard.press('6');
    const tree = await page.locator('[data-testid="sp-tree"]').textContent();
    for (const { header } of subagents) expect(tree).toContain(`${header.id} subagent`);
    expect(tree).toContain('as the store held them when this file was written');
    const verify = await page.locator('[data-testid="sp-verify"]').textContent();
    expect(verify).toMatch(/when this file was written/);
    const totals = await page.locator('[data-testid="sp-totals"]').textContent();
    expect(totals).toMatch(/Cost\d+\.\d+ USD/);
    expect(await page.locator('[data-testid="sp-window"]').textContent()).toContain(
      'window 200,000 tokens (known window of claude-',
    );
    expect(await page.locator('[data-testid="sp-diff"]').textContent()).toContain(
      'The branch diff needs the served viewer',
    );
    await screenshot(page, 'exported-session-subagents', true);
    expectNoIncidents(incidents);
    await page.close();
  });

  it('updates its totals as a served session grows, and says verify saw a shorter log', async () => {
    const { dir, storeUrl, browser } = setup;
    const store = await openStore(storeUrl);
    const turn = async (input: string) => {
      const session = await openSession(store, 'growing');
      await runTurn({
        session,
        model: scriptedModel([
          { toolCalls: [{ id: `c-${input}`, name: 'lookup', args: {} }] },
          { text: `done: ${input}` },
        ]),
        tools: [defineTool({ name: 'lookup', parameters: z.object({}), execute: () => 'found' })],
        input,
      });
      await session.close();
    };
    await turn('first');
    const { url, child } = await serveView(storeUrl, 'growing', dir);
    try {
      const { page, incidents } = await guardedPage(browser);
      await page.goto(url);
      await expect
        .poll(() => page.locator('#verify-status').textContent(), SERVER_ANSWER)
        .toMatch(/^verify: ok/);
      await page.keyboard.press('6');
      const totals = page.locator('[data-testid="sp-totals"]');
      await expect.poll(() => totals.textContent(), SERVER_ANSWER).toContain('Model calls2');
      expect(await page.locator('[data-testid="tool-calls"]').textContent()).toContain('lookup1');
      await turn('second');
      await expect.poll(() => totals.textContent(), SERVER_ANSWER).toContain('Model calls4');
      expect(await totals.textContent()).toContain('Turns2');
      expect(await page.locator('[data-testid="tool-calls"]').textContent()).toContain('lookup2');
      expect(await page.locator('[data-testid="sp-verify"]').textContent()).toMatch(
        /the log has grown to \d+ events since/,
      );
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill('SIGINT');
      await store.close();
    }
  });

  it('totals an AI SDK middleware session priced at the rates it recorded', async () => {
    const { dir, storeUrl, browser } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const { events } = await store.load(ids.sdk);
    await store.close();
    const usage = events.flatMap((event) => {
      const data = event.data as { usage?: { inputTokens?: number; outputTokens?: number } };
      return event.type === 'assistant/message' && data.usage !== undefined ? [data.usage] : [];
    });
    expect(usage).toHaveLength(2);
    const output = usage.reduce((sum, u) => sum + (u.outputTokens ?? 0), 0);
    const { url, child } = await serveView(storeUrl, ids.sdk, dir);
    try {
      const { page, incidents } = await guardedPage(browser);
      await page.goto(url);
      await page.locator('.row').first().waitFor();
      await page.keyboard.press('6');
      const totals = page.locator('[data-testid="sp-totals"]');
      await expect
        .poll(() => totals.textContent(), SERVER_ANSWER)
        .toContain(`Output${output.toLocaleString('en-US')}`);
      expect(await totals.textContent()).toMatch(/Cost0\.\d+ USD/);
      expect(await totals.textContent()).toContain('Model calls2');
      expect(await page.locator('[data-testid="tool-calls"]').textContent()).toContain(
        'updateIssueList',
      );
      const recorded = await page.locator('[data-testid="window-recorded"]').textContent();
      expect(recorded).toMatch(
        /last call's input, as the provider reported it \(exact\): [\d,]+ tokens at #\d+ · \d+\.\d%/,
      );
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill('SIGINT');
    }
  });
});
