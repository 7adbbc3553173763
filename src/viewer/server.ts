/**
 * The viewer's loopback HTTP server. It serves the bundled page and a small API over one store:
 * the session list, one session's events as newline-delimited JSON (the stored events first,
 * finished stream chunks as elided stubs, then each batch a writer commits, from `store.watch`),
 * the bodies of its stream chunks, and the request a model call received (for the trace). The
 * page folds the events with core.
 *
 * It listens on 127.0.0.1 only. Every API route needs the random token of the URL the CLI
 * prints; every request needs a Host header naming this server (a DNS-rebinding page cannot
 * forge one); every response carries a strict Content-Security-Policy.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicBody, openaiBody, requestAt } from '../agent/index.js';
import { InvalidArgumentError, PalimpsestError, type SessionEvent } from '../core/index.js';
import { checkSessionId } from '../store/contract/store-rules.js';
import {
  CorruptLogError,
  EncryptionError,
  FormatVersionError,
  inspectSession,
  requireReadable,
  SearchQueryError,
  type SessionStore,
  ShreddedKeyError,
  searchSessions,
} from '../store/index.js';
import { everySession } from '../store/session/list-all.js';
import { AnswerCache } from './answer-cache.js';
import { pageAssets } from './assets.js';
import { ViewerError } from './errors.js';
import { pageDocument } from './page-html.js';
import {
  type CallRequest,
  type ChunkBodies,
  REQUEST_WIRES,
  type SessionList,
  type SessionListing,
  type SessionListingHit,
  SNAPSHOT_PART_CHARS,
  SNAPSHOT_PART_PREFIX,
  type SnapshotStart,
  type StreamLine,
} from './protocol.js';
import { branchMessages, sessionTree, verifyStatus } from './session-routes.js';

/** Options of {@link startViewerServer}. */
export interface ViewerServerOptions {
  readonly store: SessionStore;
  /** The port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** The API token; a random one by default (tests pass their own). */
  readonly token?: string;
}

/** A running viewer server. */
export interface ViewerServer {
  /** The page's URL with the token, for a person to open. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Stops listening and ends every open event stream. */
  close(): Promise<void>;
}

/** The policy of the served page: its own script and style, and requests to itself only. */
export const SERVED_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': SERVED_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

const LOOPBACK = '127.0.0.1';

/** A refusal: its HTTP status and one line saying why. */
class Refusal {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {}
}

/**
 * Starts the server on 127.0.0.1.
 *
 * @throws ViewerError `INVALID_PORT` for a port outside 0..65535, `PORT_UNAVAILABLE` when it
 * cannot listen there.
 */
export async function startViewerServer(options: ViewerServerOptions): Promise<ViewerServer> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ViewerError(
      'INVALID_PORT',
      `the port must be an integer from 0 to 65535, found ${String(port)}`,
    );
  }
  pageAssets(); // fail now, not on the first request, when the page is not built
  const token = options.token ?? randomBytes(24).toString('base64url');
  const streams = new Set<AbortController>();
  const state = { port: 0 };
  const cache = new AnswerCache();
  const server = createServer((request, response) => {
    const context = { store: options.store, token, port: state.port, streams, cache };
    handle(request, response, context).catch((error: unknown) => fail(response, error));
  });
  await listen(server, port);
  state.port = (server.address() as AddressInfo).port;
  return {
    url: `http://${LOOPBACK}:${state.port}/?token=${token}`,
    port: state.port,
    token,
    close: () => {
      for (const stream of streams) stream.abort();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new ViewerError(
          'PORT_UNAVAILABLE',
          `cannot listen on ${LOOPBACK}:${port}: expected a free port, found ${error.code ?? error.message}`,
          {
            cause: error,
          },
        ),
      ),
    );
    server.listen(port, LOOPBACK, () => resolve());
  });
}

