/**
 * The read-only MCP server over a store: its tools (one file each in `tools/`) and the session
 * transcripts as resources, scoped to a project and an allow-list. Nothing it offers writes.
 */
import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { SessionStore } from '../../store/index.js';
import { McpAdapterError } from './errors.js';
import { registerSessionResources } from './resources.js';
import { DEFAULT_MAX_CHARS } from './results.js';
import { type McpScope, ScopedSessions } from './scope.js';
import { SERVER_TOOLS } from './tools/index.js';

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** Which sessions the server shows (all of the store's by default). */
  readonly scope?: McpScope;
  /** Characters of text one tool result holds at most (default 20,000). */
  readonly maxChars?: number;
}

/**
 * An MCP server (the official SDK's `McpServer`) that reads the sessions of `store`: tools
 * `list_sessions`, `read_transcript`, `read_surface`, `why`, `session_cost`, `diff_surfaces`, and
 * a transcript resource per session. Connect it to a transport (`server.connect(transport)`),
 * or use {@link serveMcpStdio} or `serveMcpHttp`. The store stays the caller's to close.
 *
 * @throws McpAdapterError `INVALID_SCOPE` for a scope of the wrong shape.
 *
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
 * import { Session } from 'palimpsest';
 * import { createMcpServer } from 'palimpsest/mcp';
 * import { MemoryStore } from 'palimpsest/store';
 *
 * const store = new MemoryStore();
 * const session = Session.create({ id: 'hello' });
 * session.append('user/message', { id: 'u1', role: 'user', content: [{ type: 'text', text: 'Hi there' }], source: { kind: 'user' } }, { surfaceOp: 'append' });
 * await store.create(session.header);
 * await store.append(session.id, session.events, { expectedSeq: 0 });
 *
 * const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
 * await createMcpServer(store).connect(serverSide);
 * const client = new Client({ name: 'example', version: '1.0.0' });
 * await client.connect(clientSide);
 * const result = await client.callTool({ name: 'read_surface', arguments: { session: 'hello' } });
 * const { total } = result.structuredContent as { total: number };
 * console.log(total); // 1
 * await client.close();
 * ```
 */
export function createMcpServer(store: SessionStore, options: McpServerOptions = {}): McpServer {
  const sessions = new ScopedSessions(store, options.scope);
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  if (!Number.isSafeInteger(maxChars) || maxChars < 200) {
    throw new McpAdapterError(
      'INVALID_SCOPE',
      `expected maxChars to be an integer of at least 200, found ${String(maxChars)}`,
    );
  }
  const server = new McpServer(
    { name: 'palimpsest', version: PACKAGE_VERSION },
    {
      instructions:
        'Read-only access to recorded LLM agent sessions: list them, read their transcripts and what the model saw, ask why a message is there, total their cost, compare a fork with its parent.',
    },
  );
  for (const tool of SERVER_TOOLS) tool.register(server, { sessions, maxChars });
  registerSessionResources(server, sessions);
  return server;
}

/** A server running over this process's stdin and stdout. */
export interface McpStdioServer {
  /** Resolves once the server closed: the client ended stdin, or {@link close} was called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves {@link createMcpServer} over this process's stdin and stdout (nothing else may write to
 * stdout meanwhile) until the client ends stdin or `close` is called.
 */
export async function serveMcpStdio(
  store: SessionStore,
  options: McpServerOptions = {},
): Promise<McpStdioServer> {
  const server = createMcpServer(store, options);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  const close = (): Promise<void> => server.close();
  // The SDK's transport does not watch for the end of its input: a client that went away
  // would leave the server running.
  process.stdin.once('end', () => void close());
  await server.connect(new StdioServerTransport());
  return { closed, close };
}

// src/adapters/mcp/ and dist/adapters/mcp/ both sit three levels below package.json.
const PACKAGE_VERSION = packageVersion();

function packageVersion(): string {
  const manifest: unknown = createRequire(import.meta.url)('../../../package.json');
  const version = (manifest as { version?: unknown } | null)?.version;
  return typeof version === 'string' ? version : '0.0.0';
}
