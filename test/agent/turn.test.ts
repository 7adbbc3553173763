import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agent,
  AgentError,
  defineTool,
  rebuildRequest,
  runTurn,
  TOOL_ERROR,
} from '../../src/agent/index.js';
import type {
  AssistantMessageData,
  ToolCallData,
  ToolResultData,
  TurnEndData,
} from '../../src/core/index.js';
import { type Durable, interruptionMarker, Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { abortAtChunk, dataOf, delay, expectValidLog, outline, shape } from './helpers.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

function lastTurnEnd(session: Session): TurnEndData {
  const ends = dataOf<TurnEndData>(session, 'turn/end');
  const last = ends[ends.length - 1];
  if (last === undefined) throw new Error('no turn/end');
  return last;
}

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

describe('tool calls', () => {
  it('runs a tool and records tool/call then a tool/result citing it, then calls the model again', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'ping' } }] },
      { text: 'The tool said ping.' },
    ]);
    const result = await runTurn({ session, model, tools: [echo], input: 'use echo' });

    expect(shape(session.events)).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/header',
      'chunks',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'chunks',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const call = session.events.find((event) => event.type === 'tool/call');
    const toolResult = session.events.find((event) => event.type === 'tool/result');
    expect(toolResult?.sourceEventSeqs).toEqual([call?.seq]);
    const [resultData] = dataOf<ToolResultData>(session, 'tool/result');
    expect(resultData?.message.content[0]).toEqual({
      type: 'tool-result',
      toolCallId: 'call_0_0',
      content: [{ type: 'text', text: 'ping' }],
    });
    expect(result.steps).toBe(2);
    expect(model.calls[1]?.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_0_0',
          toolName: 'echo',
          output: { type: 'text', value: 'ping' },
        },
      ],
    });
    expectValidLog(session);
  });

  it('runs parallel calls concurrently and appends their results in call order', async () => {
    const started: string[] = [];
    const finished: string[] = [];
    const wait = defineTool({
      name: 'wait',
      parameters: {
        type: 'object',
        properties: { ms: { type: 'number' }, name: { type: 'string' } },
      },
      execute: async (args) => {
        const name = String(args.name);
        started.push(name);
        await delay(Number(args.ms));
        finished.push(name);
        return name;
      },
    });
    const session = Session.create();
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'wait', args: { ms: 60, name: 'slow' } },
          { name: 'wait', args: { ms: 1, name: 'fast' } },
        ],
      },
      { text: 'done' },
    ]);
    await runTurn({ session, model, tools: [wait], input: 'go' });

    expect(started).toEqual(['slow', 'fast']);
    expect(finished).toEqual(['fast', 'slow']);
    const results = dataOf<ToolResultData>(session, 'tool/result').map(
      (data) => data.message.content[0].toolCallId,
    );
    expect(results).toEqual(['call_0_0', 'call_0_1']);
    expect(shape(session.events).slice(5, 10)).toEqual([
      'assistant/message',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
    ]);
    expectValidLog(session);
  });

  it.each([
    [
      'arguments that are not JSON',
      'echo',
      '{"text": "unterminated',
      TOOL_ERROR.invalidArguments,
      'not valid JSON',
    ],
    ['arguments that fail the schema', 'echo', { text: 42 }, TOOL_ERROR.invalidArguments, 'text:'],
    [
      'arguments that are not an object',
      'echo',
      '[1,2]',
      TOOL_ERROR.invalidArguments,
      'must be a JSON object',
    ],
    ['an unknown tool', 'rm_rf', {}, TOOL_ERROR.unknownTool, "no tool named 'rm_rf'"],
  ])(
    'turns %s into an error result the model reads, and keeps going',
    async (_label, name, args, code, text) => {
      const session = Session.create();
      const model = scriptedModel([{ toolCalls: [{ name, args }] }, { text: 'sorry' }]);
      const result = await runTurn({ session, model, tools: [echo], input: 'x' });

      const [data] = dataOf<ToolResultData>(session, 'tool/result');
      expect(data?.error?.code).toBe(code);
      expect(data?.message.content[0].isError).toBe(true);
      expect(JSON.stringify(data?.message.content[0].content)).toContain(text);
      expect(result.reason).toEqual({ kind: 'completed' });
      const resent = model.calls[1]?.prompt.at(-1);
      expect(resent).toMatchObject({ role: 'tool', content: [{ output: { type: 'error-text' } }] });
      expectValidLog(session);
    },
  );

  it('turns a throwing tool into a TOOL_FAILED result with its message', async () => {
    const broken = defineTool({
      name: 'broken',
      parameters: { type: 'object' },
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([{ toolCalls: [{ name: 'broken', args: {} }] }, { text: 'ok' }]),
      tools: [broken],
      input: 'x',
    });
    const [data] = dataOf<ToolResultData>(session, 'tool/result');
    expect(data?.error).toMatchObject({
      code: 'TOOL_FAILED',
      message: "Tool 'broken' failed: disk on fire",
      exception: { name: 'Error', message: 'disk on fire' },
    });
    expectValidLog(session);
  });

  it('turns a non-JSON tool return value into a TOOL_FAILED result', async () => {
    const weird = defineTool({
      name: 'weird',
      parameters: { type: 'object' },
      execute: () => ({ when: Number.NaN }),
    });
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([{ toolCalls: [{ name: 'weird', args: {} }] }, { text: 'ok' }]),
      tools: [weird],
      input: 'x',
    });
    expect(dataOf<ToolResultData>(session, 'tool/result')[0]?.error?.code).toBe('TOOL_FAILED');
  });

  it('sends JSON values as their JSON text and passes the call context to the tool', async () => {
    const seen: unknown[] = [];
    const info = defineTool({
      name: 'info',
      parameters: { type: 'object' },
      execute: (_args, context) => {
        seen.push([context.callId, context.turn, context.step, context.signal.aborted]);
        return { ok: true, list: [1, 2] };
      },
    });
    const session = Session.create();
    await runTurn({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'info', args: {}, id: 'c-7' }] },
        { text: 'ok' },
      ]),
      tools: [info],
      input: 'x',
    });
    expect(seen).toEqual([['c-7', 1, 1, false]]);
    expect(dataOf<ToolResultData>(session, 'tool/result')[0]?.message.content[0].content).toEqual([
      { type: 'text', text: '{"ok":true,"list":[1,2]}' },
    ]);
  });
});

