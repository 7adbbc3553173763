/**
 * The tools of the MCP server the loop is tested against: one that answers, one that answers
 * with an error result, one that never answers (until its server is closed or killed), and one
 * that kills its own process mid-call.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** Registers the fixture's tools on `server`; `hanging` is called when `hang` starts. */
export function registerFixtureTools(server: McpServer, hanging: () => void = () => {}): void {
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool('fail', { description: 'Always fails.' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'the disk is full' }],
  }));
  server.registerTool('hang', { description: 'Never answers.' }, () => {
    hanging();
    return new Promise(() => {});
  });
  server.registerTool('die', { description: 'Kills its server mid-call.' }, () => {
    setTimeout(() => process.exit(3), 10);
    return new Promise(() => {});
  });
}
