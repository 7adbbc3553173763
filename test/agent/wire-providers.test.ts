/**
 * The real AI SDK provider packages against recorded responses in each API's own wire format
 * (test/fixtures/wire/), served by a local HTTP server: what the agent loop can rely on from a
 * LanguageModelV3 stream — text, reasoning, tool calls, usage, finish reasons and errors — and
 * what each provider actually sends for a prompt.
 */
import { readdirSync } from 'node:fs';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createDeepSeek } from '@ai-sdk/deepseek';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  type LanguageModelV3CallOptions,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  fixtureHeader,
  loadWireFixture,
  parseWireFixture,
  startWireServer,
  type WireServer,
  wireFixturesDir,
} from './wire-server.js';

// ---------------------------------------------------------------------------------------------
// Helpers

/** The part of LanguageModelV3 these tests drive (structural, so every provider's copy fits). */
interface StreamingModel {
  doStream(options: LanguageModelV3CallOptions): PromiseLike<{
    stream: ReadableStream<LanguageModelV3StreamPart>;
    response?: { headers?: Record<string, string> };
  }>;
}

interface StreamRun {
  readonly parts: LanguageModelV3StreamPart[];
  /** The response headers doStream reported. */
  readonly headers: Record<string, string>;
  /** What a read rejected with, when the stream failed instead of ending. */
  readonly readError: unknown;
}

/** Calls doStream and reads the stream to its end (or to its failure). */
async function streamOf(model: StreamingModel, options: LanguageModelV3CallOptions) {
  const result = await model.doStream(options);
  const parts: LanguageModelV3StreamPart[] = [];
  const reader = result.stream.getReader();
  let readError: unknown;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
  } catch (error) {
    readError = error;
  }
  return { parts, headers: result.response?.headers ?? {}, readError } satisfies StreamRun;
}

/** Calls doStream and returns the APICallError it rejects with. */
async function apiCallErrorOf(model: StreamingModel, options: LanguageModelV3CallOptions) {
  try {
    await model.doStream(options);
  } catch (error) {
    if (APICallError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected doStream to reject with an APICallError');
}

type PartOf<T extends LanguageModelV3StreamPart['type']> = Extract<
  LanguageModelV3StreamPart,
  { type: T }
>;

function partsOf<T extends LanguageModelV3StreamPart['type']>(
  parts: readonly LanguageModelV3StreamPart[],
  type: T,
): PartOf<T>[] {
  return parts.filter((part): part is PartOf<T> => part.type === type);
}

function types(parts: readonly LanguageModelV3StreamPart[]): string[] {
  return parts.map((part) => part.type);
}

function textOf(parts: readonly LanguageModelV3StreamPart[]): string {
  return partsOf(parts, 'text-delta')
    .map((part) => part.delta)
    .join('');
}

function reasoningOf(parts: readonly LanguageModelV3StreamPart[]): string {
  return partsOf(parts, 'reasoning-delta')
    .map((part) => part.delta)
    .join('');
}

function finishOf(parts: readonly LanguageModelV3StreamPart[]): PartOf<'finish'> {
  const finishes = partsOf(parts, 'finish');
  expect(finishes).toHaveLength(1);
  return finishes[0] as PartOf<'finish'>;
}

/** The chain of `cause`s below an error, as `code`s (undici and node put them there). */
function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return codes;
}

const user = (text: string): LanguageModelV3Prompt[number] => ({
  role: 'user',
  content: [{ type: 'text', text }],
});

const readFileTool: LanguageModelV3FunctionTool = {
  type: 'function',
  name: 'read_file',
  description: 'Read a UTF-8 file from the workspace.',
  inputSchema: {
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
    additionalProperties: false,
  },
};

const grepTool: LanguageModelV3FunctionTool = {
  type: 'function',
  name: 'grep',
  description: 'Search files for a pattern.',
  inputSchema: {
    type: 'object',
    properties: { pattern: { type: 'string' }, path: { type: 'string' } },
    required: ['pattern'],
    additionalProperties: false,
  },
};

/**
 * A conversation one tool round-trip deep: the user asks, the assistant answered with text and
 * a tool call, the tool answered. The next model call continues from here.
 */
const toolRoundTrip: LanguageModelV3Prompt = [
  { role: 'system', content: 'You are a careful coding agent.' },
  user('What does the core export?'),
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me list the directory.' },
      {
        type: 'tool-call',
        toolCallId: 'call_prev_list_1',
        toolName: 'list_dir',
        input: { path: 'src/core' },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_prev_list_1',
        toolName: 'list_dir',
        output: { type: 'json', value: ['index.ts', 'session.ts'] },
      },
    ],
  },
];

