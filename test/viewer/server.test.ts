/**
 * The viewer's loopback server refuses what is not its own page asking: requests without the
 * token or with another one, a foreign Host header (DNS rebinding), path and id escapes; it
 * listens on 127.0.0.1 only, sends a strict CSP, and streams a session's committed batches.
 */
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isElidedChunkData, Session } from '../../src/core/index.js';
import { openStore, type SessionStore } from '../../src/store/index.js';
import { startViewerServer, ViewerError, type ViewerServer } from '../../src/viewer/index.js';
import { recordToolTurn, user } from '../core/builders.js';

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A raw request: the path and Host header exactly as given (fetch would normalise both). */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (data: string) => {
          body += data;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('the viewer server', () => {
  let store: SessionStore;
  let server: ViewerServer;
  const token = 'test-token-0123456789abcdef';

  beforeAll(async () => {
    store = await openStore('memory:');
    const session = Session.create({ id: 'alpha' });
    session.append('user/message', user('u1', 'hello'), { surfaceOp: 'append' });
    await store.create(session.header);
    await store.append('alpha', session.events, { expectedSeq: 0 });
    const streamed = Session.create({ id: 'streamed' });
    recordToolTurn(streamed, 1);
    await store.create(streamed.header);
    await store.append('streamed', streamed.events, { expectedSeq: 0 });
    server = await startViewerServer({ store, token });
  });

  afterAll(async () => {
    await server.close();
    await store.close();
  });

  const api = (path: string): string => `${path}${path.includes('?') ? '&' : '?'}token=${token}`;

  it('answers the page and the API with the token', async () => {
    const page = await get(server.port, '/');
    expect(page.status).toBe(200);
    const list = await get(server.port, api('/api/sessions'));
    expect(list.status).toBe(200);
    expect(
      JSON.parse(list.body)
        .sessions.map((s: { id: string }) => s.id)
        .sort(),
    ).toEqual(['alpha', 'streamed']);
  });

  it('refuses every API route without the token or with another one', async () => {
    for (const path of [
      '/api/sessions',
      '/api/sessions/alpha/events',
      '/api/sessions/streamed/chunks',
    ]) {
      expect((await get(server.port, path)).status).toBe(403);
      expect((await get(server.port, `${path}?token=${token.slice(0, -1)}x`)).status).toBe(403);
      expect((await get(server.port, `${path}?token=`)).status).toBe(403);
    }
  });

  it('refuses a Host header that does not name it, with or without the token', async () => {
    for (const host of [
      'evil.example',
      `evil.example:${server.port}`,
      '127.0.0.1',
      `127.0.0.1:${server.port + 1}`,
    ]) {
      expect((await get(server.port, api('/api/sessions'), { host })).status).toBe(421);
      expect((await get(server.port, '/', { host })).status).toBe(421);
    }
  });

  it('refuses path and id escapes, and serves no file but its own two assets', async () => {
    const cases: Array<[string, number]> = [
      ['/api/sessions/..%2F..%2Fetc%2Fpasswd/events', 400],
      ['/api/sessions/%2e%2e/events', 400],
      ['/api/sessions/../sessions/events', 400],
      ['/api/sessions/%00/events', 400],
      ['/api/sessions/a%0Ab/events', 400],
      ['/api/sessions/%E0%A4%A/events', 400],
      ['/api/sessions/nope/events', 404],
      ['/assets/../package.json', 400],
      ['/assets/%2e%2e/%2e%2e/package.json', 400],
      ['/package.json', 404],
      ['/api/sessions/alpha', 404],
    ];
    for (const [path, status] of cases) {
      const reply = await get(server.port, api(path));
      expect({ path, status: reply.status }).toEqual({ path, status });
      expect(reply.body).not.toContain('"version"');
    }
  });

  it('accepts GET only', async () => {
    expect((await get(server.port, api('/api/sessions'), {}, 'POST')).status).toBe(405);
    expect((await get(server.port, api('/api/sessions'), {}, 'DELETE')).status).toBe(405);
  });

  it('sends a strict Content-Security-Policy without inline script on every response', async () => {
    for (const path of ['/', '/assets/page.js', api('/api/sessions'), '/nope']) {
      const csp = String((await get(server.port, path)).headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe');
    }
    const page = await get(server.port, '/');
    expect(page.body).not.toMatch(/<script>/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
  });

  it('listens on the loopback address only', async () => {
    expect(server.url.startsWith('http://127.0.0.1:')).toBe(true);
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((address) => address !== undefined && !address.internal && address.family === 'IPv4');
    if (outside === undefined) return; // a machine with no other interface has nothing to reach
    const reached = await new Promise<boolean>((resolve) => {
      const req = request(
        { host: outside.address, port: server.port, path: '/', timeout: 2000 },
        () => resolve(true),
      );
      req.on('error', () => resolve(false));
      req.on('timeout', () => {
        req.destroy();
        resolve(false);
      });
      req.end();
    });
    expect(reached).toBe(false);
  });

  it('streams the stored events, then each batch a writer commits', async () => {
    const response = await fetch(
      `http://127.0.0.1:${server.port}${api('/api/sessions/alpha/events')}`,
    );
    expect(response.headers.get('content-type')).toContain('application/x-ndjson');
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = '';
    const nextLine = async (): Promise<string> => {
      while (!text.includes('\n')) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        text += value;
      }
      const line = text.slice(0, text.indexOf('\n'));
      text = text.slice(text.indexOf('\n') + 1);
      return line;
    };
    const snapshot = JSON.parse(await nextLine());
    expect(snapshot.kind).toBe('snapshot');
    expect(snapshot.events).toHaveLength(1);
    const loaded = await store.load('alpha');
    const session = Session.create({ header: loaded.header, seed: loaded.events });
    session.append('user/message', user('u2', 'live'), { surfaceOp: 'append' });
    await store.append('alpha', session.events.slice(1), { expectedSeq: 1 });
    const batch = JSON.parse(await nextLine());
    expect(batch).toMatchObject({ kind: 'events', events: [{ seq: 1, type: 'user/message' }] });
    await reader.cancel();
  });

  it('streams finished chunks as stubs and serves their bodies on the chunks route', async () => {
    const { events } = await store.load('streamed');
    const controller = new AbortController();
    const response = await fetch(
      `http://127.0.0.1:${server.port}${api('/api/sessions/streamed/events')}`,
      { signal: controller.signal },
    );
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = '';
    while (!text.includes('\n')) text += (await reader.read()).value ?? '';
    controller.abort();
    const snapshot = JSON.parse(text.slice(0, text.indexOf('\n')));
    const chunkSeqs = events.filter((e) => e.type === 'assistant/chunk').map((e) => e.seq);
    expect(chunkSeqs.length).toBeGreaterThan(0);
    for (const seq of chunkSeqs) expect(isElidedChunkData(snapshot.events[seq].data)).toBe(true);
    const bodies = await get(server.port, api('/api/sessions/streamed/chunks'));
    expect(bodies.status).toBe(200);
    expect(bodies.headers['content-security-policy']).toContain("default-src 'none'");
    expect(JSON.parse(bodies.body).chunks).toEqual(chunkSeqs.map((seq) => events[seq]));
    expect((await get(server.port, api('/api/sessions/nobody/chunks'))).status).toBe(404);
  });

  it('refuses a port out of range with a typed error', async () => {
    for (const port of [-1, 65_536, 1.5]) {
      const error = await startViewerServer({ store, port }).catch((caught: unknown) => caught);
      expect(ViewerError.isInstance(error)).toBe(true);
      expect((error as ViewerError).code).toBe('INVALID_PORT');
    }
  });

  it('says PORT_UNAVAILABLE when the port is taken', async () => {
    const error = await startViewerServer({ store, port: server.port }).catch(
      (caught: unknown) => caught,
    );
    expect((error as ViewerError).code).toBe('PORT_UNAVAILABLE');
  });
});
