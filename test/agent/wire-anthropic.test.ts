/**
 * @ai-sdk/anthropic against recorded messages-API responses served by a local HTTP server: what
 * it sends (thinking blocks with their signatures, tool use and results), and what comes out of
 * its stream (text, thinking, tool calls, finish reasons, overloaded errors, cuts).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
  apiCallErrorOf,
  finishOf,
  partsOf,
  readFileTool,
  reasoningOf,
  streamOf,
  textOf,
  types,
  user,
} from './provider-streams.js';
import { useWireServer } from './wire-server.js';

const server = useWireServer();

function anthropic(modelId = 'claude-sonnet-4-5') {
  return createAnthropic({ baseURL: `${server.baseURL}/v1`, apiKey: API_KEY }).languageModel(
    modelId,
  );
}

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
