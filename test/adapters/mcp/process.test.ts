/**
 * The loop against real MCP servers started by the test: an SDK `McpServer` in a child process
 * over stdio, and one over streamable HTTP. The turns are recorded in a JSONL store, read back,
 * and must be valid logs naming the server in every call; a server that dies mid-call ends the
 * call at once with MCP_SERVER_GONE.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MCP_TOOL_ERROR, type McpToolSet, mcpTools } from '../../../src/adapters/mcp/index.js';
import { runTurn } from '../../../src/agent/index.js';
import type { ToolCallData, ToolResultData } from '../../../src/core/index.js';
import { inspectSession, openSession, openStore } from '../../../src/store/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { dataOf, expectValidLog } from '../../agent/helpers.js';
import { toolContext as context } from './helpers.js';

const fixtureServer = join(import.meta.dirname, 'fixture-server.ts');
const dir = mkdtempSync(join(tmpdir(), 'palimpsest-mcp-loop-'));
const sets: McpToolSet[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const set of sets.splice(0)) await set.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function stdioTools(): Promise<McpToolSet> {
  const set = await mcpTools({
    name: 'fixture',
    command: process.execPath,
    args: ['--import', 'tsx', fixtureServer],
    stderr: 'ignore',
  });
  sets.push(set);
  return set;
}

/** Starts the HTTP fixture; resolves with its URL and a promise of its first hanging call. */
async function httpServer(): Promise<{ url: string; child: ChildProcess; hanging: Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixtureServer, '--http'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const hanging = new Promise<void>((resolve) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('hanging')) resolve();
    });
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the fixture server exited with ${code}`)));
  });
  return { url, child, hanging };
}

/** Runs one turn that calls `add` and `fail` of `set` into a JSONL session, and reads it back. */
async function recordTurn(set: McpToolSet, id: string) {
  const store = await openStore(`jsonl:${dir}`);
  const live = await openSession(store, id);
  const prefix = `${set.server}__`;
  await runTurn({
    session: live,
    model: scriptedModel([
      {
        toolCalls: [
          { name: `${prefix}add`, args: { a: 19, b: 23 } },
          { name: `${prefix}fail`, args: {} },
        ],
      },
      { text: 'Done.' },
    ]),
    input: 'Add, then fail.',
    tools: set.tools,
  });
  await live.close();
  const stored = await inspectSession(store, id);
  await store.close();
  return stored;
}

describe('the loop with an MCP server over stdio', () => {
  it('records the server’s tool calls, named after it, in a valid stored log', async () => {
    const session = await recordTurn(await stdioTools(), 'stdio-turn');
    expectValidLog(session);
    expect(dataOf<ToolCallData>(session, 'tool/call').map((call) => call.name)).toEqual([
      'fixture__add',
      'fixture__fail',
    ]);
    const [sum, failed] = dataOf<ToolResultData>(session, 'tool/result');
    expect(sum?.message.content[0]).toMatchObject({ content: [{ type: 'text', text: '42' }] });
    expect(failed?.error?.code).toBe(MCP_TOOL_ERROR.toolError);
  });

  it('answers MCP_SERVER_GONE when the server process dies mid-call', async () => {
    const set = await stdioTools();
    const die = set.tools.find((tool) => tool.name === 'fixture__die');
    const run = await die?.run('{}', context());
    expect(run?.error).toMatchObject({ code: MCP_TOOL_ERROR.serverGone });
    // Later calls on the dead connection say the same.
    const add = set.tools.find((tool) => tool.name === 'fixture__add');
    expect((await add?.run('{"a":1,"b":2}', context()))?.error?.code).toBe(
      MCP_TOOL_ERROR.serverGone,
    );
  });
});

describe('the loop with an MCP server over streamable HTTP', () => {
  it('records the server’s tool calls, named after it, in a valid stored log', async () => {
    const { url } = await httpServer();
    const set = await mcpTools({ name: 'remote', url });
    sets.push(set);
    const session = await recordTurn(set, 'http-turn');
    expectValidLog(session);
    expect(dataOf<ToolCallData>(session, 'tool/call').map((call) => call.name)).toEqual([
      'remote__add',
      'remote__fail',
    ]);
    const [sum] = dataOf<ToolResultData>(session, 'tool/result');
    expect(sum?.message.content[0]).toMatchObject({ content: [{ type: 'text', text: '42' }] });
  });

  it('answers MCP_SERVER_GONE when the server is killed mid-call, not at the timeout', async () => {
    const { url, child, hanging } = await httpServer();
    const set = await mcpTools({ name: 'remote', url }, { timeoutMs: 600_000 });
    sets.push(set);
    const hang = set.tools.find((tool) => tool.name === 'remote__hang');
    const run = hang?.run('{}', context());
    await hanging;
    child.kill('SIGKILL');
    expect((await run)?.error?.code).toBe(MCP_TOOL_ERROR.serverGone);
  });
});
