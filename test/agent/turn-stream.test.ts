import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agent,
  AgentError,
  defineTool,
  runTurn,
  streamTurn,
  type TurnStreamEvent,
  turnStreamEvent,
} from '../../src/agent/index.js';
import { Session } from '../../src/core/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { expectValidLog } from './helpers.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

async function collect(stream: AsyncIterable<TurnStreamEvent>): Promise<TurnStreamEvent[]> {
  const events: TurnStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function toolRound() {
  return scriptedModel([
    {
      reasoning: 'I should echo.',
      toolCalls: [{ id: 'call_1', name: 'echo', args: { text: 'hi' } }],
    },
    { text: 'It said hi.' },
  ]);
}

describe('streaming a turn', () => {
  it('gives the text, reasoning, tool call, tool result and bracket events in log order', async () => {
    const session = Session.create();
    const stream = streamTurn({ session, model: toolRound(), tools: [echo], input: 'echo hi' });
    const events = await collect(stream);
    const types = events.map((event) => event.type).filter((type, i, all) => type !== all[i - 1]);
    expect(types).toEqual([
      'turn-start',
      'user-message',
      'step-start',
      'reasoning-delta',
      'tool-call-start',
      'tool-call-delta',
      'tool-call-end',
      'message',
      'tool-start',
      'tool-result',
      'step-end',
      'step-start',
      'text-delta',
      'message',
      'step-end',
      'turn-end',
    ]);
    const text = events.map((event) => (event.type === 'text-delta' ? event.delta : '')).join('');
    expect(text).toBe('It said hi.');
    const reasoning = events
      .map((event) => (event.type === 'reasoning-delta' ? event.delta : ''))
      .join('');
    expect(reasoning).toBe('I should echo.');
    const end = events.find((event) => event.type === 'tool-call-end');
    expect(end).toMatchObject({ callId: 'call_1', name: 'echo', arguments: '{"text":"hi"}' });
    const result = events.find((event) => event.type === 'tool-result');
    expect(result).toMatchObject({
      callId: 'call_1',
      isError: false,
      content: [{ type: 'text', text: 'echo: hi' }],
    });
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', reason: { kind: 'completed' } });
    expect((await stream.result).text).toBe('It said hi.');
    expectValidLog(session);
  });

  it('is the log read as stream events: each event names its seq, and a replay of the log gives the same events', async () => {
    const session = Session.create();
    const events = await collect(
      streamTurn({ session, model: toolRound(), tools: [echo], input: 'echo hi' }),
    );
    const replayed = session.events.map(turnStreamEvent).filter((event) => event !== undefined);
    expect(events).toEqual(replayed);
    for (const event of events) expect(session.event(event.seq)).toBeDefined();
  });

  it('reports a retried attempt with the chunks to retract, and marks the next attempt’s deltas', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { text: 'half an ans', error: { message: 'overloaded', type: 'overloaded_error' } },
      { text: 'The answer.' },
    ]);
    const events = await collect(
      streamTurn({ session, model, input: 'q', retryDelayMs: 0, maxRetryDelayMs: 0 }),
    );
    const retry = events.find((event) => event.type === 'retry');
    if (retry?.type !== 'retry') throw new Error('no retry event');
    expect(retry.attempt).toBe(1);
    const failedText = events
      .filter((event) => event.type === 'text-delta' && retry.failedChunkSeqs.includes(event.seq))
      .map((event) => (event.type === 'text-delta' ? event.delta : ''))
      .join('');
    expect(failedText).toBe('half an ans');
    const second = events
      .filter((event) => event.type === 'text-delta' && event.attempt === 2)
      .map((event) => (event.type === 'text-delta' ? event.delta : ''))
      .join('');
    expect(second).toBe('The answer.');
  });

  it('does not hold the turn back for a reader that stops early, and a later reader still gets every event', async () => {
    const session = Session.create();
    const stream = streamTurn({ session, model: toolRound(), tools: [echo], input: 'echo hi' });
    for await (const event of stream) {
      if (event.type === 'step-start') break;
    }
    const result = await stream.result;
    expect(result.reason.kind).toBe('completed');
    expectValidLog(session);
    const all = await collect(stream);
    expect(all[0]?.type).toBe('turn-start');
    expect(all.at(-1)?.type).toBe('turn-end');
  });

  it('delivers everything to a reader that starts after the turn ended', async () => {
    const session = Session.create();
    const stream = streamTurn({ session, model: toolRound(), tools: [echo], input: 'echo hi' });
    await stream.result;
    const events = await collect(stream);
    expect(events.filter((event) => event.type === 'step-end')).toHaveLength(2);
  });

  it('cancels the turn with abort(), closing its brackets', async () => {
    const session = Session.create();
    const stream = streamTurn({
      session,
      model: scriptedModel([{ text: 'a slow answer that goes on', delayMs: 5 }]),
      input: 'q',
    });
    for await (const event of stream) {
      if (event.type === 'text-delta') stream.abort('user pressed Esc');
    }
    const result = await stream.result;
    expect(result.reason).toEqual({ kind: 'aborted', cause: 'user pressed Esc' });
    expectValidLog(session);
  });

  it('honours the caller’s signal too', async () => {
    const session = Session.create();
    const controller = new AbortController();
    controller.abort('gone');
    const stream = streamTurn({
      session,
      model: scriptedModel([{ text: 'never' }]),
      input: 'q',
      signal: controller.signal,
    });
    const events = await collect(stream);
    expect(events.at(-1)).toMatchObject({
      type: 'turn-end',
      reason: { kind: 'aborted', cause: 'gone' },
    });
  });

  it('throws a misuse error once from iteration, after the events before it, and rejects result with the same error', async () => {
    const session = Session.create();
    const stream = streamTurn({ session, model: scriptedModel([]), input: '' });
    const seen: TurnStreamEvent[] = [];
    let thrown: unknown;
    try {
      for await (const event of stream) seen.push(event);
    } catch (error) {
      thrown = error;
    }
    expect(seen).toEqual([]);
    expect(AgentError.isInstance(thrown) && thrown.code).toBe('INVALID_INPUT');
    await expect(stream.result).rejects.toBe(thrown);
  });

  it('leaves no unhandled rejection behind when the caller only iterates', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const stream = streamTurn({ session: Session.create(), model: scriptedModel([]), input: '' });
      await expect(collect(stream)).rejects.toSatisfy((error) => AgentError.isInstance(error));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('rethrows a throwing hook from iteration after the closing events', async () => {
    const session = Session.create();
    const boom = new Error('hook failed');
    const stream = streamTurn({
      session,
      model: scriptedModel([{ text: 'x' }]),
      input: 'q',
      hooks: {
        afterStep: () => {
          throw boom;
        },
      },
    });
    const seen: string[] = [];
    await expect(async () => {
      for await (const event of stream) seen.push(event.type);
    }).rejects.toBe(boom);
    expect(seen.at(-1)).toBe('turn-end');
    await expect(stream.result).rejects.toBe(boom);
    expectValidLog(session);
  });

  it('still calls the caller’s onEvent hook for every appended event', async () => {
    const session = Session.create();
    const seqs: number[] = [];
    const stream = streamTurn({
      session,
      model: scriptedModel([{ text: 'x' }]),
      input: 'q',
      hooks: { onEvent: (event) => seqs.push(event.seq) },
    });
    await stream.result;
    expect(seqs).toEqual(session.events.map((event) => event.seq));
  });

  it('is offered by Agent.stream with the agent’s configuration', async () => {
    const session = Session.create();
    const agent = new Agent({ session, model: toolRound(), tools: [echo] });
    const stream = agent.stream('echo hi');
    const kinds = new Set((await collect(stream)).map((event) => event.type));
    expect(kinds.has('tool-result')).toBe(true);
    expect((await stream.result).steps).toBe(2);
  });
});

