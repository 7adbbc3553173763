/**
 * `palimpsest cost` and the COST column of `ls` on a real Claude Code transcript (1.0.108, two
 * Task subagents, claude-sonnet-4): the amounts equal the file's own usage priced by hand at
 * Anthropic's published rates, each message counted once, subagents rolled up, forks not counted
 * twice; and bad input gets its exit code.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { CLAUDE_CODE_SUBAGENTS } from '../import/corpus-files.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());
const url = stores.urls.jsonl;
const file = CLAUDE_CODE_SUBAGENTS.path;
const id = CLAUDE_CODE_SUBAGENTS.id;

/** The file's usage priced by hand: each assistant message once, at Sonnet 4's rates. */
function handPriced(): { calls: number; dollars: number } {
  const usage = new Map<string, Record<string, number>>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const message = JSON.parse(line).message;
    if (message?.role === 'assistant' && message.usage !== undefined)
      usage.set(message.id, message.usage);
  }
  let micro = 0;
  for (const u of usage.values()) {
    micro +=
      (u.input_tokens ?? 0) * 3 +
      (u.cache_creation_input_tokens ?? 0) * 3.75 +
      (u.cache_read_input_tokens ?? 0) * 0.3 +
      (u.output_tokens ?? 0) * 15;
  }
  return { calls: usage.size, dollars: micro / 1e6 };
}

interface CostJson {
  sessionId: string;
  link?: string;
  currency: string;
  total: { calls: number; cost: { total: number } };
  calls: Array<{
    model: string;
    price?: { table: string; effectiveFrom: string; recorded: boolean };
  }>;
  rolledUp: { calls: number; unpricedCalls: number; cost: number };
  children: CostJson[];
}

function costJson(args: string[]): CostJson {
  const run = cli(['cost', ...args, '--json', '--store', url], { cwd: stores.dir });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return (JSON.parse(run.stdout) as CostJson[])[0] as CostJson;
}

describe('palimpsest cost on an imported Claude Code transcript with subagents', () => {
  beforeAll(() => {
    const imported = cli(['import', file, '--from', 'claude-code', '--store', url], {
      cwd: stores.dir,
    });
    expect(imported.code).toBe(0);
  });

  it('rolls the subagents up to what the file reports, priced at the rates of its day', () => {
    const cost = costJson([id]);
    const expected = handPriced();
    expect(cost.children.map((child) => child.link)).toEqual(['subagent', 'subagent']);
    expect(cost.rolledUp.calls).toBe(expected.calls);
    expect(cost.rolledUp.cost).toBeCloseTo(expected.dollars, 9);
    expect(cost.currency).toBe('USD');
    expect(new Set(cost.calls.map((call) => JSON.stringify([call.model, call.price])))).toEqual(
      new Set([
        JSON.stringify([
          'claude-sonnet-4-20250514',
          { table: 'palimpsest-2026-12', effectiveFrom: '2025-05-22', recorded: false },
        ]),
      ]),
    );
  });

  it('shows each session’s amount in the COST column of ls', () => {
    const listed = cli(['ls', '--json', '--store', url], { cwd: stores.dir });
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; cost: { amount: number } }>;
    const parent = costJson([id]);
    const byId = new Map(rows.map((row) => [row.id, row.cost.amount]));
    expect(byId.get(id)).toBeCloseTo(parent.total.cost.total, 9);
    for (const child of parent.children) {
      expect(byId.get(child.sessionId)).toBeCloseTo(child.total.cost.total, 9);
    }
    const text = cli(['ls', '--store', url], { cwd: stores.dir }).stdout;
    expect(text).toMatch(new RegExp(`${id}\\s.*\\s${parent.total.cost.total.toFixed(4)} USD\\s`));
  });

  it('counts a fork’s inherited calls once, under its parent', async () => {
    const model = () =>
      scriptedModel([{ text: 'Yes.', usage: { inputTokens: 1_000_000, outputTokens: 0 } }]);
    const store = await openStore(url);
    const parent = await openSession(store, 'loop');
    await runTurn({ session: parent, model: model(), input: 'One?' });
    const boundary = parent.seq - 1;
    await runTurn({ session: parent, model: model(), input: 'Two?' });
    await parent.close();
    const forked = cli(
      ['fork', 'loop', '--at', String(boundary), '--id', 'loop-fork', '--store', url],
      {
        cwd: stores.dir,
      },
    );
    expect(forked.code).toBe(0);
    const fork = await openSession(store, 'loop-fork');
    await runTurn({ session: fork, model: model(), input: 'Three?' });
    await fork.close();
    await store.close();
    const prices = join(stores.dir, 'scripted-prices.json');
    writeFileSync(
      prices,
      JSON.stringify({
        name: 'scripted',
        currency: 'USD',
        entries: [
          {
            provider: 'scripted',
            model: 'scripted-model',
            effectiveFrom: '2000-01-01',
            rates: { input: 1, output: 1 },
          },
        ],
      }),
    );
    const cost = costJson(['loop', '--prices', prices]);
    expect(cost.total.calls).toBe(2);
    const child = cost.children.find((entry) => entry.sessionId === 'loop-fork');
    expect(child).toMatchObject({ link: 'fork', total: { calls: 2 }, rolledUp: { calls: 1 } });
    expect(cost.rolledUp).toEqual({ calls: 3, unpricedCalls: 0, cost: 3 });
  });

  it('prints the dearest surface entries with --by entry', () => {
    const run = cli(['cost', id, '--by', 'entry', '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^SEQ\s+ON SURFACE\s+CALLS\s+INPUT TOKENS\s+RENT\s+ENTRY$/m);
    expect(run.stdout).toMatch(/tool Task: /);
  });

  it('prices with a table passed by --prices, and refuses a bad one or a bad view', () => {
    const table = join(stores.dir, 'prices.json');
    writeFileSync(
      table,
      JSON.stringify({
        name: 'negotiated',
        currency: 'EUR',
        entries: [
          {
            provider: 'anthropic',
            model: 'claude-sonnet-4',
            effectiveFrom: '2025-01-01',
            rates: { input: 1, output: 1 },
          },
        ],
      }),
    );
    const cost = costJson([id, '--prices', table]);
    expect(cost.currency).toBe('EUR');
    expect(cost.calls[0]?.price?.table).toBe('negotiated');

    writeFileSync(
      table,
      JSON.stringify({
        name: 'x',
        currency: 'EUR',
        entries: [
          { provider: 'a', model: 'b', effectiveFrom: 'soon', rates: { input: 1, output: 1 } },
        ],
      }),
    );
    const bad = cli(['cost', id, '--prices', table, '--store', url], { cwd: stores.dir });
    expect(bad.code).toBe(7);
    expect(bad.stderr).toMatch(/entries\[0\]\.effectiveFrom as YYYY-MM-DD, found "soon"/);
    const missing = cli(['cost', id, '--prices', join(stores.dir, 'none.json'), '--store', url], {
      cwd: stores.dir,
    });
    expect(missing.code).toBe(3);
    const view = cli(['cost', id, '--by', 'week', '--store', url], { cwd: stores.dir });
    expect(view.code).toBe(2);
    expect(view.stderr).toMatch(/--by expects one of session, turn, model, entry, found week/);
  });

  it('exits 9 for a session whose calls reported no usage', async () => {
    const store = await openStore(url);
    await store.create({ version: 1, id: 'no-calls', createdAt: 1 });
    await store.close();
    const run = cli(['cost', 'no-calls', '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(9);
    expect(run.stderr).toMatch(/no model call reported usage/);
  });
});
