/**
 * A turn that does not finish on its own: cancellation by the caller's signal, and provider
 * failures (retried, given up on, or cut mid-stream).
 */
import { describe, expect, it } from 'vitest';
import { defineTool, runTurn } from '../../src/agent/index.js';
import type { AssistantMessageData, ToolCallData, ToolResultData } from '../../src/core/index.js';
import { interruptionMarker, Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { abortAtChunk, dataOf, echo, expectValidLog, outline, shape } from './helpers.js';

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
    setTimeout(() => controller.abort(), 20);
    // An hour's delay: a turn that waited it out would fail on the test's timeout.
    const result = await runTurn({
      session,
      model,
      input: 'x',
      signal: controller.signal,
      retryDelayMs: 3_600_000,
      maxRetryDelayMs: 3_600_000,
    });
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
