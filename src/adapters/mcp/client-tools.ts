/**
 * An MCP server's tools as tools of palimpsest's loop. Each becomes a `Tool` named
 * `<server>__<tool>`, so the recorded `tool/call` and the request's tool list name the server
 * without a new event field; a call goes to the server with the loop's abort signal, and every
 * way it can fail becomes a tool error the model reads: the server's own error result
 * (`MCP_TOOL_ERROR`), a refused call (`MCP_CALL_FAILED`), a server that closed or died mid-call
 * (`MCP_SERVER_GONE`, at once rather than at a timeout), a cancelled turn (`TOOL_ABORTED`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { abortedRun, type Tool, type ToolRun } from '../../agent/tools.js';
import type { JsonObject, ToolResultContentBlock } from '../../core/index.js';
import { errorRun, parseToolArguments, TOOL_NAME } from '../../model/tool.js';
import { MCP_TOOL_ERROR, McpAdapterError } from './errors.js';

/** An MCP server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioServerConfig {
  /** Prefixes its tools' names: `[a-zA-Z0-9-]`, and short enough for the names to fit 64 characters. */
  readonly name: string;
  readonly command: string;
  readonly args?: readonly string[];
  /** The child's environment (default: the SDK's safe subset of this process's, PATH and HOME...). */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The child's stderr: `inherit` (default) or `ignore`. */
  readonly stderr?: 'inherit' | 'ignore';
}

/** An MCP server reached over streamable HTTP. */
export interface McpHttpServerConfig {
  readonly name: string;
  readonly url: string;
  /** Headers every request carries (an `Authorization: Bearer …`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A client the caller connected itself; {@link McpToolSet.close} leaves it open. */
export interface McpClientConfig {
  readonly name: string;
  readonly client: Client;
}

/** Where {@link mcpTools} finds its server. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig | McpClientConfig;

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /** The longest one call may take before it is `MCP_CALL_FAILED` (default 60,000 ms). */
  readonly timeoutMs?: number;
  /** Only the server's tools with these names (its own names, without the prefix). */
  readonly only?: readonly string[];
}

/** An MCP server's tools, and the connection they share. */
export interface McpToolSet {
  /** The server's name, as its tools' prefix. */
  readonly server: string;
  readonly tools: readonly Tool[];
  /** Closes the connection (stops a stdio server) unless the caller gave the client. */
  close(): Promise<void>;
}

/** What separates the server's name from its tool's in a tool name. */
export const MCP_NAME_SEPARATOR = '__';

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Connects to an MCP server and offers its tools to `runTurn` (`tools: set.tools`). Close the
 * set when the conversation is over.
 *
 * @throws McpAdapterError `INVALID_SERVER` for a configuration it cannot use or tool names
 *   that do not fit, `CONNECT_FAILED` when the server cannot be started or reached.
 *
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
 * import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
 * import { mcpTools } from 'palimpsest/mcp';
 * import { z } from 'zod';
 *
 * const server = new McpServer({ name: 'clock', version: '1.0.0' });
 * server.registerTool('now', { inputSchema: { zone: z.string() } }, async ({ zone }) => ({
 *   content: [{ type: 'text', text: `noon in ${zone}` }],
 * }));
 * const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
 * await server.connect(serverSide);
 * const client = new Client({ name: 'example', version: '1.0.0' });
 * await client.connect(clientSide);
 *
 * const set = await mcpTools({ name: 'clock', client });
 * console.log(set.tools.map((tool) => tool.name)); // ['clock__now']
 * await client.close();
 * ```
 */
export async function mcpTools(
  config: McpServerConfig,
  options: McpToolsOptions = {},
): Promise<McpToolSet> {
  const server = checkServerName(config);
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeout) || timeout < 1) {
    throw new McpAdapterError(
      'INVALID_SERVER',
      `expected timeoutMs to be a positive integer, found ${String(timeout)}`,
    );
  }
  const owned = !('client' in config);
  const client = owned ? await connect(server, config) : config.client;
  try {
    const listed = await listAll(client);
    const wanted = options.only === undefined ? undefined : new Set(options.only);
    const connection = new Connection(server, client);
    const tools: Tool[] = [];
    const names = new Set<string>();
    for (const tool of listed) {
      if (wanted !== undefined && !wanted.has(tool.name)) continue;
      const name = `${server}${MCP_NAME_SEPARATOR}${tool.name.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
      if (!TOOL_NAME.test(name) || names.has(name)) {
        throw new McpAdapterError(
          'INVALID_SERVER',
          `MCP server '${server}': its tool ${JSON.stringify(tool.name.slice(0, 80))} maps to ${names.has(name) ? 'the name of another of its tools' : 'a name longer than 64 characters'} (${name.slice(0, 80)}); pass options.only to leave it out, or a shorter server name`,
        );
      }
      names.add(name);
      tools.push(connection.tool(name, tool, timeout));
    }
    return {
      server,
      tools: Object.freeze(tools),
      close: async () => {
        if (owned) await client.close();
      },
    };
  } catch (error) {
    if (owned) await client.close();
    throw error;
  }
}

function checkServerName(config: McpServerConfig): string {
  const name: unknown = typeof config === 'object' && config !== null ? config.name : undefined;
  if (typeof name !== 'string' || !/^[a-zA-Z0-9-]{1,40}$/.test(name)) {
    throw new McpAdapterError(
      'INVALID_SERVER',
      `expected the server's name as 1 to 40 characters of [a-zA-Z0-9-] (it prefixes its tools' names), found ${JSON.stringify(name) ?? String(name)}`,
    );
  }
  return name;
}