let server: WireServer;

beforeEach(async () => {
  server = await startWireServer();
});

afterEach(async () => {
  const problems = [...server.problems];
  const pending = server.pending;
  await server.close();
  expect(problems).toEqual([]);
  expect(pending).toBe(0);
});

const API_KEY = 'wire-test-key';

function openaiCompatible(modelId = 'qwen2.5-coder:7b') {
  return createOpenAICompatible({
    name: 'ollama',
    baseURL: `${server.baseURL}/v1`,
    apiKey: API_KEY,
    includeUsage: true,
  }).chatModel(modelId);
}

function deepseek(modelId = 'deepseek-reasoner') {
  return createDeepSeek({ baseURL: server.baseURL, apiKey: API_KEY }).languageModel(modelId);
}

function anthropic(modelId = 'claude-sonnet-4-5') {
  return createAnthropic({ baseURL: `${server.baseURL}/v1`, apiKey: API_KEY }).languageModel(
    modelId,
  );
}

// ---------------------------------------------------------------------------------------------

describe('the recorded fixtures', () => {
  const files = readdirSync(wireFixturesDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.http'))
    .sort();

  it('cover every scenario below, one file each', () => {
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

  it('waits delayMs between SSE events', async () => {
    server.enqueue({ fixture: 'openai-compatible/empty.http', delayMs: 40 });
    const started = Date.now();
    const response = await fetch(`${server.baseURL}/v1/chat/completions`, { method: 'POST' });
    await response.text();
    // Four events, three gaps.
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
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

// ---------------------------------------------------------------------------------------------

describe('OpenAI-compatible chat completions (@ai-sdk/openai-compatible, e.g. Ollama or vLLM)', () => {
  it('sends the prompt to /chat/completions as chat messages, with the tools as functions and usage requested', async () => {
    server.enqueue({
      fixture: 'openai-compatible/parallel-tool-calls.http',
      expect: { method: 'POST', path: '/v1/chat/completions' },
    });
    await streamOf(openaiCompatible(), { prompt: toolRoundTrip, tools: [readFileTool, grepTool] });

    const request = server.lastRequest();
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body).toEqual({
      model: 'qwen2.5-coder:7b',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You are a careful coding agent.' },
        { role: 'user', content: 'What does the core export?' },
        {
          role: 'assistant',
          content: 'Let me list the directory.',
          tool_calls: [
            {
              id: 'call_prev_list_1',
              type: 'function',
              function: { name: 'list_dir', arguments: '{"path":"src/core"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_prev_list_1', content: '["index.ts","session.ts"]' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a UTF-8 file from the workspace.',
            parameters: readFileTool.inputSchema,
          },
        },
        {
          type: 'function',
          function: {
            name: 'grep',
            description: 'Search files for a pattern.',
            parameters: grepTool.inputSchema,
          },
        },
      ],
    });
  });

  it('streams text as deltas of one text part that concatenate to the answer, then finishes with stop and the usage chunk', async () => {
    server.enqueue('openai-compatible/text.http');
    const run = await streamOf(openaiCompatible(), { prompt: [user('Is anything lost?')] });

    expect(run.readError).toBeUndefined();
    expect(types(run.parts)).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      ...Array<string>(5).fill('text-delta'),
      'text-end',
      'finish',
    ]);
    expect(textOf(run.parts)).toBe('The log is append-only, so nothing is lost.');
    expect(new Set(partsOf(run.parts, 'text-delta').map((part) => part.id))).toEqual(
      new Set(['txt-0']),
    );
    expect(partsOf(run.parts, 'response-metadata')[0]).toMatchObject({
      id: 'chatcmpl-wire-text-1',
      modelId: 'qwen2.5-coder:7b',
      timestamp: new Date(1752000000 * 1000),
    });
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(finish.usage.inputTokens).toEqual({
      total: 42,
      noCache: 26,
      cacheRead: 16,
      cacheWrite: undefined,
    });
    expect(finish.usage.outputTokens).toEqual({ total: 11, text: 11, reasoning: 0 });
    expect(run.headers['x-request-id']).toBe('req_wire_text_7f3a9c');
  });

  it('streams two parallel tool calls: ids and names from their first deltas, arguments assembled into complete JSON, finish reason tool-calls', async () => {
    server.enqueue('openai-compatible/parallel-tool-calls.http');
    const run = await streamOf(openaiCompatible(), {
      prompt: [user('Read the session and find surfaceOp.')],
      tools: [readFileTool, grepTool],
    });

    expect(run.readError).toBeUndefined();
    expect(partsOf(run.parts, 'tool-input-start')).toEqual([
      { type: 'tool-input-start', id: 'call_wire_read_1', toolName: 'read_file' },
      { type: 'tool-input-start', id: 'call_wire_grep_2', toolName: 'grep' },
    ]);
    const calls = partsOf(run.parts, 'tool-call');
    expect(calls.map(({ toolCallId, toolName }) => ({ toolCallId, toolName }))).toEqual([
      { toolCallId: 'call_wire_read_1', toolName: 'read_file' },
      { toolCallId: 'call_wire_grep_2', toolName: 'grep' },
    ]);
    expect(calls.map((call) => JSON.parse(call.input))).toEqual([
      { path: 'src/core/session.ts' },
      { pattern: 'surfaceOp', path: 'src' },
    ]);
    for (const call of calls) {
      const streamed = partsOf(run.parts, 'tool-input-delta')
        .filter((part) => part.id === call.toolCallId)
        .map((part) => part.delta)
        .join('');
      expect(streamed).toBe(call.input);
    }
    // The tool-call parts come after every input delta, when the stream ends.
    expect(types(run.parts).slice(-5)).toEqual([
      'tool-input-end',
      'tool-call',
      'tool-input-end',
      'tool-call',
      'finish',
    ]);
    expect(textOf(run.parts)).toBe('');
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
    expect(finish.usage.inputTokens.total).toBe(180);
    expect(finish.usage.outputTokens.total).toBe(38);
  });

  it('reports finish reason length when the model hits max_tokens, sent from maxOutputTokens', async () => {
    server.enqueue('openai-compatible/length.http');
    const run = await streamOf(openaiCompatible(), {
      prompt: [user('Explain replay.')],
      maxOutputTokens: 8,
    });

    expect(server.lastRequest().body).toMatchObject({ max_tokens: 8 });
    expect(textOf(run.parts)).toBe('Replaying the log rebuilds every');
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'length', raw: 'length' });
    expect(finish.usage.outputTokens.total).toBe(8);
  });

  it('finishes an empty answer with stop and no text parts at all', async () => {
    server.enqueue('openai-compatible/empty.http');
    const run = await streamOf(openaiCompatible(), { prompt: [user('Say nothing.')] });

    expect(run.readError).toBeUndefined();
    expect(types(run.parts)).toEqual(['stream-start', 'response-metadata', 'finish']);
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(finish.usage.outputTokens).toEqual({ total: 0, text: 0, reasoning: 0 });
  });

  it('turns an in-band error event into an error part carrying the error object, then finishes with unified error and unknown usage', async () => {
    server.enqueue('openai-compatible/error-event-midstream.http');
    const run = await streamOf(openaiCompatible(), { prompt: [user('Go.')] });

    expect(run.readError).toBeUndefined();
    expect(textOf(run.parts)).toBe('Partial answer');
    expect(partsOf(run.parts, 'error')).toEqual([
      {
        type: 'error',
        error: {
          message: 'The model worker crashed while generating.',
          type: 'server_error',
          param: null,
          code: 'worker_crashed',
        },
      },
    ]);
    expect(types(run.parts).slice(-4)).toEqual(['text-delta', 'error', 'text-end', 'finish']);
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'error', raw: undefined });
    expect(finish.usage.inputTokens.total).toBeUndefined();
    expect(finish.usage.outputTokens.total).toBeUndefined();
  });

  it('makes a connection cut mid-body reject the read with a retryable APICallError, after the deltas sent before it', async () => {
    server.enqueue('openai-compatible/cut-midstream.http');
    const run = await streamOf(openaiCompatible(), { prompt: [user('Go.')] });

    expect(textOf(run.parts)).toBe('Half of a reply');
    expect(partsOf(run.parts, 'finish')).toEqual([]);
    expect(partsOf(run.parts, 'error')).toEqual([]);
    expect(APICallError.isInstance(run.readError)).toBe(true);
    const error = run.readError as APICallError;
    expect(error.isRetryable).toBe(true);
    expect(error.statusCode).toBe(200);
    expect(error.responseHeaders?.['x-request-id']).toBe('req_wire_cut_c4a7b2');
    expect(causeCodes(error)).toContain('UND_ERR_SOCKET');
  });

  it('makes a TCP reset mid-body reject the read the same way, with ECONNRESET underneath', async () => {
    server.enqueue({ fixture: 'openai-compatible/text.http', cutAfterEvents: 3, cutMode: 'reset' });
    const run = await streamOf(openaiCompatible(), { prompt: [user('Go.')] });

    expect(textOf(run.parts)).toBe('The log is append');
    expect(partsOf(run.parts, 'finish')).toEqual([]);
    expect(APICallError.isInstance(run.readError)).toBe(true);
    expect((run.readError as APICallError).isRetryable).toBe(true);
    expect(causeCodes(run.readError)).toContain('ECONNRESET');
  });

  it('makes an abort mid-stream reject the read with an AbortError, not an APICallError', async () => {
    server.enqueue({ fixture: 'openai-compatible/text.http', delayMs: 200 });
    const controller = new AbortController();
    const result = await openaiCompatible().doStream({
      prompt: [user('Go.')],
      abortSignal: controller.signal,
    });
    const reader = result.stream.getReader();
    const seen: string[] = [];
    let failure: unknown;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        seen.push(value.type);
        if (value.type === 'text-delta') controller.abort();
      }
    } catch (error) {
      failure = error;
    }

    expect(seen).toEqual(['stream-start', 'response-metadata', 'text-start', 'text-delta']);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe('AbortError');
    expect(APICallError.isInstance(failure)).toBe(false);
  });

  it('throws a retryable APICallError from doStream on HTTP 429, keeping retry-after and the request id', async () => {
    server.enqueue('openai-compatible/rate-limited-429.http');
    const error = await apiCallErrorOf(openaiCompatible(), { prompt: [user('Go.')] });

    expect(error.statusCode).toBe(429);
    expect(error.isRetryable).toBe(true);
    expect(error.message).toBe(
      'Rate limit reached for requests: limit 60 per minute. Try again in 7s.',
    );
    expect(error.responseHeaders).toMatchObject({
      'retry-after': '7',
      'x-request-id': 'req_wire_429_5a60f1',
    });
    expect(error.data).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect(error.url).toBe(`${server.baseURL}/v1/chat/completions`);
  });

  it('throws a retryable APICallError from doStream on HTTP 500', async () => {
    server.enqueue('openai-compatible/server-error-500.http');
    const error = await apiCallErrorOf(openaiCompatible(), { prompt: [user('Go.')] });

    expect(error.statusCode).toBe(500);
    expect(error.isRetryable).toBe(true);
    expect(error.message).toBe('The inference server failed to process the request.');
    expect(error.responseHeaders?.['x-request-id']).toBe('req_wire_500_e81d3c');
  });
});

