/**
 * The accessibility check of the viewer's tests: axe-core, evaluated in the page by the test
 * (through the DevTools protocol, so the page's Content-Security-Policy, which lets no other
 * script run, stays as it is), fails on every serious or critical violation: missing labels,
 * names and roles, focus order, colour contrast.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/** One violation as a failing test shows it: the rule, its impact and the first elements. */
function described(violation: AxeResults['violations'][number]): string {
  const nodes = violation.nodes
    .slice(0, 3)
    .map((node) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`.replace(/\s+/g, ' '));
  return `${violation.id} (${violation.impact}): ${violation.help} — ${nodes.join(' | ')}`;
}

/**
 * Fails when axe finds a serious or critical violation on `page` as it now shows. `context`
 * names the state checked (`served conversation, dark`), for the failure message.
 */
export async function expectAccessible(page: Page, context: string): Promise<void> {
  const loaded = await page.evaluate(() => 'axe' in globalThis);
  if (!loaded) await page.evaluate(axeSource);
  const results = await page.evaluate(async () => {
    const { axe } = globalThis as unknown as { axe: { run(): Promise<AxeResults> } };
    const found = await axe.run();
    return { violations: found.violations };
  });
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  expect(serious.map(described), `accessibility of the ${context}`).toEqual([]);
}
