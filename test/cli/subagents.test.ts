/**
 * Subagent sessions in the CLI, the built binary run as a process: `ls --tree` hangs each child
 * under its parent (the loop's own subagents, forks, and imported Claude Code subagents alike)
 * with usage rolled up; `show` names a parent's children and a child's parent; `verify` passes
 * on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTurn, subagentTool } from '../../src/agent/index.js';
import { forkSession } from '../../src/core/index.js';
import { openSession, openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { CLAUDE_CODE_SUBAGENTS } from '../import/corpus-files.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
afterAll(() => stores.remove());
const url = stores.urls.jsonl;
const claudeFile = CLAUDE_CODE_SUBAGENTS.path;
const claudeId = CLAUDE_CODE_SUBAGENTS.id;

interface TreeRow {
  id: string;
  parent: string | null;
  link: 'subagent' | 'fork' | null;
  children: string[];
  usage: { calls: number; tokens: Record<string, number> };
  total: { usage: { calls: number; tokens: Record<string, number> } };
}

beforeAll(async () => {
  const store = await openStore(url);
  const researcher = subagentTool({
    name: 'researcher',
    description: 'Researches one question.',
    model: scriptedModel([{ text: 'Found it.', usage: { inputTokens: 10, outputTokens: 5 } }], {
      loop: true,
    }),
  });
  const parent = await openSession(store, 'chat');
  await runTurn({
    session: parent,
    model: scriptedModel([
      {
        toolCalls: [
          { id: 'call_a', name: 'researcher', args: { task: 'One.' } },
          { id: 'call_b', name: 'researcher', args: { task: 'Two.' } },
        ],
        usage: { inputTokens: 100, outputTokens: 20 },
      },
      { text: 'Both found.', usage: { inputTokens: 200, outputTokens: 10 } },
    ]),
    tools: [researcher],
    input: 'Research both.',
  });
  const fork = forkSession(parent, undefined, { id: 'chat-fork' });
  await store.create(fork.header);
  await store.append(fork.id, fork.events, { expectedSeq: 0 });
  await parent.close();
  await store.close();
  const imported = cli(['import', claudeFile, '--from', 'claude-code', '--store', url], {
    cwd: stores.dir,
  });
  expect(imported.code).toBe(0);
}, 120_000);

describe('palimpsest ls --tree', () => {
  it('hangs subagents and forks under their parents, with usage rolled up over subagents', () => {
    const run = cli(['ls', '--tree', '--json', '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as TreeRow[];
    const row = (id: string) => rows.find((r) => r.id === id) as TreeRow;
    expect(row('chat')).toMatchObject({
      parent: null,
      link: null,
      children: expect.arrayContaining([
        'chat/subagents/call_a',
        'chat/subagents/call_b',
        'chat-fork',
      ]),
    });
    expect(row('chat/subagents/call_a')).toMatchObject({ parent: 'chat', link: 'subagent' });
    expect(row('chat-fork')).toMatchObject({ parent: 'chat', link: 'fork' });
    // Two steps of its own and one call in each subagent; the fork's copy is not added.
    expect(row('chat').usage.calls).toBe(2);
    expect(row('chat').total.usage.calls).toBe(4);
    expect(row('chat').total.usage.tokens).toMatchObject({ inputTokens: 320, outputTokens: 40 });
    // Depth first: every child right after its parent's subtree begins.
    const order = rows.map((r) => r.id);
    expect(order.indexOf('chat/subagents/call_a')).toBeGreaterThan(order.indexOf('chat'));

    const claude = row(claudeId);
    expect(claude.children.length).toBe(2);
    for (const child of claude.children) {
      expect(row(child)).toMatchObject({ parent: claudeId, link: 'subagent' });
    }
    expect(claude.total.usage.calls).toBeGreaterThan(claude.usage.calls);
  });

  it('indents children under their parent in the table', () => {
    const run = cli(['ls', '--tree', '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const parent = lines.findIndex((line) => line.startsWith('chat '));
    // The two children of one step were created together: either may come first.
    expect(lines.slice(parent + 1, parent + 3).sort()).toEqual([
      expect.stringMatching(/^ {2}└ chat\/subagents\/call_a \(subagent\)/),
      expect.stringMatching(/^ {2}└ chat\/subagents\/call_b \(subagent\)/),
    ]);
    expect(lines.some((line) => /^ {2}└ chat-fork \(fork\)/.test(line))).toBe(true);
    expect(lines[0]).toContain('TOTAL');
  });
});

describe('palimpsest show and verify on subagent sessions', () => {
  it('names the children of a parent with their call and how they ended', () => {
    const run = cli(['show', 'chat', '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      'subagent researcher (call call_a) → chat/subagents/call_a: completed',
    );
    expect(run.stdout).toContain(
      'subagent researcher (call call_b) → chat/subagents/call_b: completed',
    );
    // The fork copies the calls that ran the subagents; they still hang under this session.
    expect(run.stdout).toMatch(
      /cost with its 3 child session\(s\): .* over 4 call\(s\), 4 of them unpriced/,
    );
  });

  it('names the parent and call of a child, whose transcript is its own task and answer', () => {
    const run = cli(['show', 'chat/subagents/call_b', '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('subagent of chat (call call_b)');
    expect(run.stdout).toContain('Two.');
    expect(run.stdout).toContain('Found it.');
  });

  it('names the children of an imported Claude Code session the same way', () => {
    const run = cli(['show', claudeId, '--store', url], { cwd: stores.dir });
    expect(run.code).toBe(0);
    const named = run.stdout
      .split('\n')
      .filter((line) => line.startsWith('subagent ') && line.includes(`→ ${claudeId}/subagents/`));
    expect(named).toHaveLength(2);
    for (const line of named) expect(line).toMatch(/^subagent \S+ \(call \S+\) → .*: completed$/);
  });

  it('verifies parent and children', () => {
    const run = cli(
      ['verify', 'chat', 'chat/subagents/call_a', 'chat/subagents/call_b', '--store', url],
      { cwd: stores.dir },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});
