/**
 * The agent loop against the real AI SDK providers, talking HTTP to a local server that
 * replays recorded streams (test/fixtures/wire/). Every request the loop sent is compared, body
 * for body, with the request the same provider sends when given the request rebuilt from the
 * log alone.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createDeepSeek } from '@ai-sdk/deepseek';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { ReplayMissError, replayModel } from '../../src/adapters/ai-sdk/index.js';
import {
  checkRequestDigests,
  defineTool,
  rebuildRequest,
  runTurn,
  type Tool,
} from '../../src/agent/index.js';
import {
  type AssistantMessageData,
  checkInvariants,
  forkSession,
  type ProviderFailure,
  Session,
  type ToolCallData,
} from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog } from './helpers.js';
import { useWireServer } from './wire-server.js';

const server = useWireServer();

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file of the project.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  },
  execute: (args) => `contents of ${String(args.path)}`,
});
const grep = defineTool({
  name: 'grep',
  description: 'Searches the project.',
  parameters: {
    type: 'object',
    properties: { pattern: { type: 'string' }, path: { type: 'string' } },
    required: ['pattern'],
  },
  execute: (args) => `no match for ${String(args.pattern)}`,
});

// The providers are typed against their own copy of @ai-sdk/provider; at run time they are the
// same spec, which runTurn checks (specificationVersion 'v3').
const asModel = (model: unknown): LanguageModelV3 => model as LanguageModelV3;

const providers = {
  'openai-compatible': () =>
    asModel(
      createOpenAICompatible({
        name: 'local',
        baseURL: server.baseURL,
        apiKey: 'test-key',
        includeUsage: true,
      })('qwen3-coder'),
    ),
  deepseek: () =>
    asModel(createDeepSeek({ baseURL: server.baseURL, apiKey: 'test-key' })('deepseek-reasoner')),
  anthropic: () =>
    asModel(createAnthropic({ baseURL: server.baseURL, apiKey: 'test-key' })('claude-sonnet-4-5')),
};

const scenarios = [
  {
    provider: 'openai-compatible' as const,
    fixtures: ['openai-compatible/parallel-tool-calls.http', 'openai-compatible/text.http'],
    calls: ['read_file', 'grep'],
    text: 'The log is append-only, so nothing is lost.',
  },
  {
    provider: 'deepseek' as const,
    fixtures: ['deepseek/reasoning-then-tool-call.http', 'deepseek/reasoning-then-text.http'],
    calls: ['read_file'],
    text: undefined,
  },
  {
    provider: 'anthropic' as const,
    fixtures: ['anthropic/thinking-tool-use.http', 'anthropic/text.http'],
    calls: ['read_file'],
    text: 'Every event keeps its provenance.',
  },
];

describe.each(scenarios)(
  'a tool round trip through $provider',
  ({ provider, fixtures, calls, text }) => {
    it('records the turn, and every request rebuilt from the log is byte-equal on the wire', async () => {
      const session = Session.create();
      const model = providers[provider]();
      server.enqueue(...fixtures);
      const result = await runTurn({
        session,
        model,
        tools: [readFile, grep],
        system: 'You are a careful coding agent.',
        input: 'What does the header module hold?',
        settings: { maxOutputTokens: 4096 },
        retryDelayMs: 1,
      });

      expect(result.reason).toEqual({ kind: 'completed' });
      expect(result.steps).toBe(2);
      if (text !== undefined) expect(result.text).toBe(text);
      expect(dataOf<ToolCallData>(session, 'tool/call').map((call) => call.name)).toEqual(calls);
      expectValidLog(session);

      const sent = server.requests.map((request) => request.body);
      expect(sent).toHaveLength(2);
      // Replay each step's rebuilt request through the same provider to the same server.
      server.enqueue(...fixtures);
      for (const step of [1, 2]) {
        const { callOptions } = rebuildRequest(session, 1, step);
        const { stream } = await model.doStream(callOptions);
        await stream.pipeTo(new WritableStream());
      }
      const rebuilt = server.requests.slice(2).map((request) => request.body);
      expect(rebuilt).toEqual(sent);
    });

    it('replays the recorded turn offline, chunk for chunk; a changed prompt, schema or tool result misses naming it', async () => {
      const recorded = Session.create({ id: `wire-${provider}` });
      server.enqueue(...fixtures);
      const options = {
        tools: [readFile, grep],
        system: 'You are a careful coding agent.',
        input: 'What does the header module hold?',
        settings: { maxOutputTokens: 4096 },
      };
      const first = await runTurn({ session: recorded, model: providers[provider](), ...options });
      const wire = server.requests.length;

      const again = Session.create({ id: `replayed-${provider}` });
      const replayed = await runTurn({ session: again, model: replayModel(recorded), ...options });
      expect(server.requests).toHaveLength(wire); // nothing went on the wire
      expect(replayed.text).toBe(first.text);
      expect(payloads(again, 'assistant/chunk')).toEqual(payloads(recorded, 'assistant/chunk'));
      expect(digestsOf(again)).toEqual(digestsOf(recorded));
      expect(checkRequestDigests(again)).toEqual([]);

      const missOf = async (changed: Partial<typeof options> & { tools?: Tool[] }) => {
        const result = await runTurn({
          session: Session.create(),
          model: replayModel(recorded),
          ...options,
          ...changed,
        });
        expect(result.reason).toMatchObject({ kind: 'error', error: { code: 'ReplayMissError' } });
        return (result.reason as { error: { message: string } }).error.message;
      };
      expect(await missOf({ system: 'You are a hasty coding agent.' })).toContain(
        'differs at system',
      );
      const renamed = { ...readFile, description: 'Reads any file.' };
      expect(await missOf({ tools: [renamed, grep] })).toContain('differs at tools[0].description');
      const answering = (name: string, tool: Tool): Tool =>
        defineTool({
          name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          parameters: tool.parameters,
          execute: () => 'something else',
        });
      const others = [answering('read_file', readFile), answering('grep', grep)];
      expect(await missOf({ tools: others })).toMatch(/differs at messages\[\d+\]\.content/);
      expect(server.requests).toHaveLength(wire);

      // fork-on-miss: a question the recording never saw, asked in a fork of it, is answered
      // live and leaves a valid fork linked to the recording.
      const fork = forkSession(recorded, undefined, { id: `fork-${provider}` });
      const live = scriptedModel([{ text: 'Asked again, answered live.' }]);
      const model = replayModel(recorded, { mode: 'fork-on-miss', live });
      const forked = await runTurn({ session: fork, model, ...options, input: 'And the footer?' });
      expect(forked.text).toBe('Asked again, answered live.');
      expect(model.report().miss).toBeInstanceOf(ReplayMissError);
      expect(fork.header.parentSession).toBe(recorded.id);
      expect(checkInvariants(fork.events)).toEqual([]);
      expectValidLog(fork);
    });
  },
);

function payloads(session: Session, type: string): unknown[] {
  return session.events.filter((event) => event.type === type).map((event) => event.data);
}

function digestsOf(session: Session): unknown[] {
  return dataOf<AssistantMessageData>(session, 'assistant/message').map(
    (data) => data.requestDigest,
  );
}

describe('provider metadata the next request needs', () => {
  it('sends an Anthropic thinking block back with its signature', async () => {
    const session = Session.create();
    server.enqueue('anthropic/thinking-tool-use.http', 'anthropic/text.http');
    await runTurn({ session, model: providers.anthropic(), tools: [readFile], input: 'header?' });
    const [first] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(first?.message.content[0]).toEqual({
      type: 'reasoning',
      text: 'The user asked about the header. I need the file.',
      providerMetadata: { anthropic: { signature: 'c2lnbmF0dXJlLWZvci13aXJlLXRlc3Q=' } },
    });
    const second = server.requests[1]?.body as { messages: { role: string; content: unknown[] }[] };
    const assistant = second.messages.find((message) => message.role === 'assistant');
    expect(assistant?.content[0]).toEqual({
      type: 'thinking',
      thinking: 'The user asked about the header. I need the file.',
      signature: 'c2lnbmF0dXJlLWZvci13aXJlLXRlc3Q=',
    });
  });

  it('keeps DeepSeek reasoning as a reasoning block before the tool call', async () => {
    const session = Session.create();
    server.enqueue('deepseek/reasoning-then-tool-call.http', 'deepseek/reasoning-then-text.http');
    await runTurn({ session, model: providers.deepseek(), tools: [readFile], input: 'readme?' });
    const [first] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(first?.message.content.map((block) => block.type)).toEqual(['reasoning', 'tool-call']);
    expect(first?.message.content[0]).toMatchObject({
      text: 'I should read the file before answering.',
    });
  });
});

describe('provider failures on the wire', () => {
  it('retries an HTTP 429, recording the status and request id, and then completes', async () => {
    const session = Session.create();
    server.enqueue('openai-compatible/rate-limited-429.http', 'openai-compatible/text.http');
    const result = await runTurn({
      session,
      model: providers['openai-compatible'](),
      input: 'hi',
      retryDelayMs: 1,
      maxRetryDelayMs: 40,
    });
    expect(result.reason).toEqual({ kind: 'completed' });
    const [retry] = dataOf<{ error: ProviderFailure; delayMs: number }>(session, 'request/retry');
    expect(retry?.error).toMatchObject({ status: 429, requestId: expect.stringMatching(/^req_/) });
    // The fixture asks for retry-after: 7 seconds; the cap of 40 ms wins over it.
    expect(retry?.delayMs).toBe(40);
    expectValidLog(session);
  });

  it('ends with the provider’s message, status and request id once retries run out', async () => {
    const session = Session.create();
    server.enqueue(
      'openai-compatible/server-error-500.http',
      'openai-compatible/server-error-500.http',
    );
    const result = await runTurn({
      session,
      model: providers['openai-compatible'](),
      input: 'hi',
      retryDelayMs: 1,
      maxRetries: 1,
    });
    expect(result.reason).toMatchObject({
      kind: 'error',
      error: {
        status: 500,
        requestId: expect.stringMatching(/^req_/),
        message: expect.any(String),
      },
    });
    expect(dataOf(session, 'request/retry')).toHaveLength(1);
    expectValidLog(session);
  });

  it.each([
    ['a connection cut mid-stream', 'openai-compatible/cut-midstream.http', 'openai-compatible'],
    ['an in-band error event', 'openai-compatible/error-event-midstream.http', 'openai-compatible'],
    ['Anthropic overloaded mid-stream', 'anthropic/overloaded-midstream.http', 'anthropic'],
    [
      'Anthropic overloaded as the first event',
      'anthropic/overloaded-first-event.http',
      'anthropic',
    ],
    ['Anthropic HTTP 529', 'anthropic/overloaded-529.http', 'anthropic'],
  ] as const)(
    'retries after %s and keeps only the successful attempt on the surface',
    async (_label, failing, provider) => {
      const session = Session.create();
      const success =
        provider === 'anthropic' ? 'anthropic/text.http' : 'openai-compatible/text.http';
      server.enqueue(failing, success);
      const result = await runTurn({
        session,
        model: providers[provider](),
        input: 'hi',
        retryDelayMs: 1,
      });
      expect(result.reason).toEqual({ kind: 'completed' });
      expect(dataOf(session, 'request/retry')).toHaveLength(1);
      const assistants = session.deriveMessages().filter((message) => message.role === 'assistant');
      expect(assistants).toHaveLength(1);
      expect(result.text).not.toBe('');
      expectValidLog(session);
    },
  );

  it('ends with max-tokens when the provider stops at its output limit', async () => {
    const session = Session.create();
    server.enqueue('anthropic/max-tokens.http');
    const result = await runTurn({ session, model: providers.anthropic(), input: 'long please' });
    expect(result.reason).toEqual({ kind: 'max-tokens' });
    expectValidLog(session);
  });

  it('records an empty provider stream as an empty assistant message', async () => {
    const session = Session.create();
    server.enqueue('openai-compatible/empty.http');
    const result = await runTurn({ session, model: providers['openai-compatible'](), input: 'hi' });
    expect(result.reason).toEqual({ kind: 'completed' });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.message.content).toEqual([]);
    expectValidLog(session);
  });
});
