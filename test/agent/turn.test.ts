/**
 * One turn of the agent loop against a scripted model: what it records, how it ends, what it
 * refuses, and the Agent that keeps a turn's settings. Tools are in turn-tools.test.ts, aborts and
 * provider failures in turn-interruptions.test.ts, requests in turn-requests.test.ts, resuming and
 * durability in turn-durability.test.ts.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { Agent, runTurn } from '../../src/agent/index.js';
import type { AssistantMessageData } from '../../src/core/index.js';
import { Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, echo, expectValidLog, outline } from './helpers.js';

describe('a plain turn', () => {
  it('records turn/start, the user message, one step with its chunks and message, and turn/end', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'Hello there, how can I help?' }]);
    const result = await runTurn({ session, model, input: 'hi' });

    expect(outline(session.events)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'chunk×9',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(result).toMatchObject({ turn: 1, steps: 1, reason: { kind: 'completed' } });
    expect(result.text).toBe('Hello there, how can I help?');
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expectValidLog(session);
  });

  it('cites exactly the step’s chunk seqs from the assistant message', async () => {
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([{ text: 'abc', reasoning: 'think' }]),
      input: 'x',
    });
    const message = session.events.find((event) => event.type === 'assistant/message');
    const chunkSeqs = session.events
      .filter((event) => event.type === 'assistant/chunk')
      .map((event) => event.seq);
    expect(message?.sourceEventSeqs).toEqual(chunkSeqs);
  });

  it('derives the user and assistant messages for the next request, reasoning first', async () => {
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([{ text: 'answer', reasoning: 'why' }]),
      input: 'q',
    });
    const [user, assistant] = session.deriveMessages();
    expect(user?.content).toEqual([{ type: 'text', text: 'q' }]);
    expect(assistant?.content).toEqual([
      { type: 'reasoning', text: 'why' },
      { type: 'text', text: 'answer' },
    ]);
  });

  it('records the provider and model of the assistant message source and the finish reason', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'x' }], { provider: 'acme.chat', modelId: 'acme-1' });
    await runTurn({ session, model, input: 'q' });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.message.source).toEqual({ kind: 'model', provider: 'acme.chat', model: 'acme-1' });
    expect(data?.finishReason).toBe('stop');
    expect(data?.usage?.inputTokens).toBeGreaterThan(0);
  });

  it('accepts content blocks as input', async () => {
    const session = Session.create();
    const input = [
      { type: 'text' as const, text: 'what is this?' },
      { type: 'image' as const, mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ];
    const model = scriptedModel([{ text: 'a tiny png' }]);
    await runTurn({ session, model, input });
    expect(model.calls[0]?.prompt[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ],
    });
  });
});

describe('how a turn ends', () => {
  it('ends with max-tokens when the model hits its output limit', async () => {
    const session = Session.create();
    const result = await runTurn({
      session,
      model: scriptedModel([{ text: 'a long answer that was cut', finishReason: 'length' }]),
      input: 'x',
    });
    expect(result.reason).toEqual({ kind: 'max-tokens' });
    expect(dataOf<AssistantMessageData>(session, 'assistant/message')[0]?.finishReason).toBe(
      'length',
    );
    expectValidLog(session);
  });

  it('records an empty stream as an assistant message citing [] that derives nothing', async () => {
    const empty: LanguageModelV3 = {
      specificationVersion: 'v3',
      provider: 'empty',
      modelId: 'void',
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error('unused')),
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({ start: (c) => c.close() }),
      }),
    };
    const session = Session.create();
    const result = await runTurn({ session, model: empty, input: 'x' });
    const message = session.events.find((event) => event.type === 'assistant/message');
    expect(message?.sourceEventSeqs).toEqual([]);
    const data = message?.data as unknown as AssistantMessageData;
    expect(data.message.content).toEqual([]);
    expect(data.finishReason).toBe('unknown');
    expect(session.deriveMessages()).toHaveLength(1);
    expect(result.reason).toEqual({ kind: 'completed' });
    expectValidLog(session);
  });

  it('ends with max-steps when the model keeps calling tools past the limit', async () => {
    const session = Session.create();
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'again' } }] }], {
      loop: true,
    });
    const result = await runTurn({ session, model, tools: [echo], input: 'x', maxSteps: 3 });
    expect(result.reason).toEqual({ kind: 'max-steps', maxSteps: 3 });
    expect(model.calls).toHaveLength(3);
    expectValidLog(session);
  });
});

describe('misuse', () => {
  it.each([
    ['an empty string', ''],
    ['an empty array', []],
  ])('refuses %s as input with INVALID_INPUT and records nothing', async (_label, input) => {
    const session = Session.create();
    await expect(runTurn({ session, model: scriptedModel([]), input })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(session.events).toHaveLength(0);
  });

  it('refuses a model of another spec version with UNSUPPORTED_MODEL', async () => {
    const v2 = { specificationVersion: 'v2', provider: 'old', modelId: 'm', doStream: () => {} };
    await expect(
      runTurn({ session: Session.create(), model: v2 as unknown as LanguageModelV3, input: 'x' }),
    ).rejects.toMatchObject({
      code: 'UNSUPPORTED_MODEL',
      message: expect.stringContaining("'v2'"),
    });
  });
});

describe('Agent', () => {
  it('keeps model, tools and system prompt across turns', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
      { text: 'one' },
      { text: 'two' },
    ]);
    const agent = new Agent({ session, model, tools: [echo], system: 'sys' });
    expect((await agent.run('first')).text).toBe('one');
    expect((await agent.run('second')).turn).toBe(2);
    expect(model.calls.every((call) => call.prompt[0]?.role === 'system')).toBe(true);
    const terse = agent.with({ system: 'terse' });
    expect(terse.session).toBe(session);
    expect(terse.config.system).toBe('terse');
    expectValidLog(session);
  });
});
