/**
 * `palimpsest mcp [--http HOST:PORT] [--project DIR] [--session ID…]`: a read-only MCP server
 * over the store, on stdio (what a client starts) or on streamable HTTP on loopback behind a
 * bearer token.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { McpScope } from '../../adapters/mcp/index.js';
import { type CliContext, parseCount, readGivenFile } from '../context.js';
import { CliError, EXIT } from '../failure.js';

/** Options of `palimpsest mcp`. */
export interface McpCommandOptions {
  readonly http?: string;
  readonly tokenFile?: string;
  readonly project?: string;
  readonly session?: readonly string[];
  readonly maxChars?: string;
}

type McpModule = typeof import('../../adapters/mcp/index.js');

/** Serves until the client ends stdin (stdio), or until SIGINT or SIGTERM. */
export async function mcpCommand(context: CliContext, options: McpCommandOptions): Promise<void> {
  const mcp = await loadMcp();
  const address = options.http === undefined ? undefined : mcp.parseLoopbackAddress(options.http);
  if (address === undefined && options.tokenFile !== undefined) {
    throw new CliError('--token-file goes with --http (stdio needs no token)', EXIT.usage);
  }
  const scope: McpScope = {
    ...(options.project === undefined ? {} : { project: resolve(options.project) }),
    ...(options.session === undefined ? {} : { sessions: options.session }),
  };
  const maxChars = parseCount('--max-chars', options.maxChars);
  const serverOptions = { scope, ...(maxChars === undefined ? {} : { maxChars }) };
  await context.withReader(async (store) => {
    if (address === undefined) {
      const server = await mcp.serveMcpStdio(store, serverOptions);
      const stop = (): void => void server.close();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await server.closed;
      return;
    }
    const given = tokenOf(options.tokenFile);
    const token = given ?? randomBytes(24).toString('base64url');
    const server = await mcp.serveMcpHttp(store, { ...serverOptions, ...address, token });
    // The generated token is shown this once, on stderr; nothing prints it again.
    context.terminal.note(
      given === undefined
        ? `MCP server on ${server.url} with the header Authorization: Bearer ${token}`
        : `MCP server on ${server.url} (bearer token from ${options.tokenFile === undefined ? 'PALIMPSEST_MCP_TOKEN' : 'the token file'}); Ctrl-C stops it`,
    );
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
  });
}

function tokenOf(file: string | undefined): string | undefined {
  if (file !== undefined) return readGivenFile(file, 'the token file').trim();
  const fromEnv = process.env.PALIMPSEST_MCP_TOKEN;
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv.trim();
}

async function loadMcp(): Promise<McpModule> {
  try {
    return await import('../../adapters/mcp/index.js');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliError(
        `palimpsest mcp needs the MCP SDK, an optional peer dependency: npm install @modelcontextprotocol/sdk zod (${error.message})`,
        EXIT.failure,
      );
    }
    throw error;
  }
}
