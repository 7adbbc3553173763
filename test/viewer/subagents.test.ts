/**
 * Subagents in the viewer, in a real browser: a parent's tool result links to the child session
 * its call ran in, the child names its parent and call and links back.
 */
import { expect, it } from 'vitest';
import { runTurn, subagentTool } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import {
  describeBrowser,
  expectNoIncidents,
  guardedPage,
  serveView,
  useBrowserAndStore,
} from './browser.js';

describeBrowser('subagent sessions in the viewer', () => {
  const setup = useBrowserAndStore(async (storeUrl) => {
    const store = await openStore(storeUrl);
    const parent = await openSession(store, 'chat');
    await runTurn({
      session: parent,
      model: scriptedModel([
        { toolCalls: [{ id: 'call_a', name: 'researcher', args: { task: 'Find the capital.' } }] },
        { text: 'It is Paris.' },
      ]),
      tools: [
        subagentTool({
          name: 'researcher',
          description: 'Researches one question.',
          model: scriptedModel([{ text: 'The capital is Paris.' }]),
        }),
      ],
      input: 'What is the capital of France?',
    });
    await parent.close();
    await store.close();
  });

  it('goes from a tool result to the child session it ran in, and back to the parent', async () => {
    const { dir, storeUrl, browser } = setup;
    const { url, child } = await serveView(storeUrl, 'chat', dir);
    try {
      const { page, incidents } = await guardedPage(browser);
      await page.goto(url);
      await page.locator('.row', { hasText: 'The capital is Paris.' }).click();
      const link = page.locator('[data-testid="child-session"] a');
      expect(await link.textContent()).toBe('chat/subagents/call_a');
      await link.click();
      await expect.poll(() => page.locator('#title').textContent()).toBe('chat/subagents/call_a');
      await page.locator('.row', { hasText: 'Find the capital.' }).waitFor();
      expect(await page.locator('[data-testid="subagent-of"]').textContent()).toBe(
        'subagent of chat (call call_a)',
      );
      await page.locator('[data-testid="subagent-of"] a').click();
      await expect.poll(() => page.locator('#title').textContent()).toBe('chat');
      await page.locator('.row', { hasText: 'It is Paris.' }).waitFor();
      expectNoIncidents(incidents);
      await page.close();
    } finally {
      child.kill('SIGINT');
    }
  });
});
