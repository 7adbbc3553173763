/**
 * Sessions imported from Claude Code, Codex and pi open in the viewer like recorded ones: the
 * HTML export of each, from file://, shows its surface, its transcript and its raw log, and
 * nothing on the page misbehaves.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { foldSurface } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { cli } from '../cli/helpers.js';
import { describeBrowser, expectNoIncidents, guardedPage, useBrowserAndStore } from './browser.js';

const HARNESSES = ['claude-code', 'codex', 'pi'] as const;
const fixture = (harness: string): string =>
  join(import.meta.dirname, '..', 'import', 'fixtures', `${harness}.jsonl`);

describeBrowser('imported sessions in the viewer', () => {
  const setup = useBrowserAndStore(async (storeUrl, dir) => {
    for (const harness of HARNESSES) {
      const imported = cli(['--store', storeUrl, 'import', '--from', harness, fixture(harness)], {
        cwd: dir,
      });
      if (imported.code !== 0) throw new Error(`import --from ${harness}: ${imported.stderr}`);
    }
  });

  it('shows the surface, transcript and raw log of every imported session, exported to file://', async () => {
    const { dir, storeUrl, browser } = setup;
    const store = await openStore(storeUrl, { readOnly: true });
    const { sessions } = await store.list();
    const harnesses = new Set<string>();
    for (const { header } of sessions) {
      const { events } = await store.load(header.id);
      harnesses.add(JSON.stringify(header.metadata ?? {}).match(/claude-code|codex|pi/)?.[0] ?? '');
      const exported = cli(['--store', storeUrl, 'export', header.id, '--format', 'html'], {
        cwd: dir,
      });
      expect(exported.code, exported.stderr).toBe(0);
      const file = join(dir, `${header.id}.html`);
      writeFileSync(file, exported.stdout);
      const { page, incidents } = await guardedPage(browser);
      await page.goto(pathToFileURL(file).href);
      const onSurface = foldSurface(events).seqs.length;
      await expect
        .poll(() => page.locator('#stats').textContent())
        .toContain(`${onSurface} on the surface`);
      expect(await page.locator('#stats').textContent()).toContain(`${events.length} events`);
      await page.locator('.row').first().waitFor();
      for (const view of ['transcript', 'raw']) {
        await page.locator(`#tabs [data-view="${view}"]`).click();
        await page.locator('.row').first().waitFor();
      }
      expectNoIncidents(incidents);
      await page.close();
    }
    await store.close();
    expect([...harnesses].sort()).toEqual([...HARNESSES].sort());
  });
});