interface Context {
  readonly store: SessionStore;
  readonly token: string;
  readonly port: number;
  readonly streams: Set<AbortController>;
  readonly cache: AnswerCache;
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  context: Context,
): Promise<void> {
  const host = request.headers.host;
  if (host !== `${LOOPBACK}:${context.port}` && host !== `localhost:${context.port}`) {
    throw new Refusal(
      421,
      `expected the Host header ${LOOPBACK}:${context.port}, found ${JSON.stringify(host ?? null)}`,
    );
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    throw new Refusal(405, `expected GET, found ${request.method ?? '?'}`);
  }
  const rawPath = (request.url ?? '/').split('?')[0] ?? '/';
  // Dot segments are refused before any parsing could resolve them away.
  if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(rawPath))
    throw new Refusal(400, 'a path may not hold . or .. segments');
  const url = new URL(request.url ?? '/', `http://${LOOPBACK}`);
  const path = url.pathname;
  if (path === '/') return send(response, 200, 'text/html; charset=utf-8', servedPage());
  if (path === '/assets/page.js')
    return send(response, 200, 'text/javascript; charset=utf-8', pageAssets().script);
  if (path === '/assets/page.css')
    return send(response, 200, 'text/css; charset=utf-8', pageAssets().style);
  if (!path.startsWith('/api/')) throw new Refusal(404, `no such page: ${path.slice(0, 80)}`);
  checkToken(url.searchParams.get('token'), context.token);
  if (path === '/api/sessions') {
    const query = url.searchParams.get('q') ?? '';
    return sendJson(response, await sessionList(context.store, context.cache, query));
  }
  const match = /^\/api\/sessions\/([^/]+)\/(events|chunks|request|verify|tree|messages)$/.exec(
    path,
  );
  if (match?.[1] === undefined) throw new Refusal(404, `no such API route: ${path.slice(0, 80)}`);
  const id = sessionIdOf(match[1]);
  if (match[2] === 'chunks') return sendJson(response, await chunkBodies(context.store, id));
  if (match[2] === 'request') {
    return sendJson(response, await callRequest(context.store, id, url.searchParams));
  }
  if (match[2] === 'verify') {
    const head = headOf(url.searchParams.get('seq'));
    const status = context.cache.verifyOf(id, head, () => verifyStatus(context.store, id));
    return sendJson(response, await status);
  }
  if (match[2] === 'tree') return sendJson(response, await sessionTree(context.store, id));
  if (match[2] === 'messages') return sendJson(response, await branchMessages(context.store, id));
  return streamSession(request, response, context, id);
}

function checkToken(given: string | null, token: string): void {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(token);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new Refusal(
      403,
      given === null
        ? 'expected the token of the viewer URL, found none'
        : 'expected the token of the viewer URL, found another',
    );
  }
}

function sessionIdOf(segment: string): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new Refusal(400, 'the session id is not valid percent-encoding');
  }
  // Ids may hold `/` and `\` (a subagent's `<parent>/subagents/agent-<id>`): the store maps an id
  // to its own storage (an encoded file name, a bound parameter), never to a path.
  if (id === '.' || id === '..') throw new Refusal(400, 'a session id may not be . or ..');
  try {
    checkSessionId(id);
  } catch (error) {
    throw new Refusal(400, error instanceof Error ? error.message : String(error));
  }
  return id;
}

let cachedPage: string | undefined;

function servedPage(): string {
  cachedPage ??= pageDocument(
    '<link rel="stylesheet" href="/assets/page.css">',
    '<script src="/assets/page.js"></script>',
  );
  return cachedPage;
}

/** The `?seq=` of a verify request: the event count the page holds, if it says. */
function headOf(text: string | null): number | undefined {
  if (text === null) return undefined;
  if (!/^\d{1,15}$/.test(text)) {
    throw new Refusal(
      400,
      `expected ?seq= the event count of the page's session (a non-negative integer), found ${quoted(text)}`,
    );
  }
  return Number(text);
}

