/**
 * `mcpTools`: an MCP server's tools (an SDK `McpServer`, here in process over the SDK's linked
 * in-memory transports) run by palimpsest's loop and recorded like any tool, the server named
 * in each call. The same against real servers in child processes is mcp-process.test.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MCP_TOOL_ERROR, McpAdapterError, mcpTools } from '../../../src/adapters/mcp/index.js';
import { runTurn } from '../../../src/agent/index.js';
import { Session, type ToolCallData, type ToolResultData } from '../../../src/core/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { dataOf, expectValidLog } from '../../agent/helpers.js';
import { registerFixtureTools } from './fixture-tools.js';
import { toolContext as context } from './helpers.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function fixture(onHang?: () => void): Promise<{ client: Client; server: McpServer }> {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' });
  registerFixtureTools(server, onHang);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return { client, server };
}

describe('an MCP server’s tools in the loop', () => {
  it('offers each tool under the server’s name, with the server’s schema', async () => {
    const set = await mcpTools({ name: 'calc', client: (await fixture()).client });
    expect(set.server).toBe('calc');
    expect(set.tools.map((tool) => tool.name)).toEqual([
      'calc__add',
      'calc__fail',
      'calc__hang',
      'calc__die',
    ]);
    const add = set.tools[0];
    expect(add?.description).toBe('[MCP server calc] Adds two numbers.');
    expect(add?.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
  });

  it('records the calls and results like any tool, and a server error as a tool error', async () => {
    const set = await mcpTools({ name: 'calc', client: (await fixture()).client });
    const session = Session.create({ id: 'mcp-loop' });
    await runTurn({
      session,
      model: scriptedModel([
        {
          toolCalls: [
            { name: 'calc__add', args: { a: 2, b: 40 } },
            { name: 'calc__fail', args: {} },
          ],
        },
        { text: 'The sum is 42; the other tool failed.' },
      ]),
      input: 'Add 2 and 40, then try the other tool.',
      tools: set.tools,
    });
    expectValidLog(session);
    const calls = dataOf<ToolCallData>(session, 'tool/call');
    expect(calls.map((call) => call.name)).toEqual(['calc__add', 'calc__fail']);
    const [sum, failed] = dataOf<ToolResultData>(session, 'tool/result');
    expect(sum?.message.content[0]).toMatchObject({ content: [{ type: 'text', text: '42' }] });
    expect(sum?.error).toBeUndefined();
    expect(failed?.error).toMatchObject({
      code: MCP_TOOL_ERROR.toolError,
      message: "The MCP server 'calc' answered with an error: the disk is full",
    });
  });

  it('turns a call the server refuses into MCP_CALL_FAILED', async () => {
    const set = await mcpTools({ name: 'calc', client: (await fixture()).client });
    const add = set.tools[0];
    const run = await add?.run('{"a":"two","b":1}', context());
    // The SDK's McpServer answers arguments that fail its schema with an error result.
    expect(run?.error?.code).toBe(MCP_TOOL_ERROR.toolError);
    expect(run?.error?.message).toMatch(/Input validation error/);
  });

  it('ends a call at once with MCP_SERVER_GONE when the server closes mid-call', async () => {
    let started: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { client, server } = await fixture(() => started());
    const set = await mcpTools({ name: 'calc', client }, { timeoutMs: 600_000 });
    const hang = set.tools.find((tool) => tool.name === 'calc__hang');
    const run = hang?.run('{}', context());
    await hanging;
    await server.close();
    expect((await run)?.error).toMatchObject({
      code: MCP_TOOL_ERROR.serverGone,
      message: expect.stringContaining("The MCP server 'calc' closed or stopped"),
    });
  });

  it('answers a cancelled turn’s call with TOOL_ABORTED', async () => {
    let started: () => void = () => {};
    const hanging = new Promise<void>((resolve) => {
      started = resolve;
    });
    const set = await mcpTools({ name: 'calc', client: (await fixture(() => started())).client });
    const hang = set.tools.find((tool) => tool.name === 'calc__hang');
    const controller = new AbortController();
    const run = hang?.run('{}', context(controller.signal));
    await hanging;
    controller.abort();
    expect((await run)?.error?.code).toBe('TOOL_ABORTED');
  });

  it('keeps only the tools asked for', async () => {
    const set = await mcpTools(
      { name: 'calc', client: (await fixture()).client },
      { only: ['add'] },
    );
    expect(set.tools.map((tool) => tool.name)).toEqual(['calc__add']);
  });

  it('refuses a server name that cannot prefix tool names, and a config without a server', async () => {
    const { client } = await fixture();
    await expect(mcpTools({ name: 'my server', client })).rejects.toThrow(
      expect.objectContaining({ code: 'INVALID_SERVER' }),
    );
    await expect(mcpTools({ name: 'x'.repeat(41), client })).rejects.toThrow(McpAdapterError);
    await expect(mcpTools({ name: 'calc', url: 'ftp://user:secret@example.com/' })).rejects.toThrow(
      /expected an http\(s\) URL, found something else$/,
    );
  });

  it('says CONNECT_FAILED when the server cannot be started', async () => {
    await expect(
      mcpTools({ name: 'ghost', command: '/nonexistent/mcp-server', stderr: 'ignore' }),
    ).rejects.toThrow(expect.objectContaining({ code: 'CONNECT_FAILED' }));
  });
});