// ---------------------------------------------------------------------------------------------

describe('DeepSeek chat completions (@ai-sdk/deepseek)', () => {
  it('sends the last turn’s reasoning back as reasoning_content beside its tool call, and the tool result as a tool message', async () => {
    server.enqueue({
      fixture: 'deepseek/reasoning-then-text.http',
      expect: { method: 'POST', path: '/chat/completions' },
    });
    await streamOf(deepseek(), {
      prompt: [
        user('Read the README.'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'I should read the file before answering.' },
            {
              type: 'tool-call',
              toolCallId: 'call_00_wire_ds_read',
              toolName: 'read_file',
              input: { path: 'README.md' },
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call_00_wire_ds_read',
              toolName: 'read_file',
              output: { type: 'text', value: '# palimpsest' },
            },
          ],
        },
      ],
      tools: [readFileTool],
    });

    const request = server.lastRequest();
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body).toEqual({
      model: 'deepseek-reasoner',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'user', content: 'Read the README.' },
        {
          role: 'assistant',
          content: '',
          reasoning_content: 'I should read the file before answering.',
          tool_calls: [
            {
              id: 'call_00_wire_ds_read',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"README.md"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_00_wire_ds_read', content: '# palimpsest' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a UTF-8 file from the workspace.',
            parameters: readFileTool.inputSchema,
          },
        },
      ],
    });
  });

  it('drops reasoning from assistant turns before the latest user message (deepseek-reasoner)', async () => {
    server.enqueue('deepseek/reasoning-then-text.http');
    await streamOf(deepseek(), {
      prompt: [
        user('How many events?'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Three were appended.' },
            { type: 'text', text: 'There are 3 events.' },
          ],
        },
        user('And now?'),
      ],
    });

    expect(server.lastRequest().body).toMatchObject({
      messages: [
        { role: 'user', content: 'How many events?' },
        { role: 'assistant', content: 'There are 3 events.' },
        { role: 'user', content: 'And now?' },
      ],
    });
    expect(JSON.stringify(server.lastRequest().body)).not.toContain('reasoning_content');
  });

  it('encodes tool-call input with JSON.stringify, so an input already given as a JSON string is sent double-encoded', async () => {
    server.enqueue('deepseek/reasoning-then-text.http');
    await streamOf(deepseek(), {
      prompt: [
        user('Read the README.'),
        {
          role: 'assistant',
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call_1',
              toolName: 'read_file',
              input: '{"path":"README.md"}',
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call_1',
              toolName: 'read_file',
              output: { type: 'text', value: '# palimpsest' },
            },
          ],
        },
      ],
    });

    expect(server.lastRequest().body).toMatchObject({
      messages: [
        {},
        {
          tool_calls: [
            // A string, not the object {"path":"README.md"}: pass the input parsed.
            { function: { name: 'read_file', arguments: JSON.stringify('{"path":"README.md"}') } },
          ],
        },
        {},
      ],
    });
  });

  it('streams reasoning_content as reasoning deltas, then content as text deltas; usage splits reasoning tokens out', async () => {
    server.enqueue('deepseek/reasoning-then-text.http');
    const run = await streamOf(deepseek(), { prompt: [user('How many events?')] });

    expect(run.readError).toBeUndefined();
    expect(reasoningOf(run.parts)).toBe('The user wants a count. Three events were appended.');
    expect(textOf(run.parts)).toBe('There are 3 events.');
    // Note the order: the text part starts before the reasoning part ends.
    expect(types(run.parts)).toEqual([
      'stream-start',
      'response-metadata',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-delta',
      'reasoning-delta',
      'text-start',
      'reasoning-end',
      'text-delta',
      'text-delta',
      'text-end',
      'finish',
    ]);
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(finish.usage.inputTokens).toEqual({
      total: 64,
      noCache: 64,
      cacheRead: 0,
      cacheWrite: undefined,
    });
    expect(finish.usage.outputTokens).toEqual({ total: 29, text: 8, reasoning: 21 });
    expect(run.headers['x-request-id']).toBe('req_wire_ds_think_27b9e4');
  });

  it('streams reasoning, then a tool call whose arguments assemble into complete JSON; finish reason tool-calls, cache hits counted', async () => {
    server.enqueue('deepseek/reasoning-then-tool-call.http');
    const run = await streamOf(deepseek(), {
      prompt: [user('Read the README.')],
      tools: [readFileTool],
    });

    expect(reasoningOf(run.parts)).toBe('I should read the file before answering.');
    expect(textOf(run.parts)).toBe('');
    const calls = partsOf(run.parts, 'tool-call');
    expect(calls).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'call_00_wire_ds_read',
        toolName: 'read_file',
        input: '{"path":"README.md"}',
      },
    ]);
    expect(types(run.parts).indexOf('reasoning-end')).toBeLessThan(
      types(run.parts).indexOf('tool-input-start'),
    );
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
    expect(finish.usage.inputTokens).toEqual({
      total: 210,
      noCache: 82,
      cacheRead: 128,
      cacheWrite: undefined,
    });
    expect(finish.usage.outputTokens).toEqual({ total: 35, text: 18, reasoning: 17 });
  });
});

