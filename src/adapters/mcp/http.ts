/**
 * The MCP server over streamable HTTP, on a loopback address only and behind a bearer token.
 * Every request is checked before the SDK sees it: the path, the Host header (a DNS-rebound page
 * names another host), the Origin when a browser sends one, and the token, compared in constant
 * time. The server is stateless: each POST gets a fresh server and transport, so no session
 * state lives between calls and nothing there can grow.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { SessionStore } from '../../store/index.js';
import { McpAdapterError } from './errors.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/** Options of {@link serveMcpHttp}. */
export interface McpHttpOptions extends McpServerOptions {
  /** A loopback address: `127.0.0.1` (default), another `127.x.x.x`, `::1` or `localhost`. */
  readonly host?: string;
  /** The port; 0 (default) picks a free one. */
  readonly port?: number;
  /** The bearer token every request must carry: at least 16 printable ASCII characters. */
  readonly token: string;
}

/** A running HTTP server. */
export interface McpHttpServer {
  /** Where clients connect: `http://HOST:PORT/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

/** The path the server answers on. */
export const MCP_PATH = '/mcp';

/**
 * Serves {@link createMcpServer} over streamable HTTP on a loopback address. A request without
 * the bearer token is answered 401, one for another host 421, one from a foreign page 403.
 *
 * @throws McpAdapterError `NOT_LOOPBACK` for any other address, `INVALID_TOKEN` for a token
 *   too short or holding characters a header cannot.
 *
 * @example
 * ```ts
 * import { serveMcpHttp } from 'palimpsest/mcp';
 * import { MemoryStore } from 'palimpsest/store';
 *
 * const server = await serveMcpHttp(new MemoryStore(), { token: 'a-long-enough-secret-token' });
 * const response = await fetch(server.url, { method: 'POST', body: '{}' });
 * console.log(response.status); // 401
 * await server.close();
 * ```
 */
export async function serveMcpHttp(
  store: SessionStore,
  options: McpHttpOptions,
): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  requireLoopback(host);
  const expected = digest(checkToken(options.token));
  // Checked now, so a bad scope fails the start rather than every request.
  createMcpServer(store, options);
  let port = 0;
  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 500, 'the request failed');
      else response.destroy(error instanceof Error ? error : undefined);
    });
  });
  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== MCP_PATH) return refuse(response, 404, `expected the path ${MCP_PATH}`);
    if (!isOwnHost(request.headers.host, port)) {
      return refuse(response, 421, 'expected a Host header naming this loopback server');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !isLoopbackOrigin(origin)) {
      return refuse(response, 403, 'expected no Origin, or a loopback one');
    }
    if (!authorized(request.headers.authorization, expected)) {
      response.setHeader('WWW-Authenticate', 'Bearer realm="palimpsest"');
      return refuse(response, 401, 'expected the header Authorization: Bearer <token>');
    }
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'POST');
      return refuse(response, 405, 'this stateless server answers POST only');
    }
    const server = createMcpServer(store, options);
    // No session id generator: the transport is stateless.
    const transport = new StreamableHTTPServerTransport({});
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}${MCP_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

/**
 * Parses `HOST:PORT` (or `[::1]:PORT`, or `PORT` alone for 127.0.0.1) and checks the host is
 * loopback.
 *
 * @throws McpAdapterError `INVALID_ADDRESS` or `NOT_LOOPBACK`.
 */
export function parseLoopbackAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$|^(\d{1,5})$/.exec(text);
  const portText = match?.[3] ?? match?.[4];
  const port = Number(portText);
  if (match === null || portText === undefined || port > 65_535) {
    throw new McpAdapterError(
      'INVALID_ADDRESS',
      `expected HOST:PORT such as 127.0.0.1:8765, found ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  const host = match[1] ?? match[2] ?? '127.0.0.1';
  requireLoopback(host);
  return { host, port };
}

function requireLoopback(host: string): void {
  if (!isLoopbackHost(host)) {
    throw new McpAdapterError(
      'NOT_LOOPBACK',
      `expected a loopback address (127.0.0.1, ::1 or localhost): the MCP server serves this machine only, found ${JSON.stringify(host.slice(0, 80))}`,
    );
  }
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function isOwnHost(header: string | undefined, port: number): boolean {
  if (header === undefined) return false;
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(header);
  const host = match?.[1] ?? match?.[2];
  return host !== undefined && isLoopbackHost(host) && Number(match?.[3]) === port;
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const { hostname } = new URL(origin);
    return isLoopbackHost(hostname.replace(/^\[|\]$/g, ''));
  } catch {
    return false;
  }
}

function checkToken(token: unknown): string {
  if (typeof token !== 'string' || !/^[\x21-\x7e]{16,}$/.test(token)) {
    throw new McpAdapterError(
      'INVALID_TOKEN',
      `expected a bearer token of at least 16 printable ASCII characters without spaces, found ${typeof token === 'string' ? `one of ${token.length} characters that does not fit` : typeof token}`,
    );
  }
  return token;
}

/** Digests compare in constant time whatever the lengths of what was sent. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const given = /^Bearer (\S+)$/i.exec(header ?? '')?.[1];
  return given !== undefined && timingSafeEqual(digest(given), expected);
}

function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32_000, message }, id: null }));
}