async function connect(
  server: string,
  config: McpStdioServerConfig | McpHttpServerConfig,
): Promise<Client> {
  const client = new Client({ name: 'palimpsest', version: '1' });
  let transport: Transport;
  if ('command' in config && typeof config.command === 'string') {
    transport = new StdioClientTransport({
      command: config.command,
      args: [...(config.args ?? [])],
      env: { ...(config.env ?? getDefaultEnvironment()) },
      stderr: config.stderr ?? 'inherit',
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
    });
  } else if ('url' in config && typeof config.url === 'string') {
    transport = new StreamableHTTPClientTransport(httpUrl(server, config.url), {
      requestInit: { headers: { ...config.headers } },
    });
  } else {
    throw new McpAdapterError(
      'INVALID_SERVER',
      `MCP server '${server}': expected a command (stdio), a url (HTTP) or a connected client`,
    );
  }
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new McpAdapterError(
      'CONNECT_FAILED',
      `MCP server '${server}' could not be started or reached: ${messageOf(error)}`,
      { cause: error },
    );
  }
  return client;
}

function httpUrl(server: string, url: string): URL {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed;
  } catch {
    // Refused below, without quoting what may hold a credential.
  }
  throw new McpAdapterError(
    'INVALID_SERVER',
    `MCP server '${server}': expected an http(s) URL, found something else`,
  );
}

async function listAll(client: Client): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/**
 * One connection's calls. A transport error (the HTTP stream broke) ends the calls in flight at
 * once: the SDK would otherwise wait for its timeout, as it does not tie a broken response stream
 * to the request it answered.
 */
class Connection {
  readonly #server: string;
  readonly #client: Client;
  readonly #inFlight = new Set<AbortController>();

  constructor(server: string, client: Client) {
    this.#server = server;
    this.#client = client;
    const previous = client.onerror;
    client.onerror = (error) => {
      for (const controller of this.#inFlight) controller.abort(error);
      previous?.(error);
    };
  }

  tool(name: string, tool: McpTool, timeout: number): Tool {
    const description = `[MCP server ${this.#server}] ${tool.description ?? tool.title ?? tool.name}`;
    return Object.freeze({
      name,
      description,
      parameters: tool.inputSchema as JsonObject,
      run: (argumentsText: string, context: { readonly signal: AbortSignal }) =>
        this.#call(tool.name, name, argumentsText, context.signal, timeout),
    });
  }

  async #call(
    original: string,
    name: string,
    argumentsText: string,
    signal: AbortSignal,
    timeout: number,
  ): Promise<ToolRun> {
    const parsed = parseToolArguments(name, argumentsText);
    if ('refused' in parsed) return parsed.refused;
    if (signal.aborted) return abortedRun();
    const broken = new AbortController();
    this.#inFlight.add(broken);
    try {
      const result = (await this.#client.callTool(
        { name: original, arguments: parsed.args },
        undefined,
        { signal: AbortSignal.any([signal, broken.signal]), timeout },
      )) as CallToolResult;
      return this.#runOf(result);
    } catch (error) {
      if (signal.aborted) return abortedRun();
      if (broken.signal.aborted || isConnectionLost(error)) {
        return errorRun(
          MCP_TOOL_ERROR.serverGone,
          `The MCP server '${this.#server}' closed or stopped before answering this call; whether the tool ran is unknown.`,
        );
      }
      return errorRun(
        MCP_TOOL_ERROR.callFailed,
        `The MCP server '${this.#server}' refused the call to '${original}': ${messageOf(error)}`,
      );
    } finally {
      this.#inFlight.delete(broken);
    }
  }

  #runOf(result: CallToolResult): ToolRun {
    const content = contentOf(result);
    if (result.isError !== true) return { content };
    const text = content
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('\n')
      .slice(0, 2_000);
    return {
      content,
      error: {
        code: MCP_TOOL_ERROR.toolError,
        message: `The MCP server '${this.#server}' answered with an error: ${text}`,
      },
    };
  }
}

/** An MCP result's content as a tool result's blocks: text and images kept, the rest described. */
function contentOf(result: CallToolResult): ToolResultContentBlock[] {
  const blocks: ToolResultContentBlock[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') blocks.push({ type: 'text', text: item.text });
    else if (item.type === 'image') {
      blocks.push({ type: 'image', mediaType: item.mimeType, data: item.data });
    } else if (item.type === 'resource') {
      const resource = item.resource;
      blocks.push({
        type: 'text',
        text:
          'text' in resource
            ? resource.text
            : `[resource ${resource.uri} (${resource.mimeType ?? 'binary'})]`,
      });
    } else if (item.type === 'resource_link') {
      blocks.push({ type: 'text', text: `[resource ${item.uri}: ${item.name}]` });
    } else {
      blocks.push({ type: 'text', text: `[${item.type} content (${item.mimeType})]` });
    }
  }
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    blocks.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  }
  if (blocks.length === 0) blocks.push({ type: 'text', text: '' });
  return blocks;
}

function isConnectionLost(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  return error instanceof Error && /not connected/i.test(error.message);
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.length > 500 ? `${text.slice(0, 500)}…` : text).replace(/\/\/[^/\s@]*@/g, '//');
}