describe('tool definitions', () => {
  it('exports a zod schema as draft-07 JSON Schema without $schema', () => {
    expect(echo.parameters).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it.each([
    [
      'a name with spaces',
      { name: 'read file', parameters: { type: 'object' }, execute: () => '' },
      'name matching',
    ],
    [
      'a non-object schema',
      { name: 'x', parameters: { type: 'string' }, execute: () => '' },
      "type 'object'",
    ],
    ['a missing execute', { name: 'x', parameters: { type: 'object' } }, 'execute function'],
  ])('refuses %s with INVALID_TOOL', (_label, spec, message) => {
    expect(() => defineTool(spec as Parameters<typeof defineTool>[0])).toThrow(message);
    try {
      defineTool(spec as Parameters<typeof defineTool>[0]);
    } catch (error) {
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('INVALID_TOOL');
    }
  });

  it('refuses two tools with the same name before recording anything', async () => {
    const session = Session.create();
    await expect(
      runTurn({ session, model: scriptedModel([]), tools: [echo, echo], input: 'x' }),
    ).rejects.toMatchObject({ code: 'INVALID_TOOL' });
    expect(session.events).toHaveLength(0);
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

describe('cancellation', () => {
  it('records the input and an aborted ending when the signal is already aborted', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'never' }]);
    const result = await runTurn({
      session,
      model,
      input: 'x',
      signal: AbortSignal.abort('user left'),
    });
    expect(outline(session.events)).toEqual(['turn/start', 'user/message', 'turn/end']);
    expect(result.reason).toEqual({ kind: 'aborted', cause: 'user left' });
    expect(model.calls).toHaveLength(0);
    expectValidLog(session);
  });

  it('keeps the text streamed before an abort as an interrupted message', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const model = scriptedModel([{ text: 'one two three four five six seven eight', delayMs: 5 }]);
    const result = await runTurn({
      session,
      model,
      input: 'x',
      signal: controller.signal,
      hooks: { onEvent: abortAtChunk(controller, 'text-delta', 2) },
    });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.interrupted).toBe(true);
    expect(data?.finishReason).toBe('aborted');
    expect(data?.message.content).toEqual([
      { type: 'text', text: 'one two three fo' },
      interruptionMarker('aborted'),
    ]);
    expect(result.reason.kind).toBe('aborted');
    expect(shape(session.events).slice(-3)).toEqual(['assistant/message', 'step/end', 'turn/end']);
    expectValidLog(session);
  });

  it('never keeps half a tool call when the stream is cut inside one', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const model = scriptedModel([
      {
        text: 'let me look',
        toolCalls: [{ name: 'echo', args: { text: 'x'.repeat(200) } }],
        delayMs: 2,
      },
    ]);
    await runTurn({
      session,
      model,
      tools: [echo],
      input: 'x',
      signal: controller.signal,
      hooks: { onEvent: abortAtChunk(controller, 'tool-input-delta') },
    });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.message.content).toEqual([
      { type: 'text', text: 'let me look' },
      interruptionMarker('aborted'),
    ]);
    expect(dataOf<ToolCallData>(session, 'tool/call')).toEqual([]);
    expectValidLog(session);
  });

  it('drops complete tool calls of an interrupted stream instead of leaving them unanswered', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }], delayMs: 2 },
    ]);
    await runTurn({
      session,
      model,
      tools: [echo],
      input: 'x',
      signal: controller.signal,
      hooks: { onEvent: abortAtChunk(controller, 'tool-call') },
    });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data?.message.content).toEqual([]);
    expect(data?.interrupted).toBe(true);
    expectValidLog(session);
  });

  it('gives running tools the signal and records TOOL_ABORTED for those that had not finished', async () => {
    const controller = new AbortController();
    const observed: boolean[] = [];
    const patient = defineTool({
      name: 'patient',
      parameters: { type: 'object' },
      execute: (_args, { signal }) =>
        new Promise<string>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            observed.push(true);
            reject(new Error('stopped'));
          });
        }),
    });
    const quick = defineTool({
      name: 'quick',
      parameters: { type: 'object' },
      execute: () => 'done',
    });
    const stubborn = defineTool({
      name: 'stubborn',
      parameters: { type: 'object' },
      execute: () => new Promise<string>(() => {}),
    });
    const session = Session.create();
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'patient', args: {} },
          { name: 'quick', args: {} },
          { name: 'stubborn', args: {} },
        ],
      },
    ]);
    setTimeout(() => controller.abort(), 30);
    const result = await runTurn({
      session,
      model,
      tools: [patient, quick, stubborn],
      input: 'x',
      signal: controller.signal,
    });
    expect(observed).toEqual([true]);
    const codes = dataOf<ToolResultData>(session, 'tool/result').map(
      (data) => data.error?.code ?? 'ok',
    );
    expect(codes).toEqual(['TOOL_ABORTED', 'ok', 'TOOL_ABORTED']);
    expect(result.reason.kind).toBe('aborted');
    expect(model.calls).toHaveLength(1);
    expectValidLog(session);
  });

  it('stops waiting out a retry delay when aborted', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const model = scriptedModel([{ error: { message: 'busy', status: 503 } }, { text: 'late' }]);
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    const result = await runTurn({
      session,
      model,
      input: 'x',
      signal: controller.signal,
      retryDelayMs: 10_000,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.reason.kind).toBe('aborted');
    expect(model.calls).toHaveLength(1);
    expectValidLog(session);
  });

  it('ends the turn without opening a step when beforeStep sees the abort', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const result = await runTurn({
      session,
      model: scriptedModel([{ text: 'x' }]),
      input: 'x',
      signal: controller.signal,
      hooks: { beforeStep: () => controller.abort() },
    });
    expect(outline(session.events)).toEqual(['turn/start', 'user/message', 'turn/end']);
    expect(result.steps).toBe(0);
    expectValidLog(session);
  });

  it('leaves the session ready for the next turn', async () => {
    const session = Session.create();
    await runTurn({ session, model: scriptedModel([]), input: 'x', signal: AbortSignal.abort() });
    const result = await runTurn({
      session,
      model: scriptedModel([{ text: 'back' }]),
      input: 'again',
    });
    expect(result).toMatchObject({ turn: 2, reason: { kind: 'completed' }, text: 'back' });
    expectValidLog(session);
  });
});

