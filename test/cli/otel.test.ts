/**
 * `palimpsest otel` as a process: what it sends, its exit codes, and that neither header values
 * nor URL credentials are ever printed. A loopback receiver records what arrives (the real
 * backend is test/adapters/otel/backend.test.ts).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { openStore } from '../../src/store/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { binary, type CliRun, tempStores } from './helpers.js';

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }>;
  };
}

/** The binary run asynchronously: the receiver lives in this process and must keep answering. */
function cliAsync(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [binary, ...args], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('palimpsest otel', () => {
  const stores = tempStores();
  const received: Received[] = [];
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    const store = await openStore(stores.urls.jsonl);
    const session = Session.create({ id: 'cli-otel' });
    await runTurn({
      session,
      model: scriptedModel([{ text: 'PRIVATE-ANSWER-77' }]),
      input: 'PRIVATE-INPUT-31',
    });
    await store.create(session.header);
    await store.append(session.id, session.events, { expectedSeq: 0 });
    const open = Session.create({ id: 'cli-open' });
    open.append('turn/start', { turn: 1 });
    await store.create(open.header);
    await store.append(open.id, open.events, { expectedSeq: 0 });
    await store.close();
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        received.push({
          path: request.url ?? '',
          headers: request.headers,
          body: JSON.parse(body),
        });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });

  const otel = (args: readonly string[]) =>
    cliAsync(['--store', stores.urls.jsonl, 'otel', ...args]);

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    stores.remove();
  });

  it('sends each session over OTLP/HTTP with the given headers, and prints neither header values nor URL credentials', async () => {
    const run = await otel([
      'cli-otel',
      '--endpoint',
      `http://user:PASSWORD-9@127.0.0.1:${port}`,
      '--header',
      'x-api-key=HEADER-SECRET-4',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`sent to http://127.0.0.1:${port}/v1/traces`);
    const output = run.stdout + run.stderr;
    for (const secret of [
      'PASSWORD-9',
      'HEADER-SECRET-4',
      'PRIVATE-ANSWER-77',
      'PRIVATE-INPUT-31',
    ]) {
      expect(output).not.toContain(secret);
    }
    const last = received.at(-1);
    expect(last?.path).toBe('/v1/traces');
    expect(last?.headers['x-api-key']).toBe('HEADER-SECRET-4');
    expect(last?.headers.authorization).toBe(
      `Basic ${Buffer.from('user:PASSWORD-9').toString('base64')}`,
    );
    const names = last?.body.resourceSpans.flatMap((r) =>
      r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)),
    );
    expect(names?.sort()).toEqual(['chat scripted-model', 'invoke_agent']);
    expect(JSON.stringify(last?.body)).not.toContain('PRIVATE-');
  });

  it('with --content the messages are sent too', async () => {
    const run = await otel(['cli-otel', '--endpoint', `http://127.0.0.1:${port}`, '--content']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(received.at(-1)?.body)).toContain('PRIVATE-INPUT-31');
  });

  it('a command that exported nothing exits 9, never 0', async () => {
    const run = await otel(['cli-open', '--endpoint', `http://127.0.0.1:${port}`]);
    expect(run.code).toBe(9);
    expect(run.stderr).toContain('nothing was exported');
  });

  it('an unreachable endpoint is a typed error naming the endpoint without its credentials', async () => {
    const run = await otel([
      '--all',
      '--endpoint',
      'http://user:PASSWORD-9@127.0.0.1:9/base?token=QUERY-SECRET',
      '--header',
      'authorization=Bearer HEADER-SECRET-4',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('http://127.0.0.1:9/base/v1/traces');
    expect(run.stderr).toContain('EXPORT_FAILED');
    for (const secret of ['PASSWORD-9', 'HEADER-SECRET-4', 'QUERY-SECRET']) {
      expect(run.stdout + run.stderr).not.toContain(secret);
    }
  });

  it('a malformed header or endpoint is a usage error that does not echo it', async () => {
    const header = await otel([
      'cli-otel',
      '--endpoint',
      'http://127.0.0.1:9',
      '--header',
      'HEADER-SECRET-4',
    ]);
    expect(header.code).toBe(2);
    expect(header.stderr).not.toContain('HEADER-SECRET-4');
    const endpoint = await otel(['cli-otel', '--endpoint', 'ftp://user:PASSWORD-9@host']);
    expect(endpoint.code).toBe(2);
    expect(endpoint.stderr).not.toContain('PASSWORD-9');
    const none = await otel(['--endpoint', 'http://127.0.0.1:9']);
    expect(none.code).toBe(2);
  });
});
