/**
 * The recorded provider responses (test/fixtures/wire/) and the local server that replays them
 * (wire-server.ts): what it records of a request, what it replays, and how it refuses.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  fixtureHeader,
  loadWireFixture,
  parseWireFixture,
  startWireServer,
  useWireServer,
  wireFixturesDir,
} from './wire-server.js';

const server = useWireServer();

describe('the recorded fixtures', () => {
  const files = readdirSync(wireFixturesDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.http'))
    .sort();

  it('cover every scenario of the wire-*.test.ts files, one file each', () => {
    expect(files).toEqual([
      'anthropic/max-tokens.http',
      'anthropic/overloaded-529.http',
      'anthropic/overloaded-first-event.http',
      'anthropic/overloaded-midstream.http',
      'anthropic/text.http',
      'anthropic/thinking-tool-use.http',
      'deepseek/reasoning-then-text.http',
      'deepseek/reasoning-then-tool-call.http',
      'openai-compatible/context-length-400.http',
      'openai-compatible/cut-midstream.http',
      'openai-compatible/empty.http',
      'openai-compatible/error-event-midstream.http',
      'openai-compatible/length.http',
      'openai-compatible/parallel-tool-calls.http',
      'openai-compatible/rate-limited-429.http',
      'openai-compatible/server-error-500.http',
      'openai-compatible/text.http',
      'openai-compatible/unauthorized-echo-401.http',
    ]);
  });

  it.each(files)(
    '%s is well-formed: a request id header, and JSON in every SSE data line',
    (file) => {
      const fixture = loadWireFixture(file);
      expect(fixture.description).not.toBe('');
      expect(fixture.events.join('')).toBe(fixture.body);
      expect(
        fixtureHeader(fixture, 'x-request-id') ?? fixtureHeader(fixture, 'request-id'),
      ).toMatch(/^req_/);
      if (!fixtureHeader(fixture, 'content-type')?.startsWith('text/event-stream')) {
        expect(() => JSON.parse(fixture.body)).not.toThrow();
        return;
      }
      expect(fixture.body.endsWith('\n\n')).toBe(true);
      for (const event of fixture.events) {
        const lines = event.trimEnd().split('\n');
        const data = lines.filter((line) => line.startsWith('data: '));
        expect(data, `one data line in ${JSON.stringify(event)}`).toHaveLength(1);
        const payload = (data[0] ?? '').slice('data: '.length);
        if (payload !== '[DONE]') expect(() => JSON.parse(payload)).not.toThrow();
        const named = lines.find((line) => line.startsWith('event: '));
        if (named !== undefined) {
          expect(JSON.parse(payload)).toMatchObject({ type: named.slice('event: '.length) });
        }
      }
    },
  );
});

describe('the wire server', () => {
  it('records the method, path, headers and parsed JSON body of each request', async () => {
    server.enqueue('openai-compatible/empty.http');
    const response = await fetch(`${server.baseURL}/v1/chat/completions?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Custom': 'yes' },
      body: JSON.stringify({ model: 'm', n: 1 }),
    });
    await response.text();
    expect(server.lastRequest()).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions?x=1',
      headers: { 'content-type': 'application/json', 'x-custom': 'yes' },
      rawBody: '{"model":"m","n":1}',
      body: { model: 'm', n: 1 },
    });
  });

  it('replays the status, reason, headers and exact body of a fixture', async () => {
    server.enqueue('openai-compatible/rate-limited-429.http');
    const fixture = loadWireFixture('openai-compatible/rate-limited-429.http');
    const response = await fetch(`${server.baseURL}/anything`, { method: 'POST' });
    expect(response.status).toBe(429);
    expect(response.statusText).toBe('Too Many Requests');
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('x-request-id')).toBe('req_wire_429_5a60f1');
    expect(await response.text()).toBe(fixture.body);
  });

  it('waits delayMs between SSE events, so the client reads the first before the next is sent', async () => {
    server.enqueue({ fixture: 'openai-compatible/empty.http', delayMs: 100 });
    const fixture = loadWireFixture('openai-compatible/empty.http');
    const response = await fetch(`${server.baseURL}/v1/chat/completions`, { method: 'POST' });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const reads: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads.push(decoder.decode(value, { stream: true }));
    }
    // No clock: the events come in separate reads, the first one alone.
    expect(reads[0]).toBe(fixture.events[0]);
    expect(reads.join('')).toBe(fixture.body);
    expect(reads.length).toBeGreaterThan(1);
  });

  it('refuses a request that does not match its reply, and lists it as a problem', async () => {
    const strict = await startWireServer([
      { fixture: 'anthropic/text.http', expect: { path: '/v1/messages' } },
    ]);
    try {
      const response = await fetch(`${strict.baseURL}/v1/chat/completions`, { method: 'POST' });
      expect(response.status).toBe(404);
      expect(strict.problems).toEqual([
        'expected POST /v1/messages, got POST /v1/chat/completions',
      ]);
    } finally {
      await strict.close();
    }
  });

  it('answers 500 when its queue is empty, and lists it as a problem', async () => {
    const idle = await startWireServer();
    try {
      const response = await fetch(`${idle.baseURL}/v1/messages`, { method: 'POST' });
      expect(response.status).toBe(500);
      expect(response.headers.get('x-wire-server-error')).toBe('1');
      expect(idle.problems).toEqual([
        'unexpected request POST /v1/messages: the reply queue is empty',
      ]);
    } finally {
      await idle.close();
    }
  });

  it('rejects a fixture that sets its own framing headers', () => {
    expect(() =>
      parseWireFixture('HTTP/1.1 200 OK\ncontent-length: 2\n\n{}', 'framed.http'),
    ).toThrow(/content-length is set by the server/);
  });
});
