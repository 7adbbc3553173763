/**
 * A real MCP server in a child process, made with the SDK's `McpServer`: over stdio by default,
 * or with `--http` over streamable HTTP on 127.0.0.1 (its URL the first line on stdout).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { registerFixtureTools } from './fixture-tools.js';

function fixtureServer(): McpServer {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' });
  // A line on stderr says a hanging call arrived, so a test knows when to kill the process.
  registerFixtureTools(server, () => process.stderr.write('hanging\n'));
  return server;
}

if (process.argv.includes('--http')) {
  const http = createServer(async (request, response) => {
    const server = fixtureServer();
    const transport = new StreamableHTTPServerTransport({});
    response.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(request, response);
  });
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`);
  });
} else {
  await fixtureServer().connect(new StdioServerTransport());
}