describe('the turn result', () => {
  it('carries the assistant and tool messages the turn added, every call and every result', async () => {
    const session = Session.create();
    const result = await runTurn({ session, model: toolRound(), tools: [echo], input: 'echo hi' });
    expect(result.messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(result.messages).toEqual(session.deriveMessages().slice(1));
    expect(result.toolCalls).toEqual([
      { step: 1, callId: 'call_1', name: 'echo', arguments: '{"text":"hi"}', started: true },
    ]);
    expect(result.toolResults).toEqual([
      expect.objectContaining({
        step: 1,
        callId: 'call_1',
        name: 'echo',
        isError: false,
        content: [{ type: 'text', text: 'echo: hi' }],
      }),
    ]);
  });

  it('gives the model’s excerpt of a long output in messages and the whole output in toolResults', async () => {
    const session = Session.create();
    const long = defineTool({
      name: 'long',
      parameters: { type: 'object' },
      maxOutputChars: 100,
      execute: () => 'x'.repeat(1000),
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'long', args: {} }] }, { text: 'ok' }]);
    const result = await runTurn({ session, model, tools: [long], input: 'q' });
    const tool = result.messages[1];
    const shown = tool?.role === 'tool' ? tool.content[0]?.content[0] : undefined;
    expect(shown?.type === 'text' && shown.text.length).toBeLessThan(1000);
    expect(result.toolResults[0]?.content).toEqual([{ type: 'text', text: 'x'.repeat(1000) }]);
  });

  it('lists a call that was not run as not started, with its error code', async () => {
    const session = Session.create();
    const model = scriptedModel([
      { toolCalls: [{ id: 'c', name: 'echo', args: { text: 'a' } }], finishReason: 'length' },
    ]);
    const result = await runTurn({ session, model, tools: [echo], input: 'q' });
    expect(result.toolCalls).toEqual([expect.objectContaining({ callId: 'c', started: false })]);
    expect(result.toolResults[0]).toMatchObject({ isError: true, code: 'TOOL_NOT_RUN' });
  });
});
