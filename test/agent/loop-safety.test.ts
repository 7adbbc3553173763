/**
 * Safety and fidelity of the loop (issue 12): tools run only after a safe finish, and every
 * stream part is recorded, even past an `error` part.
 */
import { describe, expect, it } from 'vitest';
import { defineTool, type RetryInfo, runTurn } from '../../src/agent/index.js';
import {
  type AssistantChunkData,
  type AssistantMessageData,
  Session,
  type ToolResultData,
} from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { dataOf, expectValidLog, finish, partsModel } from './helpers.js';

describe('tools run only after a safe finish', () => {
  const ran: string[] = [];
  const touch = defineTool({
    name: 'touch',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    execute: (args) => {
      ran.push(String(args.path));
      return 'done';
    },
  });

  it.each(['length', 'content-filter', 'other'] as const)(
    'records but does not run complete tool calls after a %s finish',
    async (finishReason) => {
      ran.length = 0;
      const session = Session.create();
      const model = scriptedModel([
        { toolCalls: [{ name: 'touch', args: { path: 'a' } }], finishReason },
      ]);
      const result = await runTurn({ session, model, tools: [touch], input: 'go' });
      expect(ran).toEqual([]);
      expect(dataOf(session, 'tool/call')).toEqual([]);
      const [message] = dataOf<AssistantMessageData>(session, 'assistant/message');
      expect(message?.message.content.map((block) => block.type)).toEqual(['tool-call']);
      const [toolResult] = dataOf<ToolResultData>(session, 'tool/result');
      expect(toolResult?.error?.code).toBe('TOOL_NOT_RUN');
      expect(toolResult?.error?.message).toContain(finishReason);
      expect(toolResult?.message.content[0]?.isError).toBe(true);
      expect(result.reason.kind).toBe(finishReason === 'length' ? 'max-tokens' : 'completed');
      if (result.reason.kind === 'completed') expect(result.reason.finishReason).toBe(finishReason);
      expect(result.steps).toBe(1);
      expectValidLog(session);
    },
  );

  it('runs them anyway when the finish reason is opted in', async () => {
    ran.length = 0;
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'touch', args: { path: 'b' } }], finishReason: 'length' },
      { text: 'ok' },
    ]);
    const result = await runTurn({
      session,
      model,
      tools: [touch],
      input: 'go',
      runToolsAfter: ['stop', 'tool-calls', 'length'],
    });
    expect(ran).toEqual(['b']);
    expect(result.reason).toEqual({ kind: 'completed' });
    expectValidLog(session);
  });

  it('still runs tools after stop and tool-calls', async () => {
    ran.length = 0;
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ name: 'touch', args: { path: 'c' } }], finishReason: 'stop' },
      { text: 'ok' },
    ]);
    await runTurn({ session, model, tools: [touch], input: 'go' });
    expect(ran).toEqual(['c']);
  });
});

describe('every stream part is recorded', () => {
  it('records the parts after an error part, then ends the step as failed', async () => {
    const ran: string[] = [];
    const tool = defineTool({
      name: 'touch',
      parameters: { type: 'object' },
      execute: () => {
        ran.push('x');
        return 'done';
      },
    });
    const session = Session.create();
    const model = partsModel([
      [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'before ' },
        { type: 'error', error: { type: 'invalid_request_error', message: 'bad thing' } },
        { type: 'text-delta', id: 't', delta: 'after' },
        { type: 'text-end', id: 't' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'touch', input: '{}' },
        finish('tool-calls'),
      ],
    ]);
    const result = await runTurn({ session, model, tools: [tool], input: 'go', maxRetries: 0 });
    const chunkTypes = dataOf<AssistantChunkData>(session, 'assistant/chunk').map(
      (chunk) => chunk.chunk.type,
    );
    expect(chunkTypes).toEqual([
      'stream-start',
      'text-start',
      'text-delta',
      'error',
      'text-delta',
      'text-end',
      'tool-call',
      'finish',
    ]);
    expect(result.reason.kind).toBe('error');
    expect(ran).toEqual([]);
    const [message] = dataOf<AssistantMessageData>(session, 'assistant/message');
    expect(message?.interrupted).toBe(true);
    expect(message?.finishReason).toBe('error');
    expect(message?.message.content[0]).toEqual({ type: 'text', text: 'before after' });
    const messageEvent = session.events.find((event) => event.type === 'assistant/message');
    expect(messageEvent?.sourceEventSeqs).toHaveLength(8);
    expectValidLog(session);
  });
});

describe('failed attempts are visible', () => {
  it('numbers the chunks of a retried attempt and tells the onRetry hook which chunks failed', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { text: 'doomed', error: { message: 'busy', type: 'overloaded_error' } },
      { text: 'second try' },
    ]);
    const retries: RetryInfo[] = [];
    const result = await runTurn({
      session,
      model,
      input: 'go',
      retryDelayMs: 1,
      hooks: { onRetry: (info) => retries.push(info) },
    });
    expect(result.text).toBe('second try');
    const chunks = session.events.filter((event) => event.type === 'assistant/chunk');
    const retryEvent = session.events.find((event) => event.type === 'request/retry');
    const failed = chunks.filter((event) => event.seq < (retryEvent?.seq ?? 0));
    const counted = chunks.filter((event) => event.seq > (retryEvent?.seq ?? 0));
    expect(failed.length).toBeGreaterThan(0);
    for (const event of failed)
      expect((event.data as unknown as AssistantChunkData).attempt).toBeUndefined();
    for (const event of counted)
      expect((event.data as unknown as AssistantChunkData).attempt).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({
      turn: 1,
      step: 1,
      attempt: 1,
      failedChunkSeqs: failed.map((event) => event.seq),
      error: { code: 'overloaded_error' },
    });
    expect(retries[0]?.event).toBe(retryEvent);
    expectValidLog(session);
  });
});

describe('the loop marks a partial answer the same way', () => {
  it('ends an aborted stream’s message with the interrupted marker, and the turn text without it', async () => {
    const session = Session.create();
    const controller = new AbortController();
    const model = scriptedModel([{ text: 'one two three four five', delayMs: 2 }]);
    let deltas = 0;
    const result = await runTurn({
      session,
      model,
      input: 'x',
      signal: controller.signal,
      hooks: {
        onEvent: (event) => {
          const chunk = (event.data as { chunk?: { type?: string } } | null)?.chunk;
          if (chunk?.type === 'text-delta' && ++deltas === 2) controller.abort();
        },
      },
    });
    const message = session.events.find((event) => event.type === 'assistant/message');
    const data = message?.data as unknown as AssistantMessageData;
    expect(data.interrupted).toBe(true);
    expect(data.message.content[0]).toEqual({ type: 'text', text: 'one two three fo' });
    expect(data.message.content[1]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/interrupted/),
    });
    expect(result.text).toBe('one two three fo');
  });
});
