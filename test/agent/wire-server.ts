/**
 * A local HTTP server that replays recorded provider responses byte for byte, so the real
 * AI SDK provider packages can be tested against their own wire format without mocking them.
 *
 * Fixtures live in `test/fixtures/wire/` (see the README there): each file is one HTTP response
 * as it came over the wire — status line, headers, a blank line, then the exact body. The server
 * answers requests from a queue of replies, records every request it receives, can pause between
 * SSE events and can cut the connection part-way through a body.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';

/** The directory holding the recorded responses. */
export const wireFixturesDir: string = join(import.meta.dirname, '..', 'fixtures', 'wire');

/** One recorded HTTP response, parsed from a fixture file. */
export interface WireFixture {
  /** Where the fixture came from (its path under {@link wireFixturesDir}, or a caller's label). */
  readonly name: string;
  /** The `#` comment lines at the top of the file, joined with newlines. */
  readonly description: string;
  readonly status: number;
  readonly statusText: string;
  /** Response headers in file order, names as written. */
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>;
  /** The exact response body. */
  readonly body: string;
  /**
   * The body split after each blank line (an SSE event ends with one); concatenated they are
   * `body`. A body with no blank line is a single segment.
   */
  readonly events: readonly string[];
  /**
   * The recording ends with the connection cut (the `# wire: cut` directive): the server sends
   * the whole body and then drops the socket without finishing the response.
   */
  readonly cut: boolean;
}

/** Headers that describe the framing of one connection; the server sets them itself. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

/**
 * Parses a fixture's text. Format: optional `#` comment lines; a status line
 * `HTTP/1.1 <status> <reason>`; `name: value` header lines; one empty line; the body, which is
 * everything after that empty line, byte for byte. The comment `# wire: cut` marks a recording
 * whose connection was cut after the body.
 *
 * @throws Error when the text is not in that format, or sets a framing header
 * (content-length, transfer-encoding, connection).
 */
