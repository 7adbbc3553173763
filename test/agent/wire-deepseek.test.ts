/**
 * @ai-sdk/deepseek against recorded chat-completions responses served by a local HTTP server:
 * how reasoning and tool calls go back to the API, and how reasoning, text, tool calls and usage
 * come out of its stream.
 */
import { createDeepSeek } from '@ai-sdk/deepseek';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
  chatCompletionsTool,
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

function deepseek(modelId = 'deepseek-reasoner') {
  return createDeepSeek({ baseURL: server.baseURL, apiKey: API_KEY }).languageModel(modelId);
}

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
      tools: [chatCompletionsTool(readFileTool)],
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
