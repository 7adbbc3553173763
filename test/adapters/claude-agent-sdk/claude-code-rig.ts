/**
 * The real Claude Code, offline: the binary the Claude Agent SDK ships (its platform package) run
 * through the SDK's `query()` against a loopback server speaking the Anthropic Messages API. The
 * model's answers are scripted by what the request asks (a prompt naming PARALLEL gets two
 * parallel `Read` calls, one naming SUBAGENT an `Agent` call, a request holding tool results a
 * closing text); everything else (the transcript entries, their chain, the subagent's own
 * transcript, the mirror's batches) is Claude Code's.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InMemorySessionStore,
  query,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
} from '@anthropic-ai/claude-agent-sdk';
import { describe } from 'vitest';

/** `describe` where the SDK's Claude Code binary is installed; CI requires it. */
export const describeClaudeCode: typeof describe = (() => {
  const binary = `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}`;
  let found = false;
  try {
    createRequire(import.meta.url).resolve(`${binary}/package.json`);
    found = true;
  } catch {}
  if (found) return describe;
  const message = `no ${binary}: the live Claude Code tests are skipped (npm installs it with the SDK's optional dependencies)`;
  if (process.env.PALIMPSEST_REQUIRE_CLAUDE_CODE === '1') throw new Error(message);
  console.warn(`\n*** ${message} ***\n`);
  return describe.skip;
})() as typeof describe;

type Block = Record<string, unknown>;
interface Reply {
  readonly content: readonly Block[];
  readonly stop: string;
  /** Send the start of the answer, then nothing more: the user interrupts it. */
  readonly stall?: boolean;
}

/** What the scripted model answers to a request. */
function answer(
  body: { messages: { role: string; content: unknown }[] },
  cwd: string,
  n: number,
): Reply {
  const lastAnswer = body.messages.findLastIndex((message) => message.role === 'assistant');
  const asked = body.messages.slice(lastAnswer + 1);
  const blocks = asked.flatMap((message) =>
    Array.isArray(message.content) ? (message.content as Block[]) : [],
  );
  const results = blocks.filter((block) => block.type === 'tool_result').length;
  const text = JSON.stringify(asked);
  if (results > 0)
    return { content: [{ type: 'text', text: `Read ${results} results.` }], stop: 'end_turn' };
  if (text.includes('PARALLEL')) {
    return {
      content: [
        { type: 'text', text: 'Reading both files.' },
        {
          type: 'tool_use',
          id: `toolu_a${n}`,
          name: 'Read',
          input: { file_path: join(cwd, 'a.txt') },
        },
        {
          type: 'tool_use',
          id: `toolu_b${n}`,
          name: 'Read',
          input: { file_path: join(cwd, 'b.txt') },
        },
      ],
      stop: 'tool_use',
    };
  }
  if (text.includes('STALL')) {
    return { content: [{ type: 'text', text: 'Thinking about' }], stop: 'end_turn', stall: true };
  }
  if (text.includes('SUBAGENT')) {
    const input = { description: 'greet', prompt: 'Say hello.', subagent_type: 'general-purpose' };
    return {
      content: [{ type: 'tool_use', id: `toolu_t${n}`, name: 'Agent', input }],
      stop: 'tool_use',
    };
  }
  return { content: [{ type: 'text', text: 'Hello from the loopback model.' }], stop: 'end_turn' };
}

