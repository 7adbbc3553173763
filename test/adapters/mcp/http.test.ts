/**
 * `serveMcpHttp`: the loopback HTTP server's checks before the SDK sees a request (path, Host,
 * Origin, bearer token, method), and the SDK's streamable HTTP client served through them.
 */
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type McpHttpServer,
  parseLoopbackAddress,
  serveMcpHttp,
} from '../../../src/adapters/mcp/index.js';
import { openStore, type SessionStore } from '../../../src/store/index.js';
import { type Fixture, idsOf, writeFixture } from './helpers.js';

const token = 'http-test-token-0123456789abcdef';
let fixture: Fixture;
let store: SessionStore;
let server: McpHttpServer;

beforeAll(async () => {
  fixture = await writeFixture();
  store = await openStore(fixture.url, { readOnly: true });
  server = await serveMcpHttp(store, { token, scope: { project: '/work/app' } });
});
afterAll(async () => {
  await server.close();
  await store.close();
  fixture.remove();
});

/** A raw request, so the Host header can be set. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(method === 'POST' ? '{}' : undefined);
  });
}

describe('the MCP server over loopback HTTP', () => {
  it('serves the SDK’s streamable HTTP client that carries the token', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
    expect(idsOf(listed as Parameters<typeof idsOf>[0])).toEqual(['beta', 'gamma', 'alpha']);
    await client.close();
  });

  it('answers 401 without the token or with another, never quoting it', async () => {
    const none = await send('POST', '/mcp', {});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="palimpsest"');
    const other = await send('POST', '/mcp', { authorization: `Bearer ${token}x` });
    expect(other.status).toBe(401);
    expect(other.body).toContain('expected the header Authorization: Bearer <token>');
    expect(other.body).not.toContain(token);
  });

  it('answers 421 to a Host that is not this server, 403 to a foreign Origin', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const rebound = await send('POST', '/mcp', { ...auth, host: 'evil.example' });
    expect(rebound.status).toBe(421);
    const foreign = await send('POST', '/mcp', { ...auth, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
  });

  it('answers 404 off its path and 405 to anything but POST', async () => {
    const auth = { authorization: `Bearer ${token}` };
    expect((await send('POST', '/other', auth)).status).toBe(404);
    const get = await send('GET', '/mcp', auth);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await send('DELETE', '/mcp', auth)).status).toBe(405);
  });

  it('refuses to listen anywhere but loopback, and a short token', async () => {
    await expect(serveMcpHttp(store, { token, host: '0.0.0.0' })).rejects.toThrow(
      expect.objectContaining({ code: 'NOT_LOOPBACK' }),
    );
    await expect(serveMcpHttp(store, { token: 'short' })).rejects.toThrow(
      expect.objectContaining({ code: 'INVALID_TOKEN' }),
    );
  });

  it('parses loopback addresses and refuses the others', () => {
    expect(parseLoopbackAddress('127.0.0.1:8765')).toEqual({ host: '127.0.0.1', port: 8765 });
    expect(parseLoopbackAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseLoopbackAddress('9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(() => parseLoopbackAddress('10.0.0.1:80')).toThrow(
      expect.objectContaining({ code: 'NOT_LOOPBACK' }),
    );
    expect(() => parseLoopbackAddress('127.0.0.1:99999')).toThrow(
      expect.objectContaining({ code: 'INVALID_ADDRESS' }),
    );
  });
});
