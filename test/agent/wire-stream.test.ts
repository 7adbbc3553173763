/**
 * The typed turn stream and the tool hooks against the real AI SDK providers, over HTTP to the
 * local replay server: what a UI reads is what the provider streamed, and a denial reaches the
 * provider as a tool result error in its own wire format.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { defineTool, streamTurn, type TurnStreamEvent } from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { expectValidLog } from './helpers.js';
import { useWireServer } from './wire-server.js';

const server = useWireServer();

const ran: string[] = [];
const tools = ['read_file', 'grep'].map((name) =>
  defineTool({
    name,
    parameters: { type: 'object' },
    execute: () => {
      ran.push(name);
      return `${name} output`;
    },
  }),
);

const asModel = (model: unknown): LanguageModelV3 => model as LanguageModelV3;

async function collect(stream: AsyncIterable<TurnStreamEvent>): Promise<TurnStreamEvent[]> {
  const events: TurnStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('streaming from a real provider client', () => {
  it('gives the text and each tool call’s arguments as the OpenAI-compatible server streamed them, and the denial goes back as the tool message', async () => {
    ran.length = 0;
    const session = Session.create();
    const model = asModel(
      createOpenAICompatible({ name: 'local', baseURL: server.baseURL, apiKey: 'k' })(
        'qwen3-coder',
      ),
    );
    server.enqueue('openai-compatible/parallel-tool-calls.http', 'openai-compatible/text.http');
    const stream = streamTurn({
      session,
      model,
      tools,
      input: 'What does the header module hold?',
      hooks: {
        beforeToolCall: ({ name }) =>
          name === 'grep' ? { action: 'deny', reason: 'searching is off today' } : undefined,
      },
    });
    const events = await collect(stream);
    const result = await stream.result;

    const text = events.map((event) => (event.type === 'text-delta' ? event.delta : '')).join('');
    expect(text).toBe(result.text);
    expect(text).toBe('The log is append-only, so nothing is lost.');
    for (const call of result.toolCalls) {
      const deltas = events
        .map((event) =>
          event.type === 'tool-call-delta' && event.callId === call.callId ? event.delta : '',
        )
        .join('');
      const end = events.find(
        (event) => event.type === 'tool-call-end' && event.callId === call.callId,
      );
      expect(end?.type === 'tool-call-end' && end.arguments).toBe(deltas);
      expect(events.some((e) => e.type === 'tool-call-start' && e.callId === call.callId)).toBe(
        true,
      );
    }
    expect(ran).toEqual(['read_file']);

    const second = server.requests[1]?.body as {
      messages: { role: string; tool_call_id?: string; content?: string }[];
    };
    const grepCall = result.toolCalls.find((call) => call.name === 'grep');
    const denial = second.messages.find(
      (message) => message.role === 'tool' && message.tool_call_id === grepCall?.callId,
    );
    expect(denial?.content).toContain('searching is off today');
    expectValidLog(session);
  });

  it('sends a denial to Anthropic as a tool_result with is_error', async () => {
    ran.length = 0;
    const session = Session.create();
    const model = asModel(
      createAnthropic({ baseURL: server.baseURL, apiKey: 'k' })('claude-sonnet-4-5'),
    );
    server.enqueue('anthropic/thinking-tool-use.http', 'anthropic/text.http');
    const stream = streamTurn({
      session,
      model,
      tools,
      input: 'q',
      settings: { maxOutputTokens: 4096 },
      hooks: { beforeToolCall: () => ({ action: 'deny', reason: 'read-only session' }) },
    });
    const events = await collect(stream);
    expect(events.some((event) => event.type === 'reasoning-delta')).toBe(true);
    expect(ran).toEqual([]);
    const second = server.requests[1]?.body as {
      messages: {
        role: string;
        content: { type: string; is_error?: boolean; content?: unknown }[];
      }[];
    };
    const results = second.messages.flatMap((message) =>
      message.content.filter((block) => block.type === 'tool_result'),
    );
    expect(results).toHaveLength(1);
    expect(results[0]?.is_error).toBe(true);
    expect(JSON.stringify(results[0]?.content)).toContain('read-only session');
    expectValidLog(session);
  });
});