async function sessionList(
  store: SessionStore,
  cache: AnswerCache,
  query: string,
): Promise<SessionList> {
  const { sessions, damaged } = await everySession(store);
  const needle = query.toLowerCase();
  const found = needle === '' ? undefined : await hitsBySession(store, query);
  const listed: SessionListing[] = [];
  const unreadable: Array<{ id: string; reason: string }> = [];
  for (const summary of sessions) {
    const id = summary.header.id;
    const hits = found?.get(id);
    if (found !== undefined && hits === undefined && !id.toLowerCase().includes(needle)) continue;
    try {
      const stats = await cache.statsOf(summary, (listed) => store.summarize(listed));
      listed.push({
        ...(hits === undefined ? {} : { hits }),
        id,
        createdAt: stats.header.createdAt,
        lastActivity: stats.lastEventTime ?? summary.updatedAt ?? stats.header.createdAt,
        events: stats.eventCount,
        turns: stats.lastTurn,
        parent: stats.header.parentSession ?? null,
      });
    } catch (error) {
      // Damage the list could not see (it reads headers) is listed, not fatal, as in `ls`; so
      // is an encrypted session whose key cannot be had (shredded, or another vault's).
      if (EncryptionError.isInstance(error) || ShreddedKeyError.isInstance(error)) {
        unreadable.push({ id, reason: error.message });
        continue;
      }
      if (!CorruptLogError.isInstance(error) && !FormatVersionError.isInstance(error)) throw error;
      damaged.push({ id, error });
    }
  }
  return {
    sessions: listed,
    damaged: [
      ...damaged.map((entry) => ({ id: entry.id ?? null, reason: entry.error.message })),
      ...unreadable,
    ],
  };
}

/** The hits of the list's search text, a few per session, through the store's search index. */
async function hitsBySession(
  store: SessionStore,
  query: string,
): Promise<Map<string, SessionListingHit[]>> {
  const bySession = new Map<string, SessionListingHit[]>();
  let hits: Awaited<ReturnType<typeof searchSessions>>['hits'];
  try {
    ({ hits } = await searchSessions(store, query, {
      includeForks: true,
      includeChildren: true,
      limit: 200,
    }));
  } catch (error) {
    // Text that is no query (punctuation, an open quote while typing) still matches ids.
    if (SearchQueryError.isInstance(error)) return bySession;
    throw error;
  }
  for (const hit of hits) {
    const list = bySession.get(hit.session) ?? [];
    if (list.length < HITS_PER_SESSION)
      list.push({ seq: hit.seq, role: hit.role, snippet: hit.snippet });
    bySession.set(hit.session, list);
  }
  return bySession;
}

const HITS_PER_SESSION = 3;

/** The stream chunks of session `id` in full: the bodies its snapshot left out. */
async function chunkBodies(store: SessionStore, id: string): Promise<ChunkBodies> {
  const loaded = await store.load(id);
  requireReadable(loaded, store.location);
  const { events } = loaded;
  return { chunks: events.filter((event) => event.type === 'assistant/chunk') };
}

/** The request of the call whose step holds `?seq=`, in the form `?wire=` names. */
async function callRequest(
  store: SessionStore,
  id: string,
  params: URLSearchParams,
): Promise<CallRequest> {
  const seqText = params.get('seq');
  if (seqText === null || !/^\d{1,15}$/.test(seqText)) {
    throw new Refusal(
      400,
      `expected ?seq= the seq of an event (a non-negative integer), found ${quoted(seqText)}`,
    );
  }
  const wire = params.get('wire') ?? 'palimpsest';
  if (!(REQUEST_WIRES as readonly string[]).includes(wire)) {
    throw new Refusal(
      400,
      `expected ?wire= one of ${REQUEST_WIRES.join(', ')}, found ${quoted(wire)}`,
    );
  }
  const session = await inspectSession(store, id);
  let request: ReturnType<typeof requestAt>;
  try {
    request = requestAt(session, Number(seqText));
  } catch (error) {
    if (!InvalidArgumentError.isInstance(error)) throw error;
    throw new Refusal(400, `${error.code}: ${error.message}`);
  }
  const { turn, step, stepStartSeq, answerSeq, digest, recordedDigest } = request;
  return {
    turn,
    step,
    stepStartSeq,
    ...(answerSeq === undefined ? {} : { answerSeq }),
    digest,
    ...(recordedDigest === undefined ? {} : { recordedDigest }),
    wire: wire as CallRequest['wire'],
    body:
      wire === 'openai'
        ? openaiBody(request.header, request.messages)
        : wire === 'anthropic'
          ? anthropicBody(request.header, request.messages)
          : request.request,
  };
}

