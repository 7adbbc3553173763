/**
 * Many sessions in one process: a plain `node:http` server that runs agent turns for many
 * sessions at once, all recorded in one store. Each session has one writer (this process holds
 * its lock while the session is open) and runs one turn at a time; different sessions run
 * concurrently. Idle sessions are closed, which flushes them and releases their locks.
 *
 *   POST /sessions/:id/turns   {"input": "..."}  → runs a turn, answers {turn, reason, text}
 *                                                  (409 while that session has a turn running)
 *   GET  /sessions/:id/messages                   → what the model sees now
 *   GET  /sessions                                → the store's sessions
 *
 * Run with `npm run example:server` (a real provider when a key is set, else the scripted
 * model), then for example:
 *   curl -s localhost:8787/sessions/alice/turns -d '{"input":"hello"}'
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { AgentError, modelFromEnv, runTurn } from 'palimpsest/agent';
import {
  inspectSession,
  type LiveSession,
  NotFoundError,
  openSession,
  openStore,
  type SessionStore,
} from 'palimpsest/store';
import { scriptedModel } from 'palimpsest/testing';

/** The limits of one server process; see docs/agent.md ("Many sessions in one process"). */
export interface ServerLimits {
  /** Sessions kept open at once; the least recently used idle one is closed past it. */
  readonly maxOpenSessions: number;
  /** Turns running at once across all sessions; more are answered 503. */
  readonly maxConcurrentTurns: number;
  /** An open session with no turn for this long is closed (flushed, lock released). */
  readonly idleCloseMs: number;
  /** The longest request body accepted. */
  readonly maxBodyBytes: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxOpenSessions: 1000,
  maxConcurrentTurns: 64,
  idleCloseMs: 60_000,
  maxBodyBytes: 64 * 1024,
};

export interface AgentServer {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

interface OpenEntry {
  readonly session: Promise<LiveSession>;
  busy: boolean;
  lastUsed: number;
}

const SESSION_ID = /^[A-Za-z0-9._-]{1,100}$/;

/** Starts the server on `port` (0: any free port) of 127.0.0.1. */
export async function startAgentServer(options: {
  readonly store: SessionStore;
  readonly model: LanguageModelV3;
  readonly port?: number;
  readonly limits?: Partial<ServerLimits>;
}): Promise<AgentServer> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const open = new Map<string, OpenEntry>();
  let running = 0;

  const sessionFor = (id: string): OpenEntry => {
    let entry = open.get(id);
    if (entry === undefined) {
      entry = { session: openSession(options.store, id), busy: false, lastUsed: Date.now() };
      open.set(id, entry);
      // A session that failed to open is not kept: the next request tries again.
      entry.session.catch(() => open.delete(id));
      void closeOverflow();
    }
    entry.lastUsed = Date.now();
    return entry;
  };

  const closeEntry = async (id: string, entry: OpenEntry): Promise<void> => {
    open.delete(id);
    await (await entry.session).close();
  };

  const closeOverflow = async (): Promise<void> => {
    const idle = [...open.entries()]
      .filter(([, entry]) => !entry.busy)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    const now = Date.now();
    for (const [id, entry] of idle) {
      if (open.size <= limits.maxOpenSessions && now - entry.lastUsed < limits.idleCloseMs) break;
      // Closing awaits: a request may have taken this session up since the list was made.
      if (entry.busy || open.get(id) !== entry || Date.now() - entry.lastUsed < 1000) continue;
      await closeEntry(id, entry).catch(() => undefined);
    }
  };
  const sweeper = setInterval(() => void closeOverflow(), Math.min(limits.idleCloseMs, 10_000));
  sweeper.unref();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const parts = url.pathname.split('/').filter((part) => part !== '');
    if (request.method === 'GET' && parts.length === 1 && parts[0] === 'sessions') {
      const page = await options.store.list({ limit: 100 });
      return send(response, 200, { sessions: page.sessions.map((summary) => summary.header.id) });
    }
    if (parts[0] !== 'sessions' || parts.length !== 3)
      return send(response, 404, { error: 'no such route' });
    const id = parts[1] ?? '';
    if (!SESSION_ID.test(id)) {
      return send(response, 400, {
        error: `expected a session id of [A-Za-z0-9._-]{1,100}, found '${id.slice(0, 40)}'`,
      });
    }
    if (request.method === 'GET' && parts[2] === 'messages') {
      // Reading needs no writer: an open session answers from memory, any other from the store.
      const entry = open.get(id);
      try {
        const session =
          entry === undefined ? await inspectSession(options.store, id) : await entry.session;
        return send(response, 200, { messages: session.deriveMessages() });
      } catch (error) {
        if (NotFoundError.isInstance(error))
          return send(response, 404, { error: `no session '${id}'` });
        throw error;
      }
    }
    if (request.method !== 'POST' || parts[2] !== 'turns')
      return send(response, 404, { error: 'no such route' });
    const body = await readBody(request, limits.maxBodyBytes);
    const input = (body as { input?: unknown } | undefined)?.input;
    if (typeof input !== 'string' || input.trim() === '') {
      return send(response, 400, { error: 'expected a JSON body {"input": "a non-empty string"}' });
    }
    const entry = sessionFor(id);
    if (entry.busy) return send(response, 409, { error: `session '${id}' has a turn running` });
    if (running >= limits.maxConcurrentTurns) {
      return send(response, 503, { error: 'too many turns running; retry later' });
    }
    entry.busy = true;
    running += 1;
    // A client that goes away cancels its turn; the session stays valid (turn/end aborted).
    const controller = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) controller.abort('client went away');
    });
    try {
      const session = await entry.session;
      const result = await runTurn({
        session,
        model: options.model,
        input,
        signal: controller.signal,
      });
      await session.flush(); // answer only once the turn is durable
      return send(response, 200, { turn: result.turn, reason: result.reason, text: result.text });
    } finally {
      entry.busy = false;
      entry.lastUsed = Date.now();
      running -= 1;
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const status = AgentError.isInstance(error) && error.code === 'TURN_IN_PROGRESS' ? 409 : 500;
      send(response, status, { error: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    async close() {
      clearInterval(sweeper);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...open.entries()].map(([id, entry]) => closeEntry(id, entry)));
    },
  };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

// Run directly: serve on port 8787 (or $PORT) until Ctrl-C.
if (import.meta.url === `file://${process.argv[1]}`) {
  const store = await openStore(process.env.PALIMPSEST_STORE ?? 'jsonl:./.palimpsest/server');
  const { model, description, notice } = await modelFromEnv({
    fallback: scriptedModel([{ text: 'Hello from the offline scripted model.' }], { loop: true }),
  });
  if (notice !== undefined) console.log(`note: ${notice}`);
  const served = await startAgentServer({ store, model, port: Number(process.env.PORT ?? 8787) });
  console.log(`serving ${description} at ${served.url} (Ctrl-C stops)`);
  process.once('SIGINT', () => {
    void served.close().then(() => store.close());
  });
}
