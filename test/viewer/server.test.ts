/**
 * The viewer's loopback server refuses what is not its own page asking: requests without the
 * token or with another one, a foreign Host header (DNS rebinding), path and id escapes; it
 * listens on 127.0.0.1 only, sends a strict CSP, and streams a session's committed batches.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicBody, openaiBody, requestAt } from '../../src/agent/index.js';
import { isElidedChunkData } from '../../src/core/backend.js';
import { Session, type SessionEvent } from '../../src/core/index.js';
import {
  EncryptedStore,
  inspectSession,
  MemoryKeyVault,
  MemoryStore,
  masterKeyProvider,
  openStore,
  type SessionStore,
} from '../../src/store/index.js';
import { startViewerServer, ViewerError, type ViewerServer } from '../../src/viewer/index.js';
import {
  type CallRequest,
  SNAPSHOT_PART_CHARS,
  type SnapshotStart,
  type StreamLine,
} from '../../src/viewer/protocol.js';
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

/** The text of each message of the long session: 40 of them make several parts. */
const LONG_TEXT = 'a line of a long session; '.repeat(2_000);

async function record(
  store: SessionStore,
  id: string,
  write: (session: Session) => void,
): Promise<void> {
  const session = Session.create({ id });
  write(session);
  await store.create(session.header);
  if (session.seq > 0) await store.append(id, session.events, { expectedSeq: 0 });
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
    await record(store, 'long', (session) => {
      for (let index = 0; index < 40; index++) {
        session.append('user/message', user(`u${index}`, LONG_TEXT), { surfaceOp: 'append' });
      }
    });
    await record(store, 'huge', (session) => {
      session.append('user/message', user('u0', 'short'), { surfaceOp: 'append' });
      session.append('user/message', user('u1', 'x'.repeat(SNAPSHOT_PART_CHARS + 1)), {
        surfaceOp: 'append',
      });
      session.append('user/message', user('u2', 'short'), { surfaceOp: 'append' });
    });
    await record(store, 'empty', () => {});
    await record(store, 'called', (session) => {
      session.append('request/header', {
        provider: 'openai.chat',
        model: 'gpt-4o-mini',
        system: 'Be brief.',
      });
      recordToolTurn(session, 1);
    });
    // A turn a crash left open: what `palimpsest verify` fails.
    await record(store, 'open-turn', (session) => {
      session.append('turn/start', { turn: 1 });
      session.append('user/message', user('u0', 'and then?'), { surfaceOp: 'append' });
    });
    for (const id of ['claude-code-s1/subagents/agent-a1', 'windows\\like']) {
      await record(store, id, (session) => {
        session.append('user/message', user('u0', `in ${id}`), { surfaceOp: 'append' });
      });
    }
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
    ).toEqual([
      'alpha',
      'called',
      'claude-code-s1/subagents/agent-a1',
      'empty',
      'huge',
      'long',
      'open-turn',
      'streamed',
      'windows\\like',
    ]);
  });

  it('serves a page script whose first module asks for the stream, before core is evaluated', async () => {
    const script = (await get(server.port, '/assets/page.js')).body;
    // The stream's URL is built in early-stream.ts alone; a core rule's code marks core's modules.
    const asks = script.indexOf('/events`');
    expect(asks).toBeGreaterThan(0);
    expect(asks).toBeLessThan(script.indexOf('SURFACE_OP_REQUIRED'));
  });

  it('refuses every API route without the token or with another one', async () => {
    for (const path of [
      '/api/sessions',
      '/api/sessions/alpha/events',
      '/api/sessions/streamed/chunks',
      '/api/sessions/called/request?seq=3',
      '/api/sessions/streamed/verify',
      '/api/sessions/streamed/tree',
      '/api/sessions/streamed/messages',
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
      // An id, not a path: no session has it.
      ['/api/sessions/..%2F..%2Fetc%2Fpasswd/events', 404],
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

  /** Opens session `id`'s event stream; `next()` reads its next line, parsed. */
  async function openStream(id: string): Promise<{ next(): Promise<StreamLine>; close(): void }> {
    const controller = new AbortController();
    const response = await fetch(
      `http://127.0.0.1:${server.port}${api(`/api/sessions/${id}/events`)}`,
      { signal: controller.signal },
    );
    expect(response.headers.get('content-type')).toContain('application/x-ndjson');
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let text = '';
    return {
      async next() {
        while (!text.includes('\n')) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the stream ended');
          text += value;
        }
        const line = text.slice(0, text.indexOf('\n'));
        text = text.slice(text.indexOf('\n') + 1);
        return JSON.parse(line) as StreamLine;
      },
      close: () => controller.abort(),
    };
  }

  /** Reads a snapshot: its start line and the events of its parts, in order. */
  async function readSnapshot(stream: {
    next(): Promise<StreamLine>;
  }): Promise<{ start: SnapshotStart; parts: SessionEvent[][] }> {
    const start = await stream.next();
    if (start.kind !== 'snapshot-start')
      throw new Error(`expected a snapshot-start, found ${start.kind}`);
    const parts: SessionEvent[][] = [];
    for (let index = 0; index < start.parts; index++) {
      const part = await stream.next();
      if (part.kind !== 'snapshot-part')
        throw new Error(`expected a snapshot-part, found ${part.kind}`);
      parts.push([...part.events]);
    }
    return { start, parts };
  }

  it('streams the stored events, then each batch a writer commits', async () => {
    const stream = await openStream('alpha');
    const { start, parts } = await readSnapshot(stream);
    expect(start).toMatchObject({ header: { id: 'alpha' }, parts: 1, eventCount: 1 });
    expect(parts.flat().map((event) => event.seq)).toEqual([0]);
    const loaded = await store.load('alpha');
    const session = Session.create({ header: loaded.header, seed: loaded.events });
    session.append('user/message', user('u2', 'live'), { surfaceOp: 'append' });
    await store.append('alpha', session.events.slice(1), { expectedSeq: 1 });
    expect(await stream.next()).toMatchObject({
      kind: 'events',
      events: [{ seq: 1, type: 'user/message' }],
    });
    stream.close();
  });

  it('sends a long log in parts of about SNAPSHOT_PART_CHARS, every event once and in order', async () => {
    const stream = await openStream('long');
    const { start, parts } = await readSnapshot(stream);
    stream.close();
    const { events } = await store.load('long');
    expect(start.eventCount).toBe(events.length);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.flat()).toEqual(events);
    for (const part of parts.slice(0, -1)) {
      // Full but for the event that would have made it too long.
      const chars = JSON.stringify(part).length;
      expect(chars).toBeLessThanOrEqual(SNAPSHOT_PART_CHARS + 2);
      expect(chars).toBeGreaterThan(SNAPSHOT_PART_CHARS - LONG_TEXT.length - 1_000);
    }
  });

  it('sends an event longer than a part as a part of its own', async () => {
    const stream = await openStream('huge');
    const { start, parts } = await readSnapshot(stream);
    stream.close();
    expect(start).toMatchObject({ parts: 3, eventCount: 3 });
    expect(parts.map((part) => part.map((event) => event.seq))).toEqual([[0], [1], [2]]);
  });

  it('streams a session without events as a start line with no parts', async () => {
    const stream = await openStream('empty');
    expect(await stream.next()).toMatchObject({
      kind: 'snapshot-start',
      parts: 0,
      eventCount: 0,
    });
    stream.close();
  });

  it('opens a listed session whose id holds / or \\ (a subagent of an imported session)', async () => {
    for (const id of ['claude-code-s1/subagents/agent-a1', 'windows\\like']) {
      const stream = await openStream(encodeURIComponent(id));
      const snapshot = (await readSnapshot(stream)).parts.flat();
      stream.close();
      expect(snapshot).toEqual((await store.load(id)).events);
      const chunks = await get(server.port, api(`/api/sessions/${encodeURIComponent(id)}/chunks`));
      expect(chunks.status).toBe(200);
    }
  });

  it('streams finished chunks as stubs and serves their bodies on the chunks route', async () => {
    const { events } = await store.load('streamed');
    const stream = await openStream('streamed');
    const snapshot = (await readSnapshot(stream)).parts.flat();
    stream.close();
    const chunkSeqs = events.filter((e) => e.type === 'assistant/chunk').map((e) => e.seq);
    expect(chunkSeqs.length).toBeGreaterThan(0);
    for (const seq of chunkSeqs) expect(isElidedChunkData(snapshot[seq]?.data)).toBe(true);
    const bodies = await get(server.port, api('/api/sessions/streamed/chunks'));
    expect(bodies.status).toBe(200);
    expect(bodies.headers['content-security-policy']).toContain("default-src 'none'");
    expect(JSON.parse(bodies.body).chunks).toEqual(chunkSeqs.map((seq) => events[seq]));
    expect((await get(server.port, api('/api/sessions/nobody/chunks'))).status).toBe(404);
  });

  it('serves the request a call received as requestAt rebuilds it, and as each provider body', async () => {
    const session = await inspectSession(store, 'called');
    const rebuilt = requestAt(session, 3);
    const asked = async (query: string): Promise<CallRequest> => {
      const reply = await get(server.port, api(`/api/sessions/called/request?${query}`));
      expect(reply.status, reply.body).toBe(200);
      return JSON.parse(reply.body) as CallRequest;
    };
    const canonical = await asked('seq=3');
    expect(canonical).toMatchObject({ wire: 'palimpsest', stepStartSeq: 3, turn: 1, step: 1 });
    expect(canonical.digest).toBe(rebuilt.digest);
    expect(canonical.body).toEqual(JSON.parse(JSON.stringify(rebuilt.request)));
    // Any seq inside the step names the same call.
    expect((await asked('seq=4')).digest).toBe(rebuilt.digest);
    expect((await asked('seq=3&wire=openai')).body).toEqual(
      openaiBody(rebuilt.header, rebuilt.messages),
    );
    expect((await asked('seq=3&wire=anthropic')).body).toEqual(
      anthropicBody(rebuilt.header, rebuilt.messages),
    );
  });

  it('refuses a request route with a bad seq or wire, a seq outside every step, an unknown session', async () => {
    const refusal = async (path: string): Promise<Reply> => get(server.port, api(path));
    for (const query of ['', '?seq=', '?seq=-1', '?seq=1.5', '?seq=abc', '?seq=1e3']) {
      const reply = await refusal(`/api/sessions/called/request${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body).toMatch(
        /^expected \?seq= the seq of an event \(a non-negative integer\), found /,
      );
    }
    const wire = await refusal('/api/sessions/called/request?seq=3&wire=gopher');
    expect(wire.status).toBe(400);
    expect(wire.body).toBe('expected ?wire= one of palimpsest, openai, anthropic, found "gopher"');
    const outside = await refusal('/api/sessions/called/request?seq=0');
    expect(outside.status).toBe(400);
    expect(outside.body).toMatch(/^INVALID_ARGUMENT: expected seq 0 .* inside a step/);
    const beyond = await refusal('/api/sessions/called/request?seq=999');
    expect(beyond.status).toBe(400);
    expect(beyond.body).toMatch(/^INVALID_ARGUMENT: expected the seq of an event .*found 999/);
    expect((await refusal('/api/sessions/nobody/request?seq=1')).status).toBe(404);
  });

  it("runs verify's checks on the verify route: a closed session passes, an open turn fails", async () => {
    const passed = JSON.parse((await get(server.port, api('/api/sessions/streamed/verify'))).body);
    const stored = (await store.load('streamed')).events.length;
    expect(passed).toMatchObject({ ok: true, problems: [], integrity: 'none', events: stored });
    expect(typeof passed.checkedAt).toBe('number');
    const failed = JSON.parse((await get(server.port, api('/api/sessions/open-turn/verify'))).body);
    expect(failed.ok).toBe(false);
    expect(failed.problems).toContain(
      'a turn left open by a crash — palimpsest repair open-turn closes it',
    );
    expect(failed.problems.some((problem: string) => problem.includes('OPEN_AT_END'))).toBe(true);
  });

  it('answers 404 with NOT_FOUND for a session the store lacks, on every session route', async () => {
    for (const route of ['verify', 'tree', 'messages']) {
      const reply = await get(server.port, api(`/api/sessions/nobody/${route}`));
      expect(reply.status).toBe(404);
      expect(reply.body).toMatch(/^NOT_FOUND: /);
    }
  });

  it('answers the tree of a session and its messages for the branch diff', async () => {
    const tree = JSON.parse((await get(server.port, api('/api/sessions/streamed/tree'))).body);
    expect(tree).toMatchObject({ root: { id: 'streamed', link: null, children: [] }, omitted: 0 });
    const messages = JSON.parse(
      (await get(server.port, api('/api/sessions/streamed/messages'))).body,
    );
    expect(messages.header.id).toBe('streamed');
    expect(messages.events.map((event: SessionEvent) => event.type)).toEqual([
      'user/message',
      'assistant/message',
      'tool/result',
      'assistant/message',
    ]);
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

describe('the viewer server over an encrypted store', () => {
  const token = 'test-token-encrypted-0123456789';
  const api = (path: string): string => `${path}?token=${token}`;

  it('lists a session whose key was shredded with the reason, and refuses sealed content with 403', async () => {
    const inner = new MemoryStore();
    const keys = { keys: masterKeyProvider(randomBytes(32)), vault: new MemoryKeyVault() };
    const store = new EncryptedStore(inner, keys);
    await record(store, 'kept', (session) => {
      session.append('user/message', user('u0', 'still readable'), { surfaceOp: 'append' });
    });
    await record(store, 'erased', (session) => {
      session.append('user/message', user('u0', 'gone for good'), { surfaceOp: 'append' });
    });
    await store.shred('erased');
    const withKeys = await startViewerServer({ store, token });
    const keyless = await startViewerServer({ store: inner, token });
    try {
      const list = JSON.parse((await get(withKeys.port, api('/api/sessions'))).body);
      expect(list.sessions.map((s: { id: string }) => s.id)).toEqual(['kept']);
      expect(list.damaged).toEqual([{ id: 'erased', reason: expect.stringContaining('shredded') }]);
      const shredded = await get(withKeys.port, api('/api/sessions/erased/events'));
      expect(shredded.status).toBe(403);
      expect(shredded.body).toContain('KEY_SHREDDED');
      const sealed = await get(keyless.port, api('/api/sessions/kept/events'));
      expect(sealed.status).toBe(403);
      expect(sealed.body).toContain('KEY_REQUIRED');
      expect(sealed.body).not.toContain('still readable');
      // The chunk bodies (not a live stream) answer with the keys, and are refused without.
      expect((await get(withKeys.port, api('/api/sessions/kept/chunks'))).status).toBe(200);
      expect((await get(keyless.port, api('/api/sessions/kept/chunks'))).status).toBe(403);
    } finally {
      await withKeys.close();
      await keyless.close();
    }
  });
});