// ---------------------------------------------------------------------------------------------

describe('Anthropic messages API (@ai-sdk/anthropic)', () => {
  it('sends the prompt to /v1/messages with the thinking block and its signature passed back, the tool use and its result', async () => {
    server.enqueue({
      fixture: 'anthropic/text.http',
      expect: { method: 'POST', path: '/v1/messages' },
    });
    await streamOf(anthropic(), {
      prompt: [
        { role: 'system', content: 'You are a careful coding agent.' },
        user('What is in the header?'),
        {
          role: 'assistant',
          content: [
            {
              type: 'reasoning',
              text: 'The user asked about the header. I need the file.',
              providerOptions: { anthropic: { signature: 'c2lnbmF0dXJlLWZvci13aXJlLXRlc3Q=' } },
            },
            { type: 'text', text: 'Let me look.' },
            {
              type: 'tool-call',
              toolCallId: 'toolu_wire_read_01',
              toolName: 'read_file',
              input: { path: 'src/core/header.ts' },
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'toolu_wire_read_01',
              toolName: 'read_file',
              output: { type: 'text', value: 'export interface Header {}' },
            },
          ],
        },
      ],
      tools: [readFileTool],
      maxOutputTokens: 4096,
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
    });

    const request = server.lastRequest();
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.body).toEqual({
      model: 'claude-sonnet-4-5',
      stream: true,
      // The provider adds the thinking budget on top of maxOutputTokens.
      max_tokens: 4096 + 1024,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      system: [{ type: 'text', text: 'You are a careful coding agent.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is in the header?' }] },
        {
          role: 'assistant',
          content: [
            {
              type: 'thinking',
              thinking: 'The user asked about the header. I need the file.',
              signature: 'c2lnbmF0dXJlLWZvci13aXJlLXRlc3Q=',
            },
            { type: 'text', text: 'Let me look.' },
            {
              type: 'tool_use',
              id: 'toolu_wire_read_01',
              name: 'read_file',
              input: { path: 'src/core/header.ts' },
            },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_wire_read_01',
              content: 'export interface Header {}',
            },
          ],
        },
      ],
      tools: [
        {
          name: 'read_file',
          description: 'Read a UTF-8 file from the workspace.',
          input_schema: readFileTool.inputSchema,
          // Added by the provider to every tool when streaming.
          eager_input_streaming: true,
        },
      ],
    });
  });

  it('streams a text block as deltas that concatenate to the answer; end_turn finishes with stop and input usage includes the cache', async () => {
    server.enqueue('anthropic/text.http');
    const run = await streamOf(anthropic(), { prompt: [user('What about provenance?')] });

    expect(run.readError).toBeUndefined();
    expect(types(run.parts)).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      ...Array<string>(4).fill('text-delta'),
      'text-end',
      'finish',
    ]);
    expect(textOf(run.parts)).toBe('Every event keeps its provenance.');
    expect(partsOf(run.parts, 'response-metadata')[0]).toMatchObject({
      id: 'msg_wire_text_01',
      modelId: 'claude-sonnet-4-5-20250929',
    });
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(finish.usage.inputTokens).toEqual({
      total: 43,
      noCache: 31,
      cacheRead: 12,
      cacheWrite: 0,
    });
    expect(finish.usage.outputTokens).toEqual({
      total: 9,
      text: undefined,
      reasoning: undefined,
    });
    expect(run.headers['request-id']).toBe('req_wire_anthropic_text_4d21');
  });

  it('streams thinking as reasoning deltas with the signature in providerMetadata, then text, then a tool call with complete JSON input; tool_use finishes with tool-calls', async () => {
    server.enqueue('anthropic/thinking-tool-use.http');
    const run = await streamOf(anthropic(), {
      prompt: [user('What is in the header?')],
      tools: [readFileTool],
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
    });

    expect(run.readError).toBeUndefined();
    expect(reasoningOf(run.parts)).toBe('The user asked about the header. I need the file.');
    const signed = partsOf(run.parts, 'reasoning-delta').filter(
      (part) => part.providerMetadata !== undefined,
    );
    expect(signed).toEqual([
      {
        type: 'reasoning-delta',
        id: '0',
        delta: '',
        providerMetadata: { anthropic: { signature: 'c2lnbmF0dXJlLWZvci13aXJlLXRlc3Q=' } },
      },
    ]);
    expect(textOf(run.parts)).toBe('Let me look.');
    const calls = partsOf(run.parts, 'tool-call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      toolCallId: 'toolu_wire_read_01',
      toolName: 'read_file',
      input: '{"path": "src/core/header.ts"}',
    });
    expect(JSON.parse(calls[0]?.input ?? '')).toEqual({ path: 'src/core/header.ts' });
    expect(
      types(run.parts).filter((type) => type.endsWith('-start') && type !== 'stream-start'),
    ).toEqual(['reasoning-start', 'text-start', 'tool-input-start']);
    const finish = finishOf(run.parts);
    expect(finish.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(finish.usage.inputTokens.total).toBe(412);
    expect(finish.usage.outputTokens.total).toBe(87);
  });

  it('reports finish reason length for stop_reason max_tokens, sent from maxOutputTokens', async () => {
    server.enqueue('anthropic/max-tokens.http');
    const run = await streamOf(anthropic(), { prompt: [user('Describe.')], maxOutputTokens: 5 });

    expect(server.lastRequest().body).toMatchObject({ max_tokens: 5 });
    expect(textOf(run.parts)).toBe('The surface is a');
    expect(finishOf(run.parts).finishReason).toEqual({ unified: 'length', raw: 'max_tokens' });
  });

  it('turns an overloaded error event mid-stream into an error part and ends the stream with no finish part', async () => {
    server.enqueue('anthropic/overloaded-midstream.http');
    const run = await streamOf(anthropic(), { prompt: [user('Go.')] });

    expect(run.readError).toBeUndefined();
    expect(textOf(run.parts)).toBe('Working on it');
    expect(partsOf(run.parts, 'error')).toEqual([
      {
        type: 'error',
        error: {
          type: 'overloaded_error',
          message: 'Capacity is exhausted for this model right now.',
        },
      },
    ]);
    expect(types(run.parts).at(-1)).toBe('error');
    expect(partsOf(run.parts, 'finish')).toEqual([]);
    expect(partsOf(run.parts, 'text-end')).toEqual([]);
  });

  it('throws from doStream when the first event is an overloaded error: a retryable APICallError with a synthesized 529', async () => {
    server.enqueue('anthropic/overloaded-first-event.http');
    const error = await apiCallErrorOf(anthropic(), { prompt: [user('Go.')] });

    expect(error.statusCode).toBe(529);
    expect(error.isRetryable).toBe(true);
    expect(error.message).toBe('Capacity is exhausted for this model right now.');
    expect(error.responseHeaders?.['request-id']).toBe('req_wire_anthropic_firstover_5e90');
  });

  it('throws a retryable APICallError from doStream on HTTP 529, with the error type and the request id', async () => {
    server.enqueue('anthropic/overloaded-529.http');
    const error = await apiCallErrorOf(anthropic(), { prompt: [user('Go.')] });

    expect(error.statusCode).toBe(529);
    expect(error.isRetryable).toBe(true);
    expect(error.message).toBe('Capacity is exhausted for this model right now.');
    expect(error.data).toEqual({
      type: 'error',
      error: {
        type: 'overloaded_error',
        message: 'Capacity is exhausted for this model right now.',
      },
    });
    expect(error.responseHeaders?.['request-id']).toBe('req_wire_anthropic_529_c13d');
  });

  it('makes a connection cut mid-body reject the read with a retryable APICallError', async () => {
    server.enqueue({ fixture: 'anthropic/text.http', cutAfterEvents: 4 });
    const run = await streamOf(anthropic(), { prompt: [user('Go.')] });

    expect(textOf(run.parts)).toBe('Every event');
    expect(partsOf(run.parts, 'finish')).toEqual([]);
    expect(APICallError.isInstance(run.readError)).toBe(true);
    const error = run.readError as APICallError;
    expect(error.isRetryable).toBe(true);
    expect(error.responseHeaders?.['request-id']).toBe('req_wire_anthropic_text_4d21');
  });
});
