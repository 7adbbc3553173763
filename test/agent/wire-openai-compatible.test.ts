/**
 * @ai-sdk/openai-compatible (Ollama, vLLM and the like) against recorded chat-completions
 * responses served by a local HTTP server: what it sends for a prompt, and what the agent loop can
 * rely on from its stream (text, tool calls, usage, finish reasons, errors, cuts and aborts).
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
  apiCallErrorOf,
  causeCodes,
  chatCompletionsTool,
  finishOf,
  grepTool,
  partsOf,
  readFileTool,
  streamOf,
  textOf,
  toolRoundTrip,
  types,
  user,
} from './provider-streams.js';
import { useWireServer } from './wire-server.js';

const server = useWireServer();

function openaiCompatible(modelId = 'qwen2.5-coder:7b') {
  return createOpenAICompatible({
    name: 'ollama',
    baseURL: `${server.baseURL}/v1`,
    apiKey: API_KEY,
    includeUsage: true,
  }).chatModel(modelId);
}

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
      tools: [chatCompletionsTool(readFileTool), chatCompletionsTool(grepTool)],
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