export function parseWireFixture(text: string, name = '<inline>'): WireFixture {
  function fail(reason: string): never {
    throw new Error(`wire fixture ${name}: ${reason}`);
  }
  const separator = text.indexOf('\n\n');
  if (separator === -1) fail('no empty line between the headers and the body');
  const head = text.slice(0, separator).split('\n');
  const body = text.slice(separator + 2);

  const comments: string[] = [];
  let line = head.shift();
  while (line?.startsWith('#')) {
    comments.push(line.replace(/^#\s?/, ''));
    line = head.shift();
  }
  const statusLine = /^HTTP\/1\.1 (\d{3}) (.+)$/.exec(line ?? '');
  if (statusLine === null) fail(`expected a status line "HTTP/1.1 <status> <reason>", got ${line}`);
  const headers: Array<readonly [string, string]> = [];
  for (const headerLine of head) {
    const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(headerLine);
    if (match === null) fail(`malformed header line: ${headerLine}`);
    const [, headerName = '', value = ''] = match;
    if (FRAMING_HEADERS.has(headerName.toLowerCase())) {
      fail(`${headerName} is set by the server, not by the recording`);
    }
    headers.push([headerName, value]);
  }

  return {
    name,
    description: comments.filter((comment) => comment !== 'wire: cut').join('\n'),
    status: Number(statusLine[1]),
    statusText: statusLine[2] ?? '',
    headers,
    body,
    events: splitEvents(body),
    cut: comments.includes('wire: cut'),
  };
}

function splitEvents(body: string): string[] {
  const events: string[] = [];
  let start = 0;
  for (;;) {
    const end = body.indexOf('\n\n', start);
    if (end === -1) break;
    events.push(body.slice(start, end + 2));
    start = end + 2;
  }
  if (start < body.length) events.push(body.slice(start));
  return events;
}

/** Reads and parses a fixture by its path under {@link wireFixturesDir}, e.g. `anthropic/text.http`. */
export function loadWireFixture(name: string): WireFixture {
  return parseWireFixture(readFileSync(join(wireFixturesDir, name), 'utf8'), name);
}

/** The header value a fixture sets, by case-insensitive name. */
export function fixtureHeader(fixture: WireFixture, name: string): string | undefined {
  return fixture.headers.find(([header]) => header.toLowerCase() === name.toLowerCase())?.[1];
}

/** How the server answers one request. */
export interface WireReply {
  /** The response to replay: a parsed fixture or a path under {@link wireFixturesDir}. */
  readonly fixture: WireFixture | string;
  /**
   * The request this reply is for. A request with another method or path gets a 404 instead,
   * and the mismatch is listed in {@link WireServer.problems}.
   */
  readonly expect?: { readonly method?: string; readonly path?: string };
  /** Milliseconds to wait before each body segment after the first. Default 0. */
  readonly delayMs?: number;
  /**
   * Cut the connection after this many body segments ({@link WireFixture.events}), whatever the
   * fixture says. Default: the whole body, then a cut only if the fixture is marked `cut`.
   */
  readonly cutAfterEvents?: number;
  /**
   * How a cut looks to the client: `close` ends the socket cleanly (FIN) with the chunked body
   * unfinished (undici reports `UND_ERR_SOCKET`); `reset` aborts it with a TCP RST (the client
   * sees `ECONNRESET`). Either way the server first waits 20 ms so the client has read the
   * segments before the cut. Default `close`.
   */
  readonly cutMode?: 'close' | 'reset';
}

/** One request the server received, as the client sent it. */
export interface RecordedRequest {
  readonly method: string;
  /** The request target: path and query string. */
  readonly path: string;
  /** Header names lower-cased; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text. */
  readonly rawBody: string;
  /** The body parsed as JSON, or `undefined` when it is empty or not JSON. */
  readonly body: unknown;
}

/** A running replay server. */
export interface WireServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly baseURL: string;
  /** Every request received so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /**
   * What went wrong on the server side: requests that found the queue empty or did not match
   * their reply's `expect`. A test that drains its queue should see this empty.
   */
  readonly problems: readonly string[];
  /** How many queued replies have not been used yet. */
  readonly pending: number;
  /** Adds replies to the end of the queue; a string is shorthand for `{ fixture: string }`. */
  enqueue(...replies: ReadonlyArray<WireReply | string>): void;
  /**
   * The most recent request.
   * @throws Error when no request has arrived.
   */
  lastRequest(): RecordedRequest;
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

/**
 * Starts a replay server on 127.0.0.1 (a free port) that answers each request with the next
 * reply from its queue, in order.
 */
export async function startWireServer(
  replies: ReadonlyArray<WireReply | string> = [],
): Promise<WireServer> {
  const queue: WireReply[] = [];
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  const sockets = new Set<Socket>();
  const enqueue = (...more: ReadonlyArray<WireReply | string>): void => {
    for (const reply of more) queue.push(typeof reply === 'string' ? { fixture: reply } : reply);
  };
  enqueue(...replies);

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      problems.push(`failed to answer ${request.method} ${request.url}: ${String(error)}`);
      response.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const recorded = await record(request);
    requests.push(recorded);
    const reply = queue.shift();
    const target = `${recorded.method} ${recorded.path}`;
    if (reply === undefined) {
      problems.push(`unexpected request ${target}: the reply queue is empty`);
      return refuse(response, 500, `wire-server: no reply queued for ${target}`);
    }
    const expected = reply.expect;
    if (
      (expected?.method !== undefined && expected.method !== recorded.method) ||
      (expected?.path !== undefined && expected.path !== recorded.path)
    ) {
      const wanted = `${expected?.method ?? recorded.method} ${expected?.path ?? recorded.path}`;
      problems.push(`expected ${wanted}, got ${target}`);
      return refuse(response, 404, `wire-server: expected ${wanted}, got ${target}`);
    }
    const fixture =
      typeof reply.fixture === 'string' ? loadWireFixture(reply.fixture) : reply.fixture;
    await replay(response, fixture, reply);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    problems,
    get pending() {
      return queue.length;
    },
    enqueue,
    lastRequest() {
      const last = requests.at(-1);
      if (last === undefined) throw new Error('wire-server: no request has arrived');
      return last;
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

/**
 * A replay server for the calling test file: started before each test (or, with `per: 'file'`,
 * once before the file's first test) and closed after it. Closing fails the test when the server
 * saw a problem or kept a reply unused, unless `check` is false. The handle returned stands for
 * the server of the test that is running, so a file can keep it in a module constant.
 */
export function useWireServer(
  options: { readonly per?: 'test' | 'file'; readonly check?: boolean } = {},
): WireServer {
  let current: WireServer | undefined;
  const server = (): WireServer => {
    if (current === undefined) throw new Error('wire-server: used outside a test');
    return current;
  };
  const start = async (): Promise<void> => {
    current = await startWireServer();
  };
  const stop = async (): Promise<void> => {
    const running = current;
    current = undefined;
    if (running === undefined) return;
    const problems = [...running.problems];
    const pending = running.pending;
    await running.close();
    if (options.check === false) return;
    expect(problems).toEqual([]);
    expect(pending).toBe(0);
  };
  if (options.per === 'file') {
    beforeAll(start);
    afterAll(stop);
  } else {
    beforeEach(start);
    afterEach(stop);
  }
  return {
    get baseURL() {
      return server().baseURL;
    },
    get requests() {
      return server().requests;
    },
    get problems() {
      return server().problems;
    },
    get pending() {
      return server().pending;
    },
    enqueue: (...replies) => server().enqueue(...replies),
    lastRequest: () => server().lastRequest(),
    close: () => server().close(),
  };
}

async function record(request: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = rawBody === '' ? undefined : JSON.parse(rawBody);
  } catch {
    body = undefined;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { method: request.method ?? '', path: request.url ?? '', headers, rawBody, body };
}

function refuse(response: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { message, type: 'wire_server_error' } });
  response.writeHead(status, { 'content-type': 'application/json', 'x-wire-server-error': '1' });
  response.end(body);
}

async function replay(
  response: ServerResponse,
  fixture: WireFixture,
  reply: WireReply,
): Promise<void> {
  const cutAfter = reply.cutAfterEvents ?? (fixture.cut ? fixture.events.length : undefined);
  const events = fixture.events.slice(0, cutAfter);
  let closed = false;
  response.on('close', () => {
    closed = true;
  });

  response.writeHead(fixture.status, fixture.statusText, Object.fromEntries(fixture.headers));
  response.flushHeaders();
  for (const [index, event] of events.entries()) {
    if (index > 0 && (reply.delayMs ?? 0) > 0) await sleep(reply.delayMs ?? 0);
    if (closed) return;
    // A failed write means the client went away (an abort, say): nothing more to send.
    await new Promise<void>((resolve) =>
      response.write(event, (error) => {
        if (error) closed = true;
        resolve();
      }),
    );
  }
  if (closed) return;
  if (cutAfter === undefined) {
    response.end();
    return;
  }
  // Let the client read what was sent before the connection goes away.
  await sleep(20);
  const socket = response.socket;
  if (socket === null) return;
  if (reply.cutMode === 'reset') socket.resetAndDestroy();
  else socket.destroy();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