describe('provider failures', () => {
  it('retries a retryable HTTP failure, recording request/retry, and cites only the successful attempt', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { error: { message: 'overloaded', status: 503, requestId: 'req_1' } },
      { text: 'recovered' },
    ]);
    const result = await runTurn({ session, model, input: 'x', retryDelayMs: 1 });
    expect(result).toMatchObject({ reason: { kind: 'completed' }, text: 'recovered' });
    const [retry] = dataOf<{ attempt: number; delayMs: number; error: unknown }>(
      session,
      'request/retry',
    );
    expect(retry).toMatchObject({
      attempt: 1,
      error: { message: 'overloaded', status: 503, requestId: 'req_1', code: 'scripted_error' },
    });
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]?.prompt).toEqual(model.calls[0]?.prompt);
    expectValidLog(session);
  });

  it('retries an overloaded stream and cites only the chunks of the attempt that succeeded', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { text: 'half an ans', error: { message: 'Overloaded', type: 'overloaded_error' } },
      { text: 'a whole answer' },
    ]);
    const result = await runTurn({ session, model, input: 'x', retryDelayMs: 1 });
    expect(result.text).toBe('a whole answer');
    const retry = session.events.find((event) => event.type === 'request/retry');
    const message = session.events.find((event) => event.type === 'assistant/message');
    const chunkSeqs = session.events
      .filter((event) => event.type === 'assistant/chunk')
      .map((event) => event.seq);
    const failed = chunkSeqs.filter((seq) => seq < (retry?.seq ?? 0));
    expect(failed.length).toBeGreaterThan(0);
    expect(retry?.sourceEventSeqs).toEqual(failed);
    expect(message?.sourceEventSeqs).toEqual(chunkSeqs.filter((seq) => seq > (retry?.seq ?? 0)));
    expect(session.deriveMessages().map((entry) => entry.role)).toEqual(['user', 'assistant']);
    expectValidLog(session);
  });

  it('ends the turn with the provider’s message, status and request id when the failure is not retryable', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { error: { message: 'bad request: context too long', status: 400, requestId: 'req_9' } },
    ]);
    const result = await runTurn({ session, model, input: 'x', retryDelayMs: 1 });
    expect(result.reason).toEqual({
      kind: 'error',
      error: {
        message: 'bad request: context too long',
        status: 400,
        requestId: 'req_9',
        code: 'scripted_error',
      },
    });
    expect(model.calls).toHaveLength(1);
    expect(dataOf(session, 'request/retry')).toEqual([]);
    expectValidLog(session);
  });

  it('gives up after maxRetries and ends with the last failure', async () => {
    const session = Session.create();
    const model = scriptedModel([{ error: { message: 'busy', status: 429 } }], { loop: true });
    const result = await runTurn({ session, model, input: 'x', retryDelayMs: 1, maxRetries: 3 });
    expect(model.calls).toHaveLength(4);
    expect(dataOf(session, 'request/retry')).toHaveLength(3);
    expect(result.reason).toMatchObject({ kind: 'error', error: { status: 429 } });
    expectValidLog(session);
  });

  it('keeps the text streamed before an in-stream error as an interrupted message', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'partial answer', error: 'stream broke' }]);
    const result = await runTurn({ session, model, input: 'x', retryDelayMs: 1 });
    const [data] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(data).toMatchObject({ interrupted: true, finishReason: 'error' });
    expect(data?.message.content).toEqual([
      { type: 'text', text: 'partial answer' },
      interruptionMarker('error'),
    ]);
    expect(result.reason).toMatchObject({ kind: 'error', error: { message: 'stream broke' } });
    expectValidLog(session);
  });

  it('ends with an error when the model throws something that is not a provider error', async () => {
    const session = Session.create();
    const model = scriptedModel([]);
    const result = await runTurn({ session, model, input: 'x' });
    expect(result.reason).toMatchObject({
      kind: 'error',
      error: { message: expect.stringContaining('script has 0 responses') },
    });
    expectValidLog(session);
  });
});

