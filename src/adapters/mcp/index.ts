/**
 * palimpsest/mcp — the Model Context Protocol, both ways, with the official SDK
 * (`@modelcontextprotocol/sdk`): a read-only MCP server over a store (list, transcript, surface,
 * why, cost, surface diff; stdio, or streamable HTTP on loopback behind a token), and an MCP
 * server's tools as tools of palimpsest's loop. See docs/mcp.md.
 *
 * @packageDocumentation
 */
export {
  MCP_NAME_SEPARATOR,
  type McpClientConfig,
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpStdioServerConfig,
  type McpToolSet,
  type McpToolsOptions,
  mcpTools,
} from './client-tools.js';
export { MCP_TOOL_ERROR, McpAdapterError, type McpAdapterErrorCode } from './errors.js';
export {
  MCP_PATH,
  type McpHttpOptions,
  type McpHttpServer,
  parseLoopbackAddress,
  serveMcpHttp,
} from './http.js';
export { transcriptUri } from './resources.js';
export { DEFAULT_MAX_CHARS } from './results.js';
export { type McpScope, ScopedSessions } from './scope.js';
export {
  createMcpServer,
  type McpServerOptions,
  type McpStdioServer,
  serveMcpStdio,
} from './server.js';
export type { ServerTool, ServerToolContext } from './server-tool.js';
