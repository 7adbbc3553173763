/**
 * `palimpsest mcp`, the built binary run as a process, asked by the SDK's own `Client`: over
 * stdio, and over streamable HTTP on loopback behind a bearer token (401 without it or with
 * another, the generated token shown once, non-loopback addresses refused).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, idsOf, textOf, writeFixture } from '../adapters/mcp/helpers.js';
import { binary, cli } from './helpers.js';

let fixture: Fixture;
const clients: Client[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  fixture = await writeFixture();
});
afterAll(() => fixture.remove());
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function environment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: '1', ...extra };
  for (const key of ['PATH', 'HOME', 'TMPDIR']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** Starts `palimpsest mcp --http 127.0.0.1:0 ...args` and waits for its line on stderr. */
async function httpServer(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ url: string; line: string; stderr: () => string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [binary, '--store', fixture.url, 'mcp', '--http', '127.0.0.1:0', ...args],
    { env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('\n')) resolve(stderr.split('\n')[0] ?? '');
    });
    child.once('exit', (code) =>
      reject(new Error(`palimpsest mcp exited with ${code}: ${stderr}`)),
    );
  });
  const url = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(line)?.[0] ?? '';
  return { url, line, stderr: () => stderr, child };
}

async function httpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

describe('palimpsest mcp over stdio', () => {
  it('serves the store’s sessions in scope to an MCP client', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [binary, '--store', fixture.url, 'mcp', '--project', '/work/app'],
      env: environment(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const listed = await call(client, 'list_sessions', {});
    expect(idsOf(listed)).toEqual(['beta', 'gamma', 'alpha']);
    const transcript = await call(client, 'read_transcript', { session: 'alpha' });
    expect(textOf(transcript)).toContain('where is the config?');
    const hidden = await call(client, 'read_surface', { session: 'other' });
    expect(textOf(hidden)).toMatch(/^SESSION_NOT_FOUND: /);
    await client.close();
  });

  it('exits 0 when the client ends its input', async () => {
    const child = spawn(process.execPath, [binary, '--store', fixture.url, 'mcp'], {
      env: environment(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    child.stdin?.end();
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
  });

  it('refuses a store that does not exist, with exit code 3', () => {
    const run = cli(['--store', `jsonl:${join(fixture.dir, 'nothing')}`, 'mcp']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('there is no store at');
  });
});

describe('palimpsest mcp over HTTP', () => {
  it('generates a token, shows it once, and answers only requests that carry it', async () => {
    const server = await httpServer([]);
    const token = /Bearer (\S+)/.exec(server.line)?.[1] ?? '';
    expect(token.length).toBeGreaterThanOrEqual(32);
    const client = await httpClient(server.url, token);
    expect(idsOf(await call(client, 'list_sessions', {}))).toHaveLength(4);

    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      },
    });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const without = await fetch(server.url, { method: 'POST', headers, body: initialize });
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toContain('Bearer');
    const wrong = await fetch(server.url, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token.slice(0, -1)}x` },
      body: initialize,
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain(token);
    const foreign = await fetch(server.url, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}`, origin: 'https://evil.example' },
      body: initialize,
    });
    expect(foreign.status).toBe(403);

    server.child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    expect(code).toBe(0);
    expect(server.stderr().split(token).length - 1).toBe(1);
  });

  it('takes the token from a file and never prints it', async () => {
    const file = join(fixture.dir, 'token');
    const token = 'a-token-from-a-file-0123456789';
    writeFileSync(file, `${token}\n`);
    const server = await httpServer(['--token-file', file, '--session', 'gamma']);
    const client = await httpClient(server.url, token);
    expect(idsOf(await call(client, 'list_sessions', {}))).toEqual(['gamma']);
    expect(server.stderr()).not.toContain(token);
  });

  it('refuses an address that is not loopback, with exit code 2', () => {
    for (const address of ['0.0.0.0:8765', '192.168.1.5:8765', '[::]:8765']) {
      const run = cli(['--store', fixture.url, 'mcp', '--http', address]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('expected a loopback address');
    }
    const bad = cli(['--store', fixture.url, 'mcp', '--http', 'localhost']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected HOST:PORT');
    const stray = cli(['--store', fixture.url, 'mcp', '--token-file', 'token']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--token-file goes with --http');
  });

  it('refuses a token too short to guard anything, without printing it', () => {
    const run = cli(['--store', fixture.url, 'mcp', '--http', '127.0.0.1:0'], {
      env: { PALIMPSEST_MCP_TOKEN: 'short-secret' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected a bearer token of at least 16');
    expect(run.stderr).not.toContain('short-secret');
  });
});