describe('request headers', () => {
  it('logs the header once while it does not change, and again when it does', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
      { text: 'b' },
      { text: 'c' },
      { text: 'd' },
    ]);
    await runTurn({ session, model, tools: [echo], system: 'one', input: 'x' });
    await runTurn({ session, model, tools: [echo], system: 'one', input: 'y' });
    await runTurn({ session, model, tools: [echo], system: 'two', input: 'z' });
    const headers = dataOf<{ system?: string }>(session, 'request/header');
    expect(headers.map((header) => header.system)).toEqual(['one', 'two']);
  });

  it('records settings but never HTTP headers', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'x' }]);
    await runTurn({
      session,
      model,
      input: 'x',
      settings: {
        temperature: 0.2,
        maxOutputTokens: 100,
        providerOptions: { acme: { mode: 'fast' } },
      },
      headers: { authorization: 'Bearer secret' },
    });
    const [header] = dataOf<Record<string, unknown>>(session, 'request/header');
    expect(header?.settings).toEqual({
      temperature: 0.2,
      maxOutputTokens: 100,
      providerOptions: { acme: { mode: 'fast' } },
    });
    expect(JSON.stringify(session.events)).not.toContain('secret');
    expect(model.calls[0]).toMatchObject({
      temperature: 0.2,
      maxOutputTokens: 100,
      providerOptions: { acme: { mode: 'fast' } },
      headers: { authorization: 'Bearer secret' },
    });
  });
});