/** A query parameter as JSON (control characters escaped), cut to a readable length. */
function quoted(value: string | null): string {
  return JSON.stringify(value === null || value.length <= 40 ? value : `${value.slice(0, 40)}…`);
}

async function streamSession(
  request: IncomingMessage,
  response: ServerResponse,
  context: Context,
  id: string,
): Promise<void> {
  const { store } = context;
  // Finished chunks leave as stubs: the first render does not need their bodies (the page
  // fetches them from /chunks afterwards), and on a streamed session they are most of the log.
  const loaded = await store.load(id, { elideFinishedChunks: true });
  // Sealed payloads are refused here, with the reason, rather than sent to a page that cannot
  // read them.
  requireReadable(loaded, store.location);
  const children = (await everySession(store, { parentSession: id })).sessions.map(
    (s) => s.header.id,
  );
  // Stringified before the first line leaves, which says how many parts follow.
  const parts = snapshotParts(loaded.events);
  const start: SnapshotStart = {
    kind: 'snapshot-start',
    header: loaded.header,
    children,
    parts: parts.length,
    eventCount: loaded.events.length,
  };
  const controller = new AbortController();
  context.streams.add(controller);
  request.on('close', () => controller.abort());
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'application/x-ndjson; charset=utf-8',
  });
  response.write(`${JSON.stringify(start)}\n`);
  for (const part of parts) response.write(part);
  // Events arrive one by one; those that arrive together leave in one line (one batch).
  let pending: SessionEvent[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0 || response.writableEnded) return;
    const line: StreamLine = { kind: 'events', events: pending };
    pending = [];
    response.write(`${JSON.stringify(line)}\n`);
  };
  try {
    for await (const event of store.watch(id, {
      fromSeq: loaded.events.length,
      signal: controller.signal,
    })) {
      pending.push(event);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    }
    flush();
  } catch (error) {
    flush();
    const code = PalimpsestError.isInstance(error) ? error.code : 'FAILURE';
    const line: StreamLine = {
      kind: 'error',
      code,
      message: error instanceof Error ? error.message : String(error),
    };
    if (!response.writableEnded) response.write(`${JSON.stringify(line)}\n`);
  } finally {
    context.streams.delete(controller);
    if (!response.writableEnded) response.end();
  }
}

/**
 * The lines of `events` as snapshot parts, each as many events as fit in about
 * {@link SNAPSHOT_PART_CHARS} characters (at least one: an event larger than that is a part
 * alone). Each event is stringified once, into the part it closes or the next.
 */
function snapshotParts(events: readonly SessionEvent[]): string[] {
  const parts: string[] = [];
  let texts: string[] = [];
  let chars = 0;
  const close = (): void => {
    parts.push(`${SNAPSHOT_PART_PREFIX}${texts.join(',')}]}\n`);
    texts = [];
    chars = 0;
  };
  for (const event of events) {
    const text = JSON.stringify(event);
    if (chars > 0 && chars + text.length > SNAPSHOT_PART_CHARS) close();
    texts.push(text);
    chars += text.length + 1;
  }
  if (texts.length > 0) close();
  return parts;
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type });
  response.end(body);
}

function sendJson(response: ServerResponse, value: unknown): void {
  send(response, 200, 'application/json; charset=utf-8', JSON.stringify(value));
}

function fail(response: ServerResponse, error: unknown): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const { status, text } = failureOf(error);
  send(response, status, 'text/plain; charset=utf-8', text);
}

/** The status and text of a failed request: the refusal's reason, a palimpsest error's code. */
function failureOf(error: unknown): { status: number; text: string } {
  if (error instanceof Refusal) return { status: error.status, text: error.reason };
  if (PalimpsestError.isInstance(error)) {
    const status =
      error.code === 'NOT_FOUND'
        ? 404
        : error.code === 'INVALID_SESSION_ID'
          ? 400
          : EncryptionError.isInstance(error) || ShreddedKeyError.isInstance(error)
            ? 403
            : 500;
    return { status, text: `${error.code}: ${error.message}` };
  }
  return { status: 500, text: 'the viewer server failed' };
}
