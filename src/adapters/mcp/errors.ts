/**
 * Typed errors of the MCP server and of the MCP client tools.
 */
import { PalimpsestError } from '../../core/index.js';

/**
 * Stable codes of {@link McpAdapterError}:
 * - `NOT_LOOPBACK`: the HTTP server was asked to listen on an address that is not loopback; it
 *   serves this machine only.
 * - `INVALID_ADDRESS`: an HTTP address that is not `HOST:PORT`.
 * - `INVALID_TOKEN`: a bearer token that is too short, or holds characters a header cannot.
 * - `INVALID_SCOPE`: a server option of the wrong shape (a relative project directory, an empty
 *   session list, `maxChars` under 200).
 * - `SESSION_NOT_FOUND`: no session of that id in scope (out-of-scope sessions answer the same,
 *   so their ids do not leak).
 * - `EVENT_NOT_FOUND`: the session has no event of that seq.
 * - `INVALID_ARGUMENTS`: a tool argument the schema allows but the tool cannot use (a cursor
 *   it did not issue).
 * - `INVALID_SERVER`: an MCP server configuration `mcpTools` cannot use (no command or URL, a
 *   name that does not fit tool names, two tools that map to one name).
 * - `CONNECT_FAILED`: the MCP server could not be started or reached, or refused to initialize.
 */
export type McpAdapterErrorCode =
  | 'NOT_LOOPBACK'
  | 'INVALID_ADDRESS'
  | 'INVALID_TOKEN'
  | 'INVALID_SCOPE'
  | 'SESSION_NOT_FOUND'
  | 'EVENT_NOT_FOUND'
  | 'INVALID_ARGUMENTS'
  | 'INVALID_SERVER'
  | 'CONNECT_FAILED';

/** Something the MCP server or client could not do as asked, with a stable `code`. */
export class McpAdapterError extends PalimpsestError {
  static override readonly kind: string = 'McpAdapterError';
  declare readonly code: McpAdapterErrorCode;

  constructor(code: McpAdapterErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * Codes of the tool errors the MCP client tools record (`tool/result` `data.error.code`):
 * - `MCP_TOOL_ERROR`: the server ran the tool and answered with an error result.
 * - `MCP_SERVER_GONE`: the server closed or died before it answered.
 * - `MCP_CALL_FAILED`: the server refused the call (a protocol error: unknown tool, bad
 *   arguments, a timeout).
 */
export const MCP_TOOL_ERROR = {
  toolError: 'MCP_TOOL_ERROR',
  serverGone: 'MCP_SERVER_GONE',
  callFailed: 'MCP_CALL_FAILED',
} as const;