describe('request reconstruction', () => {
  it('rebuilds every step’s request from the log prefix, equal to what the model received', async () => {
    const session = Session.create();
    const model = scriptedModel([
      {
        reasoning: 'plan',
        toolCalls: [
          { name: 'echo', args: { text: 'a' } },
          { name: 'echo', args: { text: 'b' } },
        ],
      },
      { text: 'first answer' },
      { text: 'second answer' },
      { toolCalls: [{ name: 'missing', args: {} }] },
      { text: 'third answer' },
    ]);
    await runTurn({ session, model, tools: [echo], system: 'be brief', input: 'one' });
    await runTurn({
      session,
      model,
      tools: [echo],
      system: 'be brief',
      input: 'two',
      settings: { temperature: 0 },
    });
    await runTurn({ session, model, tools: [echo], system: 'changed', input: 'three' });

    const steps = dataOf<{ turn: number; step: number }>(session, 'step/start');
    expect(steps).toHaveLength(5);
    for (const [index, { turn, step }] of steps.entries()) {
      const {
        abortSignal: _signal,
        headers: _headers,
        ...sent
      } = model.calls[index] as LanguageModelV3CallOptions;
      expect(rebuildRequest(session, turn, step).callOptions).toEqual(sent);
    }
  });

  it('rebuilds the same request after the session is reloaded from its events', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
      { text: 'done' },
    ]);
    await runTurn({ session, model, tools: [echo], input: 'x' });
    const reloaded = Session.create({ header: session.header, seed: session.events });
    const { abortSignal: _signal, ...sent } = model.calls[1] as LanguageModelV3CallOptions;
    expect(rebuildRequest(reloaded, 1, 2).callOptions).toEqual(sent);
  });

  it('refuses a step the log does not hold', () => {
    expect(() => rebuildRequest(Session.create(), 1, 1)).toThrow('no step 1 of turn 1');
  });
});

describe('resume', () => {
  it('continues turn numbering on a session loaded from its events', async () => {
    const first = Session.create();
    await runTurn({ session: first, model: scriptedModel([{ text: 'a' }]), input: 'x' });
    const loaded = Session.create({ header: first.header, seed: first.events });
    const result = await runTurn({
      session: loaded,
      model: scriptedModel([{ text: 'b' }]),
      input: 'y',
    });
    expect(result.turn).toBe(2);
    expect(loaded.deriveMessages().map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expectValidLog(loaded);
  });

  it('closes a turn a crashed writer left open before starting the next one', async () => {
    const crashed = Session.create();
    crashed.append('turn/start', { turn: 1 });
    crashed.append(
      'user/message',
      {
        id: 'u1',
        role: 'user',
        content: [{ type: 'text', text: 'do it' }],
        source: { kind: 'user' },
      },
      { surfaceOp: 'append' },
    );
    crashed.append('step/start', { turn: 1, step: 1 });
    crashed.append(
      'assistant/message',
      {
        turn: 1,
        step: 1,
        finishReason: 'tool-calls',
        message: {
          id: 'a1',
          role: 'assistant',
          content: [{ type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"text":"x"}' }],
          source: { kind: 'model', provider: 'p', model: 'm' },
        },
      },
      { surfaceOp: 'append' },
    );
    crashed.append('tool/call', {
      turn: 1,
      step: 1,
      callId: 'c1',
      name: 'echo',
      arguments: '{"text":"x"}',
    });
    const result = await runTurn({
      session: crashed,
      model: scriptedModel([{ text: 'resumed' }]),
      tools: [echo],
      input: 'again',
    });
    expect(result.turn).toBe(2);
    const [repairResult] = dataOf<ToolResultData>(crashed, 'tool/result');
    expect(repairResult?.error?.code).toBe('TOOL_OUTCOME_UNKNOWN');
    expect(lastTurnEnd(crashed).reason).toEqual({ kind: 'completed' });
    expect(dataOf<TurnEndData>(crashed, 'turn/end')[0]?.reason).toEqual({ kind: 'interrupted' });
    expectValidLog(crashed);
  });

  it('refuses a second concurrent turn on the same session', async () => {
    const session = Session.create();
    const slow = runTurn({
      session,
      model: scriptedModel([{ text: 'slow reply', delayMs: 5 }]),
      input: 'x',
    });
    await expect(
      runTurn({ session, model: scriptedModel([{ text: 'y' }]), input: 'y' }),
    ).rejects.toMatchObject({
      code: 'TURN_IN_PROGRESS',
    });
    await slow;
    expectValidLog(session);
  });
});

describe('hooks', () => {
  it('lets beforeStep append context that the request then carries', async () => {
    const session = Session.create();
    const model = scriptedModel([{ text: 'ok' }]);
    await runTurn({
      session,
      model,
      input: 'x',
      hooks: {
        beforeStep: ({ session: live }) => {
          live.append(
            'context/message',
            {
              id: 'ctx',
              role: 'user',
              content: [{ type: 'text', text: 'today is Monday' }],
              source: { kind: 'context' },
            },
            { surfaceOp: 'append' },
          );
        },
      },
    });
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('today is Monday');
    expectValidLog(session);
  });

  it('calls afterStep with the message and tool results, and onEvent for every appended event', async () => {
    const session = Session.create();
    const outcomes: unknown[] = [];
    const seen: number[] = [];
    await runTurn({
      session,
      model: scriptedModel([
        { toolCalls: [{ name: 'echo', args: { text: 'hi' } }] },
        { text: 'bye' },
      ]),
      tools: [echo],
      input: 'x',
      hooks: {
        afterStep: ({ step, finishReason, toolResults }) => {
          outcomes.push([step, finishReason, toolResults.length]);
        },
        onEvent: (event) => seen.push(event.seq),
      },
    });
    expect(outcomes).toEqual([
      [1, 'tool-calls', 1],
      [2, 'stop', 0],
    ]);
    expect(seen).toEqual(session.events.map((event) => event.seq));
  });

  it('closes the step and the turn when a hook throws, then rethrows', async () => {
    const session = Session.create();
    const failure = new Error('hook bug');
    await expect(
      runTurn({
        session,
        model: scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'hi' } }] }]),
        tools: [echo],
        input: 'x',
        hooks: {
          afterStep: () => {
            throw failure;
          },
        },
      }),
    ).rejects.toBe(failure);
    expect(lastTurnEnd(session).reason).toEqual({
      kind: 'error',
      error: { message: 'hook bug', code: 'LOOP_FAILED' },
    });
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