function sse(reply: Reply, model: string, n: number): string {
  const events: string[] = [];
  const send = (event: string, data: object): void => {
    events.push(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  };
  const usage = {
    input_tokens: 12,
    output_tokens: 1,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  send('message_start', {
    message: {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  reply.content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    send('content_block_start', { index, content_block: start });
    const delta =
      block.type === 'text'
        ? { type: 'text_delta', text: block.text }
        : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
    send('content_block_delta', { index, delta });
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: reply.stop, stop_sequence: null },
    usage: { output_tokens: 7 },
  });
  send('message_stop', {});
  return events.join('');
}

/** A request body the loopback model received. */
export interface ModelRequest {
  readonly messages: { readonly role: string; readonly content: unknown }[];
}

async function startModel(
  cwd: string,
  onStall: () => void,
  requests: ModelRequest[] = [],
): Promise<Server> {
  let n = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      n++;
      if (!request.url?.startsWith('/v1/messages')) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (request.url.includes('count_tokens')) {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":100}');
        return;
      }
      requests.push(body);
      const reply = answer(body, cwd, n);
      if (body.stream === true) {
        response.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_${n}` });
        const events = sse(reply, body.model, n);
        if (reply.stall === true) {
          // Up to the first text delta, then silence until the client goes away.
          response.write(events.slice(0, events.indexOf('event: content_block_stop')));
          onStall();
          return;
        }
        response.end(events);
        return;
      }
      const message = {
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: reply.content,
        stop_reason: reply.stop,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 7 },
      };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Claude Code's environment: the loopback model, its own config folder, nothing sent out. */
function claudeEnv(server: Server, configDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ANTHROPIC_API_KEY: 'sk-loopback-test',
    CLAUDE_CONFIG_DIR: configDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

/** One `append` call the SDK made, as it made it. */
export interface MirrorBatch {
  readonly key: SessionKey;
  readonly entries: SessionStoreEntry[];
}

/** A store that hands every call to the reference store and records the append batches. */
export class RecordingStore extends InMemorySessionStore {
  readonly batches: MirrorBatch[] = [];

  override async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    this.batches.push({ key: { ...key }, entries: structuredClone(entries) });
    await super.append(key, entries);
  }
}

/** What a run of Claude Code left. */
export interface ClaudeCodeRun {
  readonly sessionId: string;
  /** The working directory Claude Code ran in. */
  readonly cwd: string;
  /** `CLAUDE_CONFIG_DIR`: Claude Code's own transcripts are under `projects/`. */
  readonly configDir: string;
  /** The `result` messages, one per prompt (and one per turn a background task started). */
  readonly results: { readonly subtype: string; readonly result?: string }[];
  /** Runs one more prompt in the session, resuming it through the store. */
  readonly ask: (
    prompt: string,
    options?: { readonly resumeSessionAt?: string; readonly abortController?: AbortController },
  ) => Promise<void>;
  /** Resolves once the model has sent the start of an answer to a STALL prompt and stopped. */
  readonly stalled: () => Promise<void>;
  /** Stops the loopback model. */
  readonly close: () => void;
}

/**
 * Runs Claude Code once per prompt (the second and later resuming the session through the store),
 * mirroring into `sessionStore`. The run stays open for more prompts until `close`.
 */
export async function runClaudeCode(
  prompts: readonly string[],
  sessionStore: SessionStore,
): Promise<ClaudeCodeRun> {
  const cwd = mkdtempSync(join(tmpdir(), 'claude-cwd-'));
  writeFileSync(join(cwd, 'a.txt'), 'alpha\n');
  writeFileSync(join(cwd, 'b.txt'), 'beta\n');
  const configDir = mkdtempSync(join(tmpdir(), 'claude-config-'));
  let stall: () => void = () => {};
  const stalled = new Promise<void>((resolve) => {
    stall = resolve;
  });
  const server = await startModel(cwd, () => stall());
  const env = claudeEnv(server, configDir);
  let sessionId: string | undefined;
  const results: { subtype: string; result?: string }[] = [];
  const ask = async (
    prompt: string,
    extra: { readonly resumeSessionAt?: string; readonly abortController?: AbortController } = {},
  ): Promise<void> => {
    const options = {
      cwd,
      env,
      sessionStore,
      allowedTools: ['Read', 'Agent'],
      ...(sessionId === undefined ? {} : { resume: sessionId }),
      ...extra,
    };
    for await (const message of query({ prompt, options })) {
      if (message.type !== 'result') continue;
      sessionId = message.session_id;
      results.push({
        subtype: message.subtype,
        ...('result' in message ? { result: message.result } : {}),
      });
    }
  };
  try {
    for (const prompt of prompts) await ask(prompt);
  } catch (error) {
    server.close();
    throw error;
  }
  if (sessionId === undefined) throw new Error('Claude Code gave no result');
  if (!existsSync(join(configDir, 'projects'))) throw new Error('Claude Code wrote no transcript');
  const close = (): void => {
    server.closeAllConnections();
    server.close();
  };
  return { sessionId, cwd, configDir, results, ask, stalled: () => stalled, close };
}

/**
 * Resumes the transcript `text` (session `sessionId`, filed as Claude Code files it for `cwd`) in
 * the real Claude Code with one more prompt; gives the requests the model received.
 */
export async function resumeTranscript(
  text: string,
  sessionId: string,
  cwd: string,
  prompt: string,
): Promise<{ readonly requests: readonly ModelRequest[]; readonly subtype: string }> {
  const configDir = mkdtempSync(join(tmpdir(), 'claude-config-'));
  const project = join(configDir, 'projects', cwd.replace(/[^a-zA-Z0-9]/g, '-'));
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, `${sessionId}.jsonl`), text);
  const requests: ModelRequest[] = [];
  const server = await startModel(cwd, () => {}, requests);
  let subtype = 'none';
  try {
    const env = claudeEnv(server, configDir);
    for await (const message of query({
      prompt,
      options: { cwd, env, resume: sessionId, allowedTools: [] },
    })) {
      if (message.type === 'result') subtype = message.subtype;
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
  return { requests, subtype };
}
