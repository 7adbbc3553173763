/**
 * A redacted session in the viewer: its HTML export shows `[redacted]` where the content was,
 * holds no byte of the erased text, and the detail of an erased event names the redaction that
 * erased it and why.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { openStore, redact } from '../../src/store/index.js';
import { cli } from '../cli/helpers.js';
import { MARKER, MARKER_PATTERN, recordGovernedSession } from '../store/governed-session.js';
import { describeBrowser, expectNoIncidents, guardedPage, useBrowserAndStore } from './browser.js';

describeBrowser('a redacted session in the viewer', () => {
  const setup = useBrowserAndStore(async (storeUrl) => {
    const store = await openStore(storeUrl);
    await recordGovernedSession(store, 'erased');
    await redact(store, 'erased', { match: MARKER_PATTERN }, { reason: 'GDPR request 2026-7' });
    await store.close();
  });

  it('shows placeholders, holds no erased byte, and names the redaction on an erased event', async () => {
    const { dir, storeUrl, browser } = setup;
    const exported = cli(['--store', storeUrl, 'export', 'erased', '--format', 'html'], {
      cwd: dir,
    });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).not.toContain(MARKER);
    const file = join(dir, 'erased.html');
    writeFileSync(file, exported.stdout);
    const { page, incidents } = await guardedPage(browser);
    await page.goto(pathToFileURL(file).href);
    const first = page.locator('.row').first();
    await first.waitFor();
    await expect.poll(() => first.textContent()).toContain('[redacted]');
    await first.click();
    const note = page.locator('[data-testid="redacted"]');
    await note.waitFor();
    expect(await note.textContent()).toMatch(
      /Its content was erased \(shown as \[redacted\]\) by #\d+: GDPR request 2026-7/,
    );
    // The conversation marks each erased message and shows its placeholder.
    await page.keyboard.press('4');
    const erased = page.locator('.conversation .message.redacted').first();
    await erased.waitFor();
    expect(await erased.locator('[data-testid="conversation-redacted"]').textContent()).toMatch(
      /^content erased \(shown as \[redacted\]\) by #\d+$/,
    );
    expect(await erased.textContent()).toContain('[redacted]');
    expect(await page.locator('.conversation').textContent()).not.toContain(MARKER);
    expectNoIncidents(incidents);
    await page.close();
  });
});