describe('durability', () => {
  const echoTool = (seen: string[]) =>
    defineTool({
      name: 'echo',
      parameters: { type: 'object', properties: {} },
      execute: () => {
        seen.push('tool ran');
        return 'ok';
      },
    });
  const toolThenText = () =>
    scriptedModel([{ toolCalls: [{ name: 'echo', args: {} }] }, { text: 'done' }]);

  it('waits on an explicit barrier after the tool/call events and before any tool runs', async () => {
    const session = Session.create();
    const seen: string[] = [];
    const barrier: Durable = {
      flush: async () => {
        const last = session.event(session.seq - 1);
        seen.push(`flush after ${last?.type}`);
      },
    };
    const result = await runTurn({
      session,
      model: toolThenText(),
      tools: [echoTool(seen)],
      input: 'go',
      barrier,
      durability: 'required',
    });
    expect(result.reason).toEqual({ kind: 'completed' });
    expect(seen).toEqual(['flush after tool/call', 'tool ran', 'flush after turn/end']);
  });

  it('uses the session as its own barrier when it is Durable, and goes on without one by default', async () => {
    const seen: string[] = [];
    const durable = Object.assign(Session.create(), {
      flush: async () => {
        seen.push('flush');
      },
    });
    await runTurn({
      session: durable,
      model: toolThenText(),
      tools: [echoTool(seen)],
      input: 'go',
    });
    expect(seen).toEqual(['flush', 'tool ran', 'flush']);

    const plain = Session.create();
    const result = await runTurn({
      session: plain,
      model: toolThenText(),
      tools: [echoTool([])],
      input: 'go',
    });
    expect(result.reason).toEqual({ kind: 'completed' });
  });

  it("refuses to start a turn without a barrier when durability is 'required'", async () => {
    const session = Session.create();
    const refused = runTurn({
      session,
      model: toolThenText(),
      input: 'go',
      durability: 'required',
    });
    await expect(refused).rejects.toBeInstanceOf(AgentError);
    await expect(refused).rejects.toMatchObject({ code: 'NOT_DURABLE' });
    expect(session.seq).toBe(0);
    await expect(
      runTurn({
        session,
        model: toolThenText(),
        input: 'go',
        durability: 'sometimes' as 'required',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
